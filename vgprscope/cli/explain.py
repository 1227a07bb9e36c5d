"""``vgprscope explain``: where the registers go (tensors live across each loop) and where the spills are."""

from __future__ import annotations

import typer

from ..core.exit_codes import FAILURE
from .common import command_line, emit, err, handles_errors, headed, in_project
from .options import Compiles, ExplainFormat, ExplainFormatOpt, Grid, Kernels, Output, Toolchains, bundled


@handles_errors
@bundled
def explain(*, kernels: Kernels, grid: Grid, format: ExplainFormatOpt = ExplainFormat.table, out: Output,
            run: Compiles, tc: Toolchains) -> None:
    """Where the registers go: registers per live tensor of each loop, and spill sites by source line.

    Live tensors come from TTGIR and their layouts, beside the allocation and seed 001's estimate (default
    variant: baseline; with --capture, the captured kernels, and the variants too when --variant is given;
    launch options such as --num-warps or --waves-per-eu apply to the captured launches, as in analyze).
    Several values of a config option explain each combination."""
    from ..library import api
    from .progress import compile_progress

    selection, note = in_project(kernels.library())
    with compile_progress() as progress:
        result = api.explain(**selection, **grid.library(), **tc.library(), **run.library(),
                             on_progress=progress)
    result = headed(result, note)
    explanations = result.explanations
    failed = [e for e in explanations if not e.ok]
    if failed:
        err(f"{len(failed)} of {len(explanations)} kernels could not be explained (see their error)")
    renderers = {
        ExplainFormat.table: lambda: result.table(wide=out.wide),
        ExplainFormat.md: lambda: result.markdown("vgprscope explain", command_line()),
        ExplainFormat.json: result.to_json,
        ExplainFormat.sarif: result.to_sarif,
        ExplainFormat.html: lambda: result.to_html(command=command_line()),
    }
    emit(renderers[format](), out.output)
    if explanations and len(failed) == len(explanations):
        raise typer.Exit(FAILURE)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(explain)
