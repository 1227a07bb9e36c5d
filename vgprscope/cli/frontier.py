"""``vgprscope frontier``: the highest occupancy each kernel reaches without spilling, and the next level's price."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .app import app
from .capture import CaptureOpt
from .common import (
    ArchOpt, CausalOpt, Format, FormatOpt, JobsOpt, KernelDirOpt, NoCacheOpt, OutputOpt, VariantOpt, emit, err,
    handles_errors,
)
from .grid import (
    BlockMGrid, BlockNGrid, DtypeGrid, HeadDimGrid, KnobGrid, KpackGrid, MaxCompilesOpt, NonKDimGrid, NumStagesGrid,
    NumWarpsGrid, SchedulerOpt, YesOpt,
)

StrategiesOpt = Annotated[
    Optional[list[str]], typer.Option("--strategies", "-s", help="Same as --variant: 'all' or a comma list")
]
FrontierSortOpt = Annotated[Optional[str], typer.Option(
    "--sort", help="Order the kernels of each arch best first: spill_free_occupancy, next_spills, min_maxnreg")]
WideOpt = Annotated[bool, typer.Option("--wide", help="Every column at its natural width")]

# --sort names -> how a KernelFrontier gives the value
_SORTS = {
    "spill_free_occupancy": lambda kf: kf.spill_free_occupancy,
    "occupancy": lambda kf: kf.spill_free_occupancy,
    "next_spills": lambda kf: kf.next_level.spills if kf.next_level else None,
    "spills": lambda kf: kf.next_level.spills if kf.next_level else None,
    "min_maxnreg": lambda kf: kf.min_spill_free_maxnreg,
}


def sort_frontiers(frontiers, metric: str | None):
    from ..errors import UsageError
    from ..grid import sort_by

    if not metric:
        return list(frontiers)
    key = metric.strip().lower().replace("-", "_")
    if key not in _SORTS:
        raise UsageError(f"cannot sort the frontier by {metric!r}; sort by one of: {', '.join(_SORTS)}")
    field = "spill_free_occupancy" if key in ("occupancy", "spill_free_occupancy") else key
    groups: dict[str, list] = {}
    for kf in frontiers:
        groups.setdefault(kf.arch, []).append(kf)
    return [kf for kfs in groups.values() for kf in sort_by(kfs, field, lambda k, _: _SORTS[key](k))]


def compute_frontier(variants, arch, requests, *, jobs=None, use_cache=True, kernel_dir=None, yes=False,
                     max_compiles=None, scheduler=None, capture=None):
    """The frontier of a selection: grid guard, then every level compiled (on the scheduler if given)."""
    from ..compile.cache import CompileCache
    from ..compile.engine import Engine
    from ..frontier import engine_tasks, level_count, occupancy_levels, run_frontier
    from ..sweep import capture_tasks, sweep_tasks
    from .grid import executor_for, guard, sample_of
    from .progress import compile_progress

    access = engine_tasks()
    with executor_for(scheduler) as executor, compile_progress() as progress:
        engine = Engine(jobs, CompileCache(enabled=use_cache), executor, progress)
        tasks = []
        if capture is None or variants or kernel_dir:  # a capture alone: its kernels only, as analyze does
            tasks = sweep_tasks(variants, arch, requests, kernel_dir, engine)
        if capture is not None:
            tasks += capture_tasks(capture, arch)

        def compile_fn(ts):
            return engine.compile(ts)

        sample = [access.vary(t, p.knob, p.setting) for t in sample_of(tasks, jobs)
                  for p in occupancy_levels(access.arch(t), access.num_warps(t))[-1:]]
        guard(level_count(tasks, access), yes, max_compiles, sample, compile_fn)
        return run_frontier(tasks, compile_fn, access)


@app.command()
@handles_errors
def frontier(
    strategies: StrategiesOpt = None,
    variant: VariantOpt = None,
    arch: ArchOpt = None,
    block_m: BlockMGrid = None,
    block_n: BlockNGrid = None,
    head_dim: HeadDimGrid = None,
    num_warps: NumWarpsGrid = None,
    num_stages: NumStagesGrid = None,
    matrix_instr_nonkdim: NonKDimGrid = None,
    kpack: KpackGrid = None,
    knob: KnobGrid = None,
    dtype: DtypeGrid = None,
    causal: CausalOpt = False,
    sort: FrontierSortOpt = None,
    format: FormatOpt = Format.table,
    output: OutputOpt = None,
    wide: WideOpt = False,
    jobs: JobsOpt = None,
    kernel_dir: KernelDirOpt = None,
    no_cache: NoCacheOpt = False,
    yes: YesOpt = False,
    max_compiles: MaxCompilesOpt = None,
    scheduler: SchedulerOpt = None,
    capture: CaptureOpt = None,
) -> None:
    """The highest occupancy each kernel reaches without spilling, and the price of the next level.

    Each kernel is compiled at every occupancy level of its arch (AMD: waves_per_eu 1..max; NVIDIA: maxnreg
    at each blocks/SM step, then the smallest spill-free maxnreg by bisection): spills, scratch and the
    limiter per level."""
    from ..report import frontier_view as view
    from ..report.machine import compile_only
    from .grid import grid_requests

    requests = grid_requests(block_m=block_m, block_n=block_n, head_dim=head_dim, dtype=dtype, causal=causal,
                             num_warps=num_warps, num_stages=num_stages, matrix_instr_nonkdim=matrix_instr_nonkdim,
                             kpack=kpack, knob=knob)
    names = list(strategies or []) + list(variant or [])
    frontiers = compute_frontier(names, arch, requests, jobs=jobs, use_cache=not no_cache, kernel_dir=kernel_dir,
                                 yes=yes, max_compiles=max_compiles, scheduler=scheduler, capture=capture)
    frontiers = sort_frontiers(frontiers, sort)
    failed = sum(1 for kf in frontiers for lv in kf.levels if not lv.ok)
    total = sum(len(kf.levels) for kf in frontiers)
    if failed:
        err(f"{failed} of {total} levels did not compile or cannot launch (see their status)")
    machine = compile_only()
    renderers = {
        Format.table: lambda: view.tables_text(frontiers, machine, wide=wide),
        Format.md: lambda: view.tables_md(frontiers, machine, "vgprscope frontier"),
        Format.json: lambda: view.to_json(frontiers, machine),
        Format.csv: lambda: view.to_csv(frontiers),
    }
    emit(renderers[format](), output)
    if total and failed == total:
        err("no level of any kernel compiled")
        raise typer.Exit(1)
