"""``vgprscope frontier``: the highest occupancy each kernel reaches without spilling, and the next level's price."""

from __future__ import annotations

import typer

from ..core.exit_codes import FAILURE
from .common import command_line, emit, err, handles_errors, headed, in_project
from .options import (
    Compiles,
    Format,
    FormatOpt,
    FrontierGrid,
    Kernels,
    Large,
    Output,
    SortOpt,
    StrategiesOpt,
    Toolchains,
    bundled,
)


@handles_errors
@bundled
def frontier(*, strategies: StrategiesOpt = None, kernels: Kernels, grid: FrontierGrid, sort: SortOpt = None,
             format: FormatOpt = Format.table, out: Output, run: Compiles, large: Large, tc: Toolchains) -> None:
    """The highest occupancy each kernel reaches without spilling, and the price of the next level.

    Each kernel is compiled at every occupancy level of its arch (AMD: waves_per_eu 1..max; NVIDIA: maxnreg
    at each blocks/SM step, then the smallest spill-free maxnreg by bisection): spills, scratch and the
    limiter per level. A variant that declares a register-split knob (VARIANT['frontier_knob']: ws-regalloc's
    producer_regs) is compiled at each of its settings instead (or those -k gives): each partition's registers,
    spills and stack per split, and the splits that are spill-free."""
    from ..library import api
    from .progress import compile_progress

    given = kernels.library()  # --strategies names variants too
    given["variant"] = [*(strategies or []), *(given.get("variant") or [])] or None
    selection, note = in_project(given)
    with compile_progress() as progress:
        result = api.frontier(**selection, **grid.library(), sort=sort,
                              **tc.library(), **run.library(), **large.library(), on_progress=progress)
    result = headed(result, note)
    frontiers = result.frontiers
    failed = sum(1 for kf in frontiers for lv in kf.levels if not lv.ok)
    total = sum(len(kf.levels) for kf in frontiers)
    if failed:
        err(f"{failed} of {total} levels did not compile or cannot launch (see their status)")
    renderers = {
        Format.table: lambda: result.table(wide=out.wide),
        Format.md: result.markdown,
        Format.json: result.to_json,
        Format.csv: result.to_csv,
        Format.html: lambda: result.to_html(command=command_line()),
    }
    emit(renderers[format](), out.output)
    if total and failed == total:
        err("no level of any kernel compiled")
        raise typer.Exit(FAILURE)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(frontier)
