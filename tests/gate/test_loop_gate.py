"""The gate's loop metrics (``loop_matrix_share``, ``loop_spill_bytes``, every loop's ``loop_spill_bytes_max`` and
``loop_spill_bytes_sum``): read from each compiled kernel's assembly, unknown (never 0) where the assembly was not read, compared by check and diff.

Expected values are hand counts on the committed listings (tests/core/test_loops.py's docstring): gfx942's hot
K/V loop, lines 539-1359 of baseline-gfx942-wpe3.amdgcn, has 536 instructions of which 64 ``v_mfma``
(11.94 % -> 12), 50 scratch loads (420 B) and 8 ``scratch_store_dwordx4`` (8 x 16 = 128 B): 548 B and 58
scratch instructions per trip; its second K/V loop (the masked blocks) 580 B, the worst loop, 1128 B the two
together; sm_90's loop under maxnreg 128, lines 951-3859 of the SASS: 1886 instructions,
16 HGMMA (0.85 % -> 1), LDL 3148 B + STL 3148 B = 6296 B, 514 + 421 = 935 local instructions."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

from vgprscope.backends import CUDA, HIP
from vgprscope.core.parse.loops import amdgcn_loops, gate_loop, loop_fields, sass_loops

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPLAIN = FIXTURES / "explain"


def _text(path: Path) -> str:
    return gzip.open(path).read().decode()


def _amd_raw() -> dict:
    return {"amdgcn": _text(EXPLAIN / "baseline-gfx942-wpe3.amdgcn.gz"), "shared": 32768, "name": "attn_fwd"}


def _nvidia_raw(cubin: bool) -> dict:
    raw = {"ptxas_log": (FIXTURES / "sm90_plain.ptxas.log").read_text(),
           "cuobjdump": (FIXTURES / "sm90_plain.cuobjdump.txt").read_text(), "shared": 49152, "name": "attn_fwd"}
    return raw | ({"cubin_b64": base64.b64encode(b"not read: nvdisasm is the fixture's").decode()} if cubin else {})


def test_gfx942_usage_carries_its_hot_loops_mix_and_every_loops_spill_traffic_from_the_amdgcn():
    """baseline at waves_per_eu 3 on gfx942 has two K/V loops: the hot one (the full blocks) spills 548 B per
    trip, the masked tail's 580 B: the worst loop's 580 B is gated beside the hot loop's, and both together."""
    u = HIP.parse(_amd_raw())
    assert (u.loop_matrix_share, u.loop_spill_bytes, u.loop_scratch_insts, u.loop_lines) == \
        (12, 548, 58, "_fa_common.py:67-171")
    assert (u.loop_spill_bytes_max, u.loop_spill_bytes_sum) == (580, 1128)
    values = HIP.metric_values(u)
    assert (values["loop_matrix_share"], values["loop_spill_bytes"], values["loop_spill_bytes_max"],
            values["loop_spill_bytes_sum"]) == (12, 548, 580, 1128)


_TWO_LOOPS_SASS = """\
\t.section\t.text.attn_fwd,"ax",@progbits
attn_fwd:
        /*0000*/                   LDC R1, c[0x0][0x28]  ;
.L_x_0:
\t//## File "/src/k.py", line 10
        /*0010*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24  ;
        /*0020*/                   HGMMA.64x128x16.F32 R24, gdesc[UR8], R24  ;
        /*0030*/               @P0 BRA `(.L_x_0)  ;
.L_x_1:
\t//## File "/src/k.py", line 20
{stores}
        /*{last}*/               @P1 BRA `(.L_x_1)  ;
        /*{exit}*/                   EXIT  ;
"""


