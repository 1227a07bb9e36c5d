"""explain on committed compiler outputs: TTGIR loops and live tensors, layout register counts, spill sites.

Fixtures (tests/fixtures/explain/, the bundled baseline at commit 9c3dc50's kernels, Triton 3.9.0):
baseline-gfx942.ttgir.gz (default config 128x64 d128 w4 s1), baseline-gfx942-wpe3.{ttgir,amdgcn}.gz
(waves_per_eu 3: it spills), baseline-sm_90.ttgir.gz (128x64 d128 w8 s2), baseline-sm_90-maxnreg128.sass.gz
(``nvdisasm -gi -c`` of the maxnreg 128 cubin, operands cut to keep it small) with its ptxas log.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from vgprscope.analysis.explain.core import explain_raw, loop_state, spill_sites
from vgprscope.core.archs import get_arch
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.parse.layouts import (
    AmdMfma,
    Blocked,
    DotOperand,
    Linear,
    NvidiaMma,
    Slice,
    elements_per_lane,
    parse_layout,
    registers_per_lane,
)
from vgprscope.core.parse.lineinfo import amd_loc_chain, amdgcn_spills, sass_spills
from vgprscope.core.parse.ttgir import parse_ttgir, resolve_loc, source_name

FIX = Path(__file__).parents[2] / "fixtures" / "explain"


def read(name: str) -> str:
    return gzip.open(FIX / name, "rt").read() if name.endswith(".gz") else (FIX / name).read_text()


MFMA_T = AmdMfma(version=3, warps_per_cta=(4, 1), instr_shape=(32, 32, 8), transposed=True)


# ---- layouts ----

@pytest.mark.parametrize("layout, shape, elements", [
    # a 128x128 fp32 MFMA accumulator on 4 wave64 warps: 16384 / 256 lanes, no copies
    (MFMA_T, (128, 128), 64),
    # transposed 32x32 MFMA: a lane's registers run along N, so a row statistic is one element per lane
    (Slice(1, MFMA_T), (128,), 1),
    (Slice(0, MFMA_T), (64,), 32),
    # broadcast: the 8 registers along dim 1 point past a size-1 dim: 8 rows (128 / 16) remain
    (Blocked((1, 8), (4, 16), (4, 1), (1, 0)), (128, 1), 8),
    (Blocked((1, 8), (4, 16), (4, 1), (1, 0)), (1, 128), 8),
    (Blocked((8, 1), (16, 4), (1, 4), (0, 1)), (1, 64), 4),
    # the B operand is needed by all 4 warps (warps split M): 128x64 / 64 lanes, times nothing saved
    (DotOperand(1, MFMA_T, 4), (128, 64), 128),
    (DotOperand(0, MFMA_T, 4), (128, 128), 64),
    # NVIDIA mma v2 m16n8, 4 warps along M: 128x64 / 128 threads
    (NvidiaMma(2, 0, (4, 1), (16, 8)), (128, 64), 64),
    (Slice(1, NvidiaMma(2, 0, (4, 1), (16, 8))), (128,), 4),  # rows r, r+8, twice (64 rows a pass)
    (Linear(((1, 0), (2, 0), (0, 0)), ((0, 1),), ()), (4, 2), 4),
])
def test_elements_per_lane(layout, shape, elements):
    assert elements_per_lane(layout, shape) == elements


def test_registers_pack_16_bit_and_widen_pointers():
    assert registers_per_lane(MFMA_T, (128, 128), "f32") == 64
    assert registers_per_lane(MFMA_T, (128, 128), "f16") == 32
    assert registers_per_lane(MFMA_T, (128, 128), "bf16") == 32
    assert registers_per_lane(MFMA_T, (128, 128), "f8E4M3FNUZ") == 16
    assert registers_per_lane(MFMA_T, (128, 128), "!tt.ptr<f16>") == 128
    assert registers_per_lane(Slice(1, MFMA_T), (128,), "f16") == 1  # half a register is still one


def test_parse_layout_aliases_and_nesting():
    aliases = {"#mma": "#ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 1], instrShape = [32, 32, 8], "
                       "isTransposed = true}>"}
    lay = parse_layout("#ttg.dot_op<{opIdx = 0, parent = #ttg.slice<{dim = 0, parent = #mma}>, kWidth = 4}>",
                       aliases)
    assert lay == DotOperand(0, Slice(0, MFMA_T), 4)
    assert parse_layout("#mma", aliases) == MFMA_T


# ---- TTGIR ----

def test_source_names_and_locations():
    assert source_name("%m_i_66") == "m_i" and source_name("%acc") == "acc" and source_name("%0") == ""
    table = {"#loc1": '"/k/_fa_common.py":156:5', "#loc2": '"/k/baseline.py":46:21',
             "#loc3": "callsite(#loc1 at #loc2)", "#loc4": '"m_i"(#loc3)'}
    assert resolve_loc("#loc4", table) == ("_fa_common.py:156", "baseline.py:46")
    assert amd_loc_chain("_fa_common.py:91:13 @[ _fa_common.py:168:17 @[ baseline.py:46:21 ] ]") == (
        "_fa_common.py:91", "_fa_common.py:168", "baseline.py:46")


def _summary(text: str) -> list[dict]:
    module = parse_ttgir(text)
    out = []
    for lp in module.loops:
        st = loop_state(lp, module)
        out.append({"location": lp.location, "carried": st.carried, "live_in": st.live_in, "index": st.index_vectors,
                    "tensors": {t.ssa: (t.name, t.role, t.registers) for t in st.tensors}})
    return out


GFX942_LOOP1 = {
    "%acc": ("acc", "carried", 64), "%l_i": ("l_i", "carried", 1), "%m_i_66": ("m_i", "carried", 1),
    "%cst_3": ("cst", "uniform", 32), "%q_30": ("q", "index", 8), "%q_37": ("q", "live-in", 32),
    "%offs_n": ("offs_n", "index", 4), "%offs_n_45": ("offs_n", "index", 4), "%k": ("k", "index", 8),
    "%qk": ("qk", "uniform", 32),
}


def test_ttgir_gfx942_default():
    module = parse_ttgir(read("baseline-gfx942.ttgir.gz"))
    assert (module.function, module.num_warps, module.threads_per_warp, module.target) == (
        "attn_fwd", 4, 64, "hip:gfx942")
    loops = _summary(read("baseline-gfx942.ttgir.gz"))
    assert loops[0] == {"location": ("_fa_common.py:156", "_fa_common.py:186", "baseline.py:46"),
                        "carried": 66, "live_in": 32, "index": 24, "tensors": GFX942_LOOP1}
    # the masked loop: the same carried state and q, plus the mask's index vector and more uniforms
    assert loops[1]["location"] == ("_fa_common.py:156", "_fa_common.py:189", "baseline.py:46")
    assert (loops[1]["carried"], loops[1]["live_in"], loops[1]["index"]) == (66, 32, 56)
    assert loops[1]["tensors"] == GFX942_LOOP1 | {
        "%cst": ("cst", "uniform", 1), "%cst_1": ("cst", "uniform", 1), "%cst_2": ("cst", "uniform", 32),
        "%offs_n_46": ("offs_n", "index", 32), "%n_ok": ("n_ok", "uniform", 32),
        "%n_ok_47": ("n_ok", "uniform", 4), "%v": ("v", "uniform", 4)}
    assert len(loops) == 2


def test_ttgir_sm_90_pipelined_names_and_shared_q():
    loops = _summary(read("baseline-sm_90.ttgir.gz"))
    first = loops[0]["tensors"]
    # the pipeliner renamed the iteration arguments %arg21..; the yielded values name them
    assert first["%arg21"] == ("acc", "carried", 64)
    assert first["%arg22"] == ("l_new", "carried", 2) and first["%arg23"] == ("m_new", "carried", 2)
    # wgmma reads Q from shared memory: no registers
    assert first["%q_35"] == ("q", "memory", 0)
    assert (loops[0]["carried"], loops[0]["live_in"], loops[0]["index"]) == (68, 0, 72)
    second = loops[1]["tensors"]
    assert second["%m_i_126"] == ("acc", "carried", 64)  # three arguments all named m_i: yields decide
    assert second["%x_74"] == ("x", "mask", None)  # an i1 mask: not counted as 32-bit registers
    assert (loops[1]["carried"], loops[1]["live_in"], loops[1]["index"]) == (68, 0, 88)


# ---- spill sites ----

def test_amdgcn_spill_sites_match_the_parser_counts():
    text = read("baseline-gfx942-wpe3.amdgcn.gz")
    usage = parse_amdgcn(text)
    spills = amdgcn_spills(text)
    assert sum(s.kind == "store" for s in spills) == usage.spill_stores == 116
    assert sum(s.kind == "reload" for s in spills) == usage.spill_loads == 138
    assert sum(s.in_loop for s in spills) == usage.spill_insts_in_loop == 124
    sites = spill_sites(spills)
    assert len(sites) == 22
    assert [(s.location, s.stores, s.reloads, s.in_loop) for s in sites[:4]] == [
        (("_fa_common.py:156", "_fa_common.py:186", "baseline.py:46"), 49, 4, False),
        (("_fa_common.py:156", "_fa_common.py:189", "baseline.py:46"), 31, 4, False),
        (("<no line>",), 4, 18, False),
        (("_fa_common.py:129", "_fa_common.py:159", "_fa_common.py:189", "baseline.py:46"), 0, 17, True),
    ]


def _local_bytes(op: str) -> int:
    suffix = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
    return next((suffix[p] for p in op.split(".")[1:] if p in suffix), 4)


def test_sass_spills_add_up_to_ptxas_spill_bytes():
    spills = sass_spills(read("baseline-sm_90-maxnreg128.sass.gz"), "attn_fwd")
    log = read("baseline-sm_90-maxnreg128.ptxas.txt")
    stores, loads = map(int, re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log).groups())
    assert sum(_local_bytes(s.instruction) for s in spills if s.kind == "store") == stores == 6648
    assert sum(_local_bytes(s.instruction) for s in spills if s.kind == "reload") == loads == 6396
    assert sum(s.in_loop for s in spills) == 1871
    sites = spill_sites(spills)
    assert len(sites) == 30
    assert (sites[0].location, sites[0].stores, sites[0].reloads, sites[0].in_loop) == (
        ("_fa_common.py:211", "_fa_common.py:229", "baseline.py:48"), 313, 413, True)


# ---- the join and its views ----

def _gfx942_wpe3_raw() -> dict:
    amdgcn = read("baseline-gfx942-wpe3.amdgcn.gz")
    return {"kernel": "attn_fwd", "name": "attn_fwd", "shared": 0, "amdgcn": amdgcn,
            "ttgir": read("baseline-gfx942-wpe3.ttgir.gz")}


def test_explain_raw_joins_allocation_loops_and_spills():
    from vgprscope.flashattn.config import AttentionConfig
    from vgprscope.flashattn.live import seed_estimate

    est = seed_estimate(AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=4, waves_per_eu=3),
                        "gfx942")
    e = explain_raw(get_arch("gfx942"), _gfx942_wpe3_raw(), "baseline", config="128x64 d128 fp16 w4 s1 wpe3",
                    estimate=est)
    usage = parse_amdgcn(_gfx942_wpe3_raw()["amdgcn"])
    assert e.ok and (e.num_warps, e.lanes) == (4, 64)
    assert (e.allocation.registers, e.allocation.arch_vgpr, e.allocation.agpr) == (
        usage.vgpr_total, usage.arch_vgpr, usage.agpr)
    assert [(lp.carried, lp.live_in, lp.index_vectors) for lp in e.loops] == [(66, 32, 24), (66, 32, 56)]
    assert dict(est.values) == {"acc": 64, "q": 32, "s": 32, "m_l": 1, "total": 129, "threads": 256}
    assert sum(s.stores for s in e.spills) == 116 and sum(s.reloads for s in e.spills) == 138
    doc = e.as_dict()
    assert doc["loops"][0]["tensors"][0] == {
        "name": "acc", "ssa": "%acc", "role": "carried", "shape": [128, 128], "dtype": "f32",
        "layout": "mfma 32x32 T", "elements_per_lane": 64, "registers_per_lane": 64, "counted": True,
        "layout_full": "#ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 1], instrShape = [32, 32, 8], "
                       "isTransposed = true}>", "memory": "registers", "buffer": None, "bytes": None}
    assert doc["estimate"]["name"] == "tile estimate" and doc["estimate"]["registers_per_lane"]["total"] == 129
    assert len(doc["spill_sites"]) == 22


@pytest.mark.parametrize("columns", [100, 160])
def test_table_reads_in_the_terminal(columns, monkeypatch):
    from vgprscope.analysis.explain.view import to_table
    from vgprscope.report.machine import compile_only

    monkeypatch.setenv("COLUMNS", str(columns))
    e = explain_raw(get_arch("gfx942"), _gfx942_wpe3_raw(), "baseline", config="128x64 d128 fp16 w4 s1 wpe3")
    text = to_table([e], compile_only())
    lines = text.splitlines()
    assert max(len(ln) for ln in lines[1:]) <= columns  # the machine line is the report's, not the table's
    assert re.search(r"^\s*acc\s+carried\s+128x128\s+f32\s+mfma 32x32 T\s+64\s+64\s*$", text, re.M)
    assert "carried 66 + live-in 32 = 98 of" in text
    assert "spill instructions: 116 stores, 138 reloads (124 inside a loop) at 22 source sites" in text
    assert re.search(r"49\s+4\s+outside\s+_fa_common\.py:156 <- _fa_common\.py:186 <- baseline\.py:46", text)


def test_markdown_and_json_keep_every_site():
    from vgprscope.analysis.explain.view import to_json, to_markdown
    from vgprscope.report.machine import compile_only

    e = explain_raw(get_arch("gfx942"), _gfx942_wpe3_raw(), "baseline")
    md = to_markdown([e], compile_only(), command="vgprscope explain --waves-per-eu 3")
    assert md.count("| in loop |") + md.count("| outside |") == 22
    assert "`%q_37`" in md and "Reproduce: `vgprscope explain --waves-per-eu 3`" in md
    doc = json.loads(to_json([e], compile_only(), "explain"))
    assert doc["schema_version"] == 2 and len(doc["kernels"][0]["spill_sites"]) == 22


def test_raw_without_ttgir_is_a_clear_error():
    from vgprscope.analysis.explain.core import ExplainError

    raw = _gfx942_wpe3_raw()
    del raw["ttgir"]
    with pytest.raises(ExplainError, match="no TTGIR"):
        explain_raw(get_arch("gfx942"), raw, "baseline")


# ---- a user's kernel: neutral words, shared memory apart, index vectors named as such ----

def _gemm_raw() -> dict:
    """gemm.py's matmul (tests/fixtures/user_kernels) as captured from run_gemm.py and compiled for gfx942:
    64x64x32 tiles, 4 warps, 3 stages (the pipeliner carries views into two-stage shared buffers)."""
    return {"kernel": "matmul", "name": "matmul", "shared": 16384, "amdgcn": read("gemm-gfx942.amdgcn.gz"),
            "ttgir": read("gemm-gfx942.ttgir.gz")}


def _gemm():
    return explain_raw(get_arch("gfx942"), _gemm_raw(), "gemm", config="fp16 BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 w4 s3")


@pytest.mark.parametrize("columns", [100, 160])
def test_explain_of_a_users_gemm_speaks_of_it_in_neutral_words(columns, monkeypatch):
    from vgprscope.analysis.explain.view import to_table
    from vgprscope.report.machine import compile_only

    monkeypatch.setenv("COLUMNS", str(columns))
    text = to_table([_gemm()], compile_only())
    assert max(len(ln) for ln in text.splitlines()) <= columns
    # no attention words and no seed 001 column for a kernel that is not one of the bundled variants
    for word in ("score tile", "K/V", "seed 001", "tile estimate"):
        assert word not in text, word
    assert "remainder 38: temporaries (values computed inside the loop, dot operands)" in " ".join(text.split())
    # layouts never cut mid-word: a short name for the shared layout, the full attribute only with --wide
    assert "<{" not in text and "swizzled_shared" in text
    # shared buffers are not registers: apart, in bytes, each buffer once; the carried views take none
    assert not re.search(r"^[ab]\s+carried", text, re.M)
    assert "shared memory (bytes, not registers): 2 buffers, 16384 B; the kernel's 16384 B in all; 4 views" in (
        " ".join(text.split()))
    assert re.search(r"^a\s+buffer\s+2x64x32\s+f16\s+swizzled_shared\s+8192$", text, re.M)
    assert len(re.findall(r"^[ab]\s+view, carried \(pipeline stage\)\s+\d+x\d+", text, re.M)) == 4
    # index vectors named as such, never as the value they address
    assert re.search(r"^index for a_ptrs\s+index\s+1x32\s+i32", text, re.M)
    assert not re.search(r"^a_ptrs\s+index", text, re.M)


def test_explain_wide_and_json_keep_the_full_layouts():
    from vgprscope.analysis.explain.view import to_json, to_table
    from vgprscope.report.machine import compile_only

    e = _gemm()
    full = "#ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 8, order = [1, 0]}>"
    assert full in to_table([e], compile_only(), wide=True)
    tensors = {t["ssa"]: t for t in json.loads(to_json([e], compile_only(), "explain"))["kernels"][0]["loops"][0]["tensors"]}
    assert tensors["%a_42"] | {"layout_full": None} == {
        "name": "a", "ssa": "%a_42", "role": "memory", "shape": [2, 64, 32], "dtype": "f16", "layout": "swizzled_shared",
        "layout_full": None, "elements_per_lane": 0, "registers_per_lane": 0, "counted": False, "memory": "shared",
        "buffer": "allocation", "bytes": 8192}
    assert tensors["%a_42"]["layout_full"] == full
    assert tensors["%a_93"]["role"] == "memory" and tensors["%a_93"]["buffer"] == "carried view"
    # aliases inside a layout are written out too (a dot operand's parent)
    assert all("#mma" not in t["layout_full"] and "#blocked" not in t["layout_full"] for t in tensors.values())
    # the loop's register sum is the same as before: acc and the two carried offset tensors
    assert (e.loops[0].carried, e.loops[0].live_in, e.loops[0].memory_bytes) == (32, 0, 16384)


def test_explain_of_a_bundled_variant_keeps_its_attention_words():
    from vgprscope.analysis.explain.view import to_table
    from vgprscope.flashattn.config import AttentionConfig
    from vgprscope.flashattn.live import seed_estimate
    from vgprscope.report.machine import compile_only

    est = seed_estimate(AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=4, waves_per_eu=3), "gfx942")
    e = explain_raw(get_arch("gfx942"), _gfx942_wpe3_raw(), "baseline", estimate=est)
    text = " ".join(to_table([e], compile_only(), width=100).split())
    assert "temporaries (the score tile, K/V operands)" in text and "tile estimate" in text
    assert "index for q index 1x128 i32" in text
