"""Per-loop instruction mix on committed assembly (tests/fixtures/explain). Every expected number was counted
from the listing itself with grep over the loop's line range (header label to its backward branch), not by
the parser: e.g. for gfx942's first K/V loop, lines 539-1359 of baseline-gfx942-wpe3.amdgcn:
``grep -cP '^\\s+v_mfma'`` 64, ``scratch_load_dword`` x25, ``_dwordx2`` x10, ``_dwordx4`` x15 (420 B),
``s_nop 0`` x19, ``s_nop 9``, ``s_nop 10`` (40 cycles)."""

from __future__ import annotations

import gzip
from pathlib import Path

from vgprscope.core.parse.loops import amd_class, amdgcn_loops, sass_class, sass_loops

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "explain"


def text(name: str) -> str:
    return gzip.open(FIX / name).read().decode()


def test_gfx942_baselines_two_kv_loops_with_their_spill_traffic_per_trip():
    first, tail = amdgcn_loops(text("baseline-gfx942-wpe3.amdgcn.gz"))
    assert (first.name, first.depth, first.parent, first.hot) == ("BB0_2", 1, None, True)
    assert (tail.name, tail.hot) == ("BB0_7", False)
    assert first.instructions == 536
    assert {c: first.count(c) for c in ("matrix", "global_load", "scratch_load", "scratch_store", "wait", "barrier",
                                        "nop")} == {"matrix": 64, "global_load": 8, "scratch_load": 50,
                                                    "scratch_store": 8, "wait": 67, "barrier": 4, "nop": 21}
    assert first.matrix_ops == (("v_mfma_f32_32x32x8_f16", 64),)
    assert (first.moved("scratch_load"), first.moved("global_load"), first.nop_cycles) == (420, 8 * 16, 40)
    assert first.spill_bytes == 420 + first.moved("scratch_store")
    assert first.lines == ("_fa_common.py:67-171",)


def test_sm90_baseline_loop_under_a_register_cap_spills_in_its_loop():
    """maxnreg 128 on sm_90: lines 951-3859 of the SASS (.L_x_1 to its BRA): 1886 instructions, 16 HGMMA,
    LDL.LU x241 + LDL.LU.64 x273 = 3148 B, STL x55 + STL.64 x366 = 3148 B, 16 LDGSTS.128."""
    loops = sass_loops(text("baseline-sm_90-maxnreg128.sass.gz"), "attn_fwd")
    assert [m.name for m in loops] == [".L_x_1", ".L_x_3"]  # the trap loop after EXIT is not a loop
    m = loops[0]
    assert (m.instructions, m.count("matrix"), m.count("scratch_load"), m.count("scratch_store")) == (1886, 16, 514, 421)
    assert (m.moved("scratch_load"), m.moved("scratch_store"), m.moved("global_load")) == (3148, 3148, 16 * 16)
    assert m.matrix_ops == (("HGMMA.64x128x16.F32", 16),)
    assert m.hot and m.count("wait") == 32 + 1 + 2 + 2  # WARPGROUP, DEPBAR, LDGDEPBAR, FENCE


def test_a_gemm_loop_without_spills():
    (m,) = amdgcn_loops(text("gemm-gfx942.amdgcn.gz"))
    assert m.hot and m.spill_bytes == 0 and m.count("matrix") == 8 and m.lines == ("gemm.py:20-25",)


def test_classes_of_single_instructions():
    assert amd_class("v_mfma_f32_32x32x8_f16") == "matrix"
    assert amd_class("buffer_store_dword", " 4-byte Folded Spill") == "scratch_store"
    assert amd_class("buffer_load_dword", " 4-byte Folded Reload") == "scratch_load"
    assert amd_class("buffer_load_dwordx4") == "global_load"
    assert amd_class("v_accvgpr_read_b32") == "acc_copy"
    assert amd_class("ds_read_b128") == "lds_load" and amd_class("ds_write_b64") == "lds_store"
    assert amd_class("v_cvt_pk_f16_f32") == "convert"
    assert sass_class("UTCHMMA.2CTA") == "matrix" and sass_class("STL.64") == "scratch_store"
    assert sass_class("LDSM.16.M88.4") == "lds_load" and sass_class("F2FP.F16.F32.PACK_AB") == "convert"


def test_explain_shows_the_seed_configs_spill_traffic_in_baselines_loop_and_none_in_remat_q():
    """The seeds' 128x128 tile with 8 wavefronts on gfx942: the baseline's hot K/V loop reloads spilled values
    every trip; remat-q, which keeps q out of the loop, spills nowhere. Table, JSON and DataFrame alike."""
    import vgprscope

    result = vgprscope.explain(variant=["baseline", "remat-q"], arch=["gfx942"], block_m=128, block_n=128,
                               num_warps=8, jobs=2)
    by_label = {e.label: e for e in result.explanations}
    base, remat = by_label["baseline"], by_label["remat-q"]
    hot = next(m for m in base.mixes if m.hot)
    assert hot.spill_bytes > 0 and hot.count("scratch_load") > 0 and hot.count("matrix") > 0
    assert all(m.spill_bytes == 0 for m in remat.mixes) and any(m.hot for m in remat.mixes)
    assert "of spill traffic per trip" in " ".join(result.table().split())
    rows = result.to_pandas("mix")
    assert list(rows.columns[:4]) == ["label", "kernel", "arch", "config"]
    assert set(rows["label"]) == {"baseline", "remat-q"} and rows["spill_bytes"].sum() >= hot.spill_bytes
    assert '"loop_mix"' in result.to_json()


def test_s_clause_counts_in_a_gfx11_loop_as_the_other_hint_instructions():
    """gfx1100's hot K/V loop (the committed wave32 listing, BB0_2): 1750 instructions of which 110 are
    ``s_clause`` (the hint that groups the memory instructions after it, issued like ``s_delay_alu`` and
    ``s_waitcnt``) and 128 WMMA: 7.31 % -> 7, not the 7.80 % -> 8 of the body without its s_clause."""
    from vgprscope.backends.hip import HIP

    listing = gzip.open(FIX.parent / "gfx1100_wave32.amdgcn.gz").read().decode()
    hot = next(m for m in amdgcn_loops(listing) if m.hot)
    assert (hot.name, hot.instructions, hot.count("matrix")) == ("BB0_2", 1750, 128)
    assert HIP.parse({"amdgcn": listing, "shared": 0}).loop_matrix_share == 7
    bare = "\n".join(ln for ln in listing.splitlines() if not ln.lstrip().startswith("s_clause"))
    assert next(m for m in amdgcn_loops(bare) if m.hot).instructions == 1750 - 110
