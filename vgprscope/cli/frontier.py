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


def sort_frontiers(frontiers, metric: str | None):
    from ..library.tasks import sort_frontiers as library_sort

    return library_sort(frontiers, metric)


def compute_frontier(variants, arch, requests, *, jobs=None, use_cache=True, kernel_dir=None, yes=False,
                     max_compiles=None, scheduler=None, capture=None):
    """The library's frontier of a selection (grid guard, then every level compiled), with a progress bar."""
    from ..library.tasks import Selection, frontier_of
    from .progress import compile_progress

    # a capture alone: its kernels only, as analyze does; the frontier sets the launch options itself
    sel = Selection.of(variants, arch, requests, kernel_dir, capture, overrides=False)
    with compile_progress() as progress:
        return frontier_of(sel, jobs=jobs, use_cache=use_cache, yes=yes, max_compiles=max_compiles,
                           scheduler=scheduler, on_progress=progress)


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
