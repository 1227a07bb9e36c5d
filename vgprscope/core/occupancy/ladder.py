"""Occupancy ladders: the register counts of each occupancy level (which vendor's ladder a kernel gets:
``vgprscope.backends``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..archs import AmdArch, NvidiaArch, expect_amd, expect_nvidia
from ..errors import UsageError
from .amd import _AmdLaunch
from .common import DEFAULT_THREADS, LadderStep, _check_threads
from .nvidia import _NvidiaLaunch, warps_per_block


def check_warps(num_warps: int, wave_size: int) -> int:
    """Threads of a Triton launch of ``num_warps`` warps/waves (a usage error unless a positive int)."""
    if isinstance(num_warps, bool) or not isinstance(num_warps, int) or num_warps < 1:
        raise UsageError(f"num_warps must be a positive whole number; got {num_warps!r}")
    return num_warps * wave_size


def _group(values: list[tuple[int, int, float, int | None]], first: int) -> list[LadderStep]:
    steps: list[LadderStep] = []
    for i, (value, _, percent, warps) in enumerate(values):
        n = first + i
        if steps and steps[-1].value == value:
            steps[-1] = LadderStep(steps[-1].lo, n, value, percent, warps)
        else:
            steps.append(LadderStep(n, n, value, percent, warps))
    return steps


def amd_ladder(arch: AmdArch, workgroup_size: int | None = None) -> list[LadderStep]:
    """VGPR+AGPR totals 1..the arch's maximum -> waves/SIMD for ``workgroup_size`` threads (None: one
    wave), registers alone (with the launch's own ceiling). CDNA: 1-64 -> 8, 65-72 -> 7, ..., 257-512 -> 1."""
    arch = expect_amd(arch, "nvidia_ladder")
    wg = arch.wave_size if workgroup_size is None else workgroup_size
    _check_threads("workgroup size", wg, arch.max_threads_per_workgroup)
    launch = _AmdLaunch(arch, 0, None, 0, wg, None)
    rows: list[tuple[int, int, float, int | None]] = []
    for n in range(1, arch.max_vgprs_total + 1):
        v = launch.value_with({"vgpr": n})
        rows.append((v, n, round(100.0 * v / arch.max_waves_per_simd, 2), None))
    return _group(rows, 1)


def nvidia_ladder(arch: NvidiaArch, threads: int | None = None) -> list[LadderStep]:
    """Registers per thread 1..255 -> blocks/SM for ``threads`` threads per block (None: DEFAULT_THREADS),
    with warps/SM, registers alone (with the launch's own ceiling)."""
    arch = expect_nvidia(arch, "amd_ladder")
    size = DEFAULT_THREADS if threads is None else threads
    _check_threads("threads per block", size, arch.max_threads_per_block)
    nv = _NvidiaLaunch(arch, 0, 0, size, None)
    wpb = warps_per_block(arch, size)
    rows: list[tuple[int, int, float, int | None]] = []
    for r in range(1, arch.max_regs_per_thread + 1):
        v = nv.value_with({"regs": r})
        rows.append((v, r, round(100.0 * v * wpb / arch.max_warps_per_sm, 2), v * wpb))
    return _group(rows, 1)


def amd_memory_ladder(arch: AmdArch, workgroup_size: int | None = None) -> list[LadderStep]:
    """LDS bytes per workgroup, one allocation granule at a time up to the workgroup's maximum -> waves/SIMD
    for ``workgroup_size`` threads (None: one wave), LDS alone (with the launch's own ceiling): the
    staircase the LDS walks, as :func:`amd_ladder` is the registers'. ``lo``/``hi`` are bytes."""
    arch = expect_amd(arch, "nvidia_memory_ladder")
    wg = arch.wave_size if workgroup_size is None else workgroup_size
    _check_threads("workgroup size", wg, arch.max_threads_per_workgroup)
    launch = _AmdLaunch(arch, 0, None, 0, wg, None)
    g = arch.lds_granule
    rows = [(launch.value_with({"lds": n}), n, round(100.0 * launch.value_with({"lds": n}) / arch.max_waves_per_simd, 2),
             None) for n in range(g, arch.lds_per_workgroup + 1, g)]
    return _steps_of(rows, g)


def nvidia_memory_ladder(arch: NvidiaArch, threads: int | None = None) -> list[LadderStep]:
    """Shared memory bytes per block, one allocation granule at a time up to the opt-in maximum -> blocks/SM
    for ``threads`` threads per block (None: DEFAULT_THREADS), shared memory alone, with warps/SM."""
    arch = expect_nvidia(arch, "amd_memory_ladder")
    size = DEFAULT_THREADS if threads is None else threads
    _check_threads("threads per block", size, arch.max_threads_per_block)
    nv = _NvidiaLaunch(arch, 1, 0, size, None)
    wpb = warps_per_block(arch, size)
    g = arch.shared_granule
    rows = []
    for n in range(g, arch.max_shared_per_block + 1, g):
        v = nv.value_with({"shared": n})
        rows.append((v, n, round(100.0 * v * wpb / arch.max_warps_per_sm, 2), v * wpb))
    return _steps_of(rows, g)


def _steps_of(rows: Sequence[tuple[int, int, float, int | None]], granule: int) -> list[LadderStep]:
    """Rows one granule apart -> steps whose ``lo`` is the step's first byte (the granule before it + 1)."""
    steps: list[LadderStep] = []
    for value, n, percent, warps in rows:
        if steps and steps[-1].value == value:
            steps[-1] = LadderStep(steps[-1].lo, n, value, percent, warps)
        else:
            steps.append(LadderStep(n - granule + 1, n, value, percent, warps))
    return steps
