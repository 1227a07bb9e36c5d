"""Our AMD occupancy against LLVM's own `; Occupancy:` line and kernel descriptor on fresh compiles.

Every compile of a real grid (bundled attention configs, and a user's `add` and `matmul` over num_warps x
waves_per_eu on gfx90a, gfx942, gfx950, gfx1100 wave32 and gfx1201 wave32) must satisfy, or the test fails:
1. our model of LLVM's rule (rule 5: registers padded for the waves-per-EU range LLVM keeps, SGPRs, and the
   workgroup rule over Triton's `amdgpu-flat-work-group-size` range 1..num_warps*wave_size with the static
   LDS LLVM sees) equals LLVM's `; Occupancy:` line;
2. our model of the padding equals the descriptor's `.amdhsa_next_free_vgpr` (`vgpr_alloc`): a
   waves_per_eu minimum LLVM drops (below what one workgroup needs) pads nothing, a kept one pads to
   `getMinNumVGPRs`;
3. our occupancy for the real launch equals LLVM's line, or differs only for the documented reasons
   (Triton's dynamic LDS that LLVM cannot see, workgroups resident whole): the note names them and never
   says "cannot name". A dropped hint is said in the note ("has no effect").

The grid (254 compiles) takes about 65 s of one core (a user kernel 0.05-0.4 s, an attention config
about 0.8 s); the module compiles it once, on two workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vgprscope.backends import occupancy_of
from vgprscope.compile.engine import Engine
from vgprscope.compile.task import RowInfo, Task, target_of
from vgprscope.core.archs import AmdArch, get_arch
from vgprscope.core.job import Arg, CompileJob, FunctionSource
from vgprscope.core.occupancy.amd import _llvm_occupancy, llvm_pad_waves, llvm_vgpr_allocation, llvm_waves_per_eu
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.records import KernelIdentity, LaunchConfig
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import get_variant

pytestmark = pytest.mark.slow

USER_KERNELS = Path(__file__).parents[1] / "fixtures" / "user_kernels"

# bundled variants: (block_m, block_n, head_dim, num_warps, waves_per_eu)
CONFIGS = {
    "gfx90a": [(64, 32, 64, 4, None), (128, 64, 128, 4, None), (64, 64, 64, 8, None), (16, 128, 32, 1, None),
               (64, 32, 64, 4, 2)],
    "gfx942": [(64, 32, 64, 4, None), (128, 64, 128, 4, None), (64, 64, 64, 8, None), (16, 128, 64, 1, None),
               (64, 32, 64, 4, 2)],
    "gfx950": [(64, 32, 64, 4, None), (128, 64, 128, 4, None), (64, 64, 64, 8, None), (256, 64, 64, 8, None),
               (64, 32, 64, 4, 2)],
    "gfx1100": [(64, 32, 64, 4, None), (16, 64, 64, 1, None), (64, 64, 64, 8, None), (64, 32, 64, 4, 2)],
    # RDNA4: the table's row is RDNA3's wave32 rules (core/archs.py); LLVM's line on these compiles is the check
    "gfx1201": [(64, 32, 64, 4, None), (16, 64, 64, 1, None), (64, 64, 64, 8, None), (64, 32, 64, 4, 2)],
}
# row-stream at 8 warps with waves_per_eu 1 (LLVM drops the hint and says 8, not "does not launch") and 2
# (kept, padded)
ROW_STREAM = [(arch, (16, 64, 128, 8, wpe)) for arch in ("gfx942", "gfx90a") for wpe in (1, 2)]


def llvm_rule_occupancy(arch: AmdArch, vgpr_total: int, sgpr: int | None = None, lds_bytes: int = 0,
                        workgroup_range: tuple[int, int] | None = None, waves_per_eu: int | None = None) -> int:
    """Rule 5 whole, as the tests cross-check it: what LLVM's ``; Occupancy:`` line computes
    (``AMDGPUAsmPrinter::getSIProgramInfo``: ``AMDGPUMCExpr::createOccupancy(GCNSubtarget::computeOccupancy(F,
    LDS), NumSGPRsForWavesPerEU, NumVGPRsForWavesPerEU)``): min(rule 2 on the VGPRs padded for the waves-per-EU
    range LLVM keeps of ``waves_per_eu`` (``llvm_waves_per_eu``), rule 3, rule 4 over the workgroup-size range),
    with the LDS LLVM sees (the static LDS only for Triton kernels). Default range: LLVM's 1..1024. vgprscope
    itself reads LLVM's line and uses rule 5 with the padding the kernel has (``amd._llvm_occupancy``).

    The SGPRs are padded the same way (``getMinNumSGPRs``), but on GFX9 that padding always leaves at
    least as many waves as the VGPR padding for the same range, so it never decides the line.
    """
    lo, hi = workgroup_range or (1, arch.max_threads_per_workgroup)
    pad = llvm_pad_waves(arch, waves_per_eu, hi, lds_bytes, lo)
    return _llvm_occupancy(arch, vgpr_total, sgpr, lds_bytes, (lo, hi), pad)


def _ptr(name: str, dtype: str) -> Arg:
    return Arg(name, f"*{dtype}", aligned=True)


def _const(name: str, value: int) -> Arg:
    return Arg.from_dict({"name": name, "type": "constexpr", "value": value})


# user kernels, launched as a user would (16-byte aligned tensors, sizes not multiples of 16): file, function,
# the launch's arguments as facts
KERNELS = {
    "add": ("my_ops.py", "add", (_ptr("X", "fp32"), _ptr("Y", "fp32"), _ptr("Z", "fp32"), Arg("n", "i32"),
                                 _const("BLOCK", 1024))),
    "matmul": ("matmul.py", "matmul",
               (_ptr("A", "fp16"), _ptr("B", "fp16"), _ptr("C", "fp32"), Arg("M", "i32"), Arg("N", "i32"),
                Arg("K", "i32"), Arg("stride_am", "i32"), Arg("stride_bk", "i32"), Arg("stride_cm", "i32"),
                _const("BLOCK_M", 64), _const("BLOCK_N", 64), _const("BLOCK_K", 32))),
}
AMD_ARCHS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201")
# `add` (a few VGPRs: the padding decides) over the whole grid; `matmul` (64-256 VGPRs, spills at high
# waves_per_eu) where the hint is kept, dropped, or meets its register use
GRID = [(arch, "add", w, wpe) for arch in AMD_ARCHS for w in (1, 8, 16)
        for wpe in range(get_arch(arch).max_waves_per_simd + 1)]
GRID += [(arch, "matmul", w, wpe) for arch in AMD_ARCHS for w in (1, 8)
         for wpe in ((0, 1, 2, 11, 13) if get_arch(arch).max_waves_per_simd == 16 else (0, 1, 2, 5))]

CASES = ([(arch, "baseline", *c) for arch, cs in CONFIGS.items() for c in cs]
         + [(arch, "row-stream", *c) for arch, c in ROW_STREAM]
         + [(arch, kernel, None, None, None, w, wpe or None) for arch, kernel, w, wpe in GRID])


def _case_id(case: tuple) -> str:
    arch, what, bm, bn, d, w, wpe = case
    shape = f"{bm}x{bn}xd{d}-" if bm else ""
    return f"{arch}-{what}-{shape}w{w}-wpe{wpe or 0}"


def _user_task(arch_name: str, kernel: str, num_warps: int, wpe: int | None) -> Task:
    """A user's kernel launched with these options, as a captured launch would be."""
    file_name, name, args = KERNELS[kernel]
    arch = get_arch(arch_name)
    options = {"num_warps": num_warps, "num_stages": 1, "waves_per_eu": wpe}
    job = CompileJob.of(FunctionSource(file=str(USER_KERNELS / file_name), qualname=name), target_of(arch), args,
                        options)
    row = RowInfo(label=kernel, kernel=name, config=LaunchConfig((), (), job.options),
                  identity=KernelIdentity("", name, str(USER_KERNELS / file_name), ""), source="capture")
    return Task(job, arch, row)