def test_a_second_loop_spilling_is_gated_though_the_hot_loop_does_not_spill(monkeypatch):
    """A two-loop kernel on sm_90: the hot loop (two HGMMA) moves nothing to local memory, the second stores
    1,024 B per trip (64 STL.128): the hot loop's loop_spill_bytes is 0, the worst loop's loop_spill_bytes_max and
    every loop's loop_spill_bytes_sum 1,024, both gated: 1,024 more B is a regression."""
    import vgprscope.backends.cuda as cuda
    from vgprscope.gate.rules import RuleSet

    stores = "\n".join(f"        /*{0x40 + 16 * i:04x}*/                   STL.128 [R1+{hex(16 * i)}], R4  ;"
                       for i in range(64))
    sass = _TWO_LOOPS_SASS.format(stores=stores, last=f"{0x40 + 16 * 64:04x}", exit=f"{0x50 + 16 * 64:04x}")
    monkeypatch.setattr(cuda, "nvdisasm", lambda cubin: sass)
    u = CUDA.parse(_nvidia_raw(cubin=True))
    assert (u.loop_matrix_share, u.loop_lines, u.loop_spill_bytes, u.loop_scratch_insts) == (67, "k.py:10", 0, 0)
    assert (u.loop_spill_bytes_max, u.loop_spill_bytes_sum) == (1024, 1024)
    values = CUDA.metric_values(u)
    assert (values["loop_spill_bytes_max"], values["loop_spill_bytes_sum"]) == (1024, 1024)
    rules = RuleSet()
    assert all(rules.rule_for("k", m).judge(0, 1024)[1] for m in ("loop_spill_bytes_max", "loop_spill_bytes_sum"))


def test_sm90_usage_reads_the_loop_from_the_cubins_sass(monkeypatch):
    """The cubin's SASS is disassembled at parse time (here the committed maxnreg-128 listing stands for
    nvdisasm's output)."""
    import vgprscope.backends.cuda as cuda

    monkeypatch.setattr(cuda, "nvdisasm", lambda cubin: _text(EXPLAIN / "baseline-sm_90-maxnreg128.sass.gz"))
    u = CUDA.parse(_nvidia_raw(cubin=True))
    assert (u.loop_matrix_share, u.loop_spill_bytes, u.loop_scratch_insts) == (1, 6296, 935)
    assert (CUDA.metric_values(u)["loop_matrix_share"], CUDA.metric_values(u)["loop_spill_bytes"]) == (1, 6296)


def _spilling_nvidia_raw() -> dict:
    return {"ptxas_log": (FIXTURES / "sm80_spills.ptxas.log").read_text(),
            "cuobjdump": (FIXTURES / "sm80_spills.cuobjdump.txt").read_text(), "shared": 0, "name": "attn_fwd"}


def test_without_the_assembly_the_loop_metrics_are_unknown_never_zero(monkeypatch):
    """A kernel with a stack frame whose SASS cannot be read: its loops' spill traffic is unknown, left out of
    the gate. One without local memory or stack moves no spilled byte in any loop: 0, known without the SASS;
    its share and lines stay unknown."""
    import vgprscope.backends.cuda as cuda

    u = CUDA.parse(_spilling_nvidia_raw())
    assert u.stack_bytes > 0
    assert (u.loop_matrix_share, u.loop_spill_bytes, u.loop_spill_bytes_sum, u.loop_lines) == (None,) * 4
    assert not {"loop_matrix_share", "loop_spill_bytes", "loop_spill_bytes_max"} & set(CUDA.metric_values(u))
    plain = CUDA.parse(_nvidia_raw(cubin=False))
    assert (plain.loop_matrix_share, plain.loop_lines) == (None, None)
    assert (plain.loop_spill_bytes, plain.loop_scratch_insts, plain.loop_spill_bytes_max,
            plain.loop_spill_bytes_sum) == (0, 0, 0, 0)

    def fails(cubin: bytes) -> str:
        raise FileNotFoundError("nvdisasm")

    monkeypatch.setattr(cuda, "nvdisasm", fails)  # a cubin no nvdisasm here reads: unknown, the row still parses
    u = CUDA.parse(_spilling_nvidia_raw() | {"cubin_b64": base64.b64encode(b"unread").decode()})
    assert u.regs > 0 and u.loop_spill_bytes is None
    assert loop_fields(())["loop_spill_bytes"] == 0 and loop_fields(())["loop_matrix_share"] is None


def test_the_gate_loop_without_matrix_instructions_is_the_one_with_the_most_scratch_traffic():
    """sm_90's second loop (.L_x_3) has no HGMMA; with the hot flag taken off both, the gate reads the loop
    that moves the most scratch bytes per trip (.L_x_1's 6296 B)."""
    from dataclasses import replace

    loops = sass_loops(_text(EXPLAIN / "baseline-sm_90-maxnreg128.sass.gz"), "attn_fwd")
    cold = tuple(replace(m, hot=False, counts=tuple(c for c in m.counts if c[0] != "matrix")) for m in loops)
    assert gate_loop(cold) is cold[0] and gate_loop(()) is None
    assert gate_loop(amdgcn_loops(_amd_raw()["amdgcn"])).name == "BB0_2"


