"""``vgprscope diff``: the same kernels under two Triton releases, or one release with and without a compiler
setting, judged by the gate's rules."""

from __future__ import annotations

import typer

from .common import command_line, emit, err, handles_errors, headed, in_project
from .options import (
    Compiles,
    DiffFormat,
    DiffFormatOpt,
    Grid,
    Kernels,
    Output,
    Rules,
    SchedulerOpt,
    Toolchains,
    bundled,
)


@handles_errors
@bundled
def diff(*, tc: Toolchains, kernels: Kernels, grid: Grid, rules: Rules, format: DiffFormatOpt = DiffFormat.table,
         out: Output, run: Compiles, scheduler: SchedulerOpt = None) -> None:
    """What the next Triton (or a compiler setting) does to the same kernels, before you upgrade.

    Two sides: --triton A --triton B; or one --triton (or the installed one) with and without --set
    NAME=VALUE. Each side compiles the same kernels from their current source; the second is judged by the gate's
    rules (as `check`, pyproject included). Exit 1: a regression; 0: none; 2: nothing could be compared, or a side
    could not compile a kernel from its current source (the summary says which side and why)."""
    from ..library import api
    from .progress import compile_progress

    selection, note = in_project(kernels.library(), rules.config)
    with compile_progress() as progress:
        result = api.diff(**tc.library(), **selection, **grid.library(), rule=rules.rule, config=rules.config,
                          fail_on_change=rules.fail_on_change, strict=rules.strict, **run.library(), scheduler=scheduler,
                          on_progress=progress)
    result = headed(result, note)
    render = {DiffFormat.table: lambda: result.table(wide=out.wide), DiffFormat.md: result.markdown,
              DiffFormat.json: result.to_json, DiffFormat.csv: result.to_csv, DiffFormat.sarif: result.to_sarif,
              DiffFormat.html: lambda: result.to_html(command=command_line())}
    emit(render[format](), out.output)
    if format is not DiffFormat.table or out.output is not None:  # the table ends with it already
        err(result.summary())
    if result.compared == 0:
        err("error: nothing could be compared: no kernel compiled on both sides")
    raise typer.Exit(result.exit_code)  # no verdict where a side could not read a kernel's current source


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(diff)