@pytest.fixture(scope="module")
def compiled():
    """Each case's raw compiler outputs (the compile workers run without the interpreter)."""
    engine = Engine(2)
    tasks = []
    for case in CASES:
        arch, what, bm, bn, d, w, wpe = case
        if what in KERNELS:
            tasks.append(_user_task(arch, what, w, wpe))
            continue
        cfg = AttentionConfig(block_m=bm, block_n=bn, head_dim=d, num_warps=w, num_stages=1, waves_per_eu=wpe)
        [task] = variant_tasks([(get_variant(what), cfg, get_arch(arch), "")], engine)
        tasks.append(task)
    rows = engine.compile(tasks)
    return {case: engine.raw_outputs(task) or {"error": row.status} for case, task, row in zip(CASES, tasks, rows)}


def _kind(case: tuple, out: dict) -> set[str]:
    """What a row shows: equal / lds / whole (how ours relates to LLVM's line), kept / dropped (the hint)."""
    arch, _, _, _, _, w, wpe = case
    a = get_arch(arch)
    u = parse_amdgcn(out["amdgcn"], out["shared"])
    occ = occupancy_of(u, a, w, waves_per_eu=wpe)
    kinds = {"equal" if occ.value == u.llvm_occupancy else "lds" if "dynamic LDS" in occ.note else
             "whole" if "resident whole" in occ.note else "other"}
    if wpe:
        kinds.add("kept" if llvm_waves_per_eu(a, wpe, u.max_flat_workgroup_size)[0] == wpe else "dropped")
    return kinds


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_ours_equals_llvm_or_the_note_says_why(compiled, case):
    out = compiled[case]
    assert "error" not in out, out.get("error")
    arch, _, _, _, _, num_warps, wpe = case
    a = get_arch(arch)
    u = parse_amdgcn(out["amdgcn"], out["shared"])
    assert u.llvm_occupancy is not None and u.vgpr_alloc is not None
    # what LLVM saw: Triton's flat workgroup range is 1..num_warps*wave_size (wave32 on gfx1100), no static LDS
    assert u.max_flat_workgroup_size == num_warps * a.wave_size
    assert u.lds_static == 0

    # 1. our model of LLVM's rule reproduces LLVM's line exactly
    assert llvm_rule_occupancy(a, u.vgpr_total, u.sgpr, u.lds_static, (1, u.max_flat_workgroup_size), wpe) \
        == u.llvm_occupancy

    # 2. and the descriptor's allocation: padded only for a hint LLVM keeps
    kept = bool(wpe) and llvm_waves_per_eu(a, wpe, u.max_flat_workgroup_size)[0] == wpe
    pad = llvm_pad_waves(a, wpe, u.max_flat_workgroup_size, u.lds_static)
    assert llvm_vgpr_allocation(a, u.vgpr_total, pad) == u.vgpr_alloc
    if not kept:
        assert u.vgpr_alloc == u.vgpr_total

    # 3. ours for the real launch equals LLVM's, or the note names each reason
    occ = occupancy_of(u, a, num_warps, waves_per_eu=wpe)
    assert "cannot name" not in occ.note, occ.note
    dropped = f"waves_per_eu={wpe} has no effect" if wpe and not kept else ""
    assert occ.note.startswith(dropped)
    rest = occ.note[len(dropped):].split("; ", 1)[-1] if dropped and "; " in occ.note else \
        ("" if dropped else occ.note)
    wpw = num_warps  # waves per workgroup: Triton's warps are the arch's waves
    lds_binds = "lds" in occ.limiters
    if occ.value == u.llvm_occupancy:
        assert rest == ""
    else:
        assert rest.startswith(f"LLVM's `; Occupancy: {u.llvm_occupancy}` differs from ours ({occ.value})"), rest
        assert lds_binds or wpw > a.simds_per_cu
        assert ("dynamic LDS" in rest) if lds_binds else ("resident whole" in rest)
    if not lds_binds and wpw <= a.simds_per_cu:
        assert occ.value == u.llvm_occupancy


def test_the_grid_covers_each_kind_of_row(compiled):
    kinds: set[str] = set()
    for case, out in compiled.items():
        if "error" not in out:
            kinds |= _kind(case, out)
    assert kinds == {"equal", "lds", "whole", "kept", "dropped"}


def test_issue_17_rows_match_llvm(compiled):
    # the hint LLVM drops: 62 VGPRs, 8 waves/SIMD as LLVM says, not "does not launch"
    for arch in ("gfx942", "gfx90a"):
        out = compiled[(arch, "row-stream", 16, 64, 128, 8, 1)]
        u = parse_amdgcn(out["amdgcn"], out["shared"])
        occ = occupancy_of(u, get_arch(arch), 8, waves_per_eu=1)
        assert occ.value == u.llvm_occupancy == 8 and u.vgpr_alloc == u.vgpr_total