def test_usage_dicts_keep_the_loop_fields_and_old_dicts_read_back_unknown():
    from vgprscope.core.records import usage_from_dict, usage_to_dict

    u = HIP.parse(_amd_raw())
    d = usage_to_dict(u)
    assert d["loop_spill_bytes"] == 548 and usage_from_dict(d) == u
    old = {k: v for k, v in d.items() if not k.startswith("loop_")}
    assert usage_from_dict(old).loop_spill_bytes is None


@pytest.fixture
def entries():
    """A gfx942 baseline entry parsed from the fixture, and the same kernel with its loop figures moved."""
    from dataclasses import replace

    from vgprscope.core.records import LaunchConfig
    from vgprscope.gate.baseline import Entry

    u = HIP.parse(_amd_raw())
    occ = {"unit": "waves/SIMD", "value": 1, "limits": {"vgpr": 1}, "limiters": ["vgpr"]}
    config = LaunchConfig(args=(), constexprs=(), options=(("num_warps", 8),))

    def entry(**fields) -> Entry:
        return Entry("baseline", "attn_fwd", "gfx942", "defaults", config, config.key(), "ok", replace(u, **fields),
                     occ)

    return entry


def test_check_passes_a_baseline_saved_without_loop_metrics_and_judges_one_saved_with_them(entries):
    from vgprscope.gate.diff import State, diff_entry
    from vgprscope.gate.rules import Change, RuleSet, parse_rule

    old = entries(loop_matrix_share=None, loop_spill_bytes=None, loop_scratch_insts=None, loop_lines=None)
    cur = entries()
    d = diff_entry(old, cur, RuleSet())
    assert d.state is State.COMPARED and d.change is Change.SAME and not d.fails
    assert not {"loop_matrix_share", "loop_spill_bytes"} & {m.metric for m in d.metrics}  # not compared

    grown = diff_entry(cur, entries(loop_spill_bytes=548 + 64), RuleSet())
    spill = next(m for m in grown.metrics if m.metric == "loop_spill_bytes")
    assert grown.fails and spill.change is Change.WORSE and (spill.baseline, spill.current) == (548, 612)

    dropped = entries(loop_matrix_share=10)
    shown = diff_entry(cur, dropped, RuleSet())
    share = next(m for m in shown.metrics if m.metric == "loop_matrix_share")
    assert not shown.fails and share.worse and share.delta == -2  # shown; gated by a rule only
    allowed = RuleSet((parse_rule("loop_matrix_share:-2"),))
    assert not diff_entry(cur, dropped, allowed).fails  # two points allowed
    assert diff_entry(cur, entries(loop_matrix_share=9), allowed).fails
    assert not diff_entry(cur, entries(loop_matrix_share=15, loop_spill_bytes=0), RuleSet()).fails


def test_a_saved_baseline_carries_the_loop_metrics(entries, tmp_path):
    from vgprscope.gate.baseline import Baseline, load_baseline, save_baseline

    path = tmp_path / "b.json"
    save_baseline(path, Baseline.of([entries()], "3.9.0"))
    usage = json.loads(path.read_text())["entries"]["baseline/attn_fwd/gfx942/defaults"]["usage"]
    assert (usage["loop_matrix_share"], usage["loop_spill_bytes"], usage["loop_lines"]) == (12, 548,
                                                                                            "_fa_common.py:67-171")
    (back,) = load_baseline(path).entries.values()
    assert (back.metrics["loop_matrix_share"], back.metrics["loop_spill_bytes"]) == (12, 548)


def _gemm(release: str) -> dict:
    """Primus-Turbo's grouped GEMM (reports/upstream-regressions' capture, 256x256x64 tile, 8 warps) compiled
    for gfx942 by a Triton release: a tile loop (BB0_5) around the K loop."""
    return {"amdgcn": _text(EXPLAIN / f"grouped-gemm-gfx942-triton{release}.amdgcn.gz"), "shared": 65536,
            "name": "_grouped_variable_k_gemm_kernel"}


