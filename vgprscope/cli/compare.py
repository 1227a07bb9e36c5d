"""``vgprscope compare``: every strategy side by side per arch, with its change against baseline."""

from __future__ import annotations

import typer

from .common import command_line, emit, err, handles_errors, headed, in_project
from .options import (
    BenchOpt,
    Compiles,
    Format,
    FormatOpt,
    FrontierOpt,
    Grid,
    Kernels,
    Large,
    Output,
    ShapeOpt,
    SortOpt,
    StrategiesOpt,
    Toolchains,
    bundled,
)


def reference_shape(shape: list[str] | None) -> str:
    """compare's one reference problem (the traffic model's): the default, or the one --shape given."""
    from ..core.errors import UsageError

    if not shape:
        return "4,32,4096,4096"
    if len(shape) > 1:
        raise UsageError(f"compare takes one --shape (the traffic model's reference problem); got {len(shape)}: "
                         f"{', '.join(shape)} (`vgprscope bench` times several)")
    return shape[0]


@handles_errors
@bundled
def compare(*, strategies: StrategiesOpt = None, kernels: Kernels, grid: Grid, shape: ShapeOpt = None,
            bench: BenchOpt = False, frontier: FrontierOpt = False, sort: SortOpt = None,
            format: FormatOpt = Format.table, out: Output, run: Compiles, large: Large, tc: Toolchains) -> None:
    """Each strategy's registers, spills, LDS, occupancy and memory traffic, with deltas against baseline."""
    from ..bench.cases import parse_shape
    from ..library import api
    from .analyze import reads_loops, summarize_failures
    from .progress import compile_progress

    ref_shape = parse_shape(reference_shape(shape))  # before anything compiles
    given = kernels.library()  # --strategies names variants too
    given["variant"] = [*(strategies or []), *(given.get("variant") or [])] or None
    selection, note = in_project(given)
    with compile_progress() as progress:
        result = api.compare(**selection, **grid.library(), shape=ref_shape,
                             frontier=frontier, bench=bench, sort=sort, **tc.library(), **run.library(),
                             **large.library(), on_progress=progress, loops=reads_loops(format, out, sort))
    result = headed(result, note)
    code = summarize_failures(result.records, result.refused)
    for note in result.notes:
        err(f"warning: {note}")
    renderers = {
        Format.table: lambda: result.table(wide=out.wide),
        Format.md: lambda: result.markdown("vgprscope compare"),
        Format.json: result.to_json,
        Format.csv: result.to_csv,
        Format.html: lambda: result.to_html(command=command_line()),
    }
    emit(renderers[format](), out.output)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(compare)