def test_the_hot_loop_of_nested_loops_is_the_one_whose_own_body_holds_the_most_matrix_instructions():
    """3.8.0's K loop, lines 1706-2309 (.LBB0_7 to its s_cbranch_scc1): 484 instructions, 128
    v_mfma_f32_16x16x16_bf16 (26.4 % -> 26), scratch_load_dword x22 + _dwordx4 x8 = 216 B, scratch_store_dword x5
    + _dwordx4 x8 = 148 B: 364 B and 43 instructions per trip. The tile loop around it holds 256 MFMAs counting
    the K loop's body once, 128 of its own (the pipeline's peeled iterations): a tie, which the inner loop wins.
    3.7.1's K loop, lines 1742-2090: 297 instructions, 128 MFMAs (43.1 % -> 43), no scratch instruction; its tile
    loop's own body moves 16 B per trip: the worst loop's, 3.8.0's K loop's 364 B."""
    loops = {m.name: m for m in amdgcn_loops(_gemm("380")["amdgcn"])}
    inner, outer = loops["BB0_7"], loops["BB0_5"]
    assert (inner.depth, inner.parent, inner.hot, outer.hot) == (2, "BB0_5", True, False)
    assert (inner.instructions, inner.count("matrix"), outer.count("matrix")) == (484, 128, 256)
    assert (inner.moved("scratch_load"), inner.moved("scratch_store")) == (216, 148)
    assert (inner.count("scratch_load"), inner.count("scratch_store")) == (30, 13)
    after, before = HIP.parse(_gemm("380")), HIP.parse(_gemm("371"))
    assert (after.loop_matrix_share, after.loop_spill_bytes, after.loop_scratch_insts) == (26, 364, 43)
    assert (before.loop_matrix_share, before.loop_spill_bytes, before.loop_scratch_insts) == (43, 0, 0)
    assert (after.loop_spill_bytes_max, before.loop_spill_bytes_max, before.loop_spill_bytes_sum) == (364, 16, 16)


def test_a_listing_without_loop_comments_but_with_a_backward_branch_has_its_loop_unknown():
    """LLVM names loops only in verbose assembly: a listing whose comments were left out still branches back
    (gemm-gfx942's `s_cbranch_scc1 .LBB0_6` at line 429 to the label at line 250), so "no loop" would be a
    silent 0: the share is unknown instead; its spill traffic is 0 all the same, the kernel having no scratch. A
    kernel that never branches back has no loop (0)."""
    import re

    text = _text(EXPLAIN / "gemm-gfx942.amdgcn.gz")
    bare = re.sub(r"(?m)^(\S*:)?\s*;.*(Loop|Header).*$", lambda m: m.group(1) or "", text)
    assert "Loop Header" not in bare and amdgcn_loops(bare) == ()
    u = HIP.parse({"amdgcn": bare, "shared": 0})
    assert (u.loop_matrix_share, u.loop_lines, u.loop_spill_bytes) == (None, None, 0) and u.scratch_bytes == 0
    assert HIP.parse({"amdgcn": text, "shared": 0}).loop_spill_bytes == 0  # its loop read: no scratch
    straight = re.sub(r"(?m)^\s*s_cbranch_scc1 \.LBB0_6$", "", bare)
    assert HIP.parse({"amdgcn": straight, "shared": 0}).loop_spill_bytes == 0  # no loop at all


def test_the_sass_the_worker_disassembled_is_read_without_nvdisasm_here(monkeypatch):
    """The compile worker disassembles the cubin beside the compile (in parallel, with its release's nvdisasm):
    the backend reads that SASS and runs no nvdisasm of its own; an answer without it is disassembled here."""
    import vgprscope.backends.cuda as cuda

    def refuse(cubin: bytes) -> str:
        raise AssertionError("nvdisasm ran in the parsing process")

    monkeypatch.setattr(cuda, "nvdisasm", refuse)
    sass = _text(EXPLAIN / "baseline-sm_90-maxnreg128.sass.gz")
    u = CUDA.parse(_nvidia_raw(cubin=True) | {"sass": sass})
    assert (u.loop_matrix_share, u.loop_spill_bytes, u.loop_scratch_insts) == (1, 6296, 935)
    assert CUDA.disassemble(_nvidia_raw(cubin=True) | {"sass": sass}) == sass


def test_the_compile_worker_returns_the_cubins_sass():
    from vgprscope.runtime import stored

    assert stored.nvdisasm(b"not a cubin") is None  # nvdisasm refuses it: the parser disassembles or says unknown
