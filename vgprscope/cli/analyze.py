"""``vgprscope analyze``: compile variants x archs x configs and print what the compiler allocated."""

from __future__ import annotations

import typer

from ..core.exit_codes import FAILURE, SUCCESS
from .common import emit, err, handles_errors, headed, in_project
from .options import (
    Compiles,
    Format,
    FormatOpt,
    Grid,
    Kernels,
    Large,
    Output,
    PlotOpt,
    SortOpt,
    Toolchains,
    Warnings,
    bundled,
)


def render(records, fmt: Format, command: str, title: str | None = None, wide: bool = False,
           by_kernel: bool = False, machine=None, refused=()) -> str:
    """Records in ``fmt``. ``by_kernel``: rows named by kernel, the file beside it (scan), rather than
    by variant and kernel; ``machine``: the result's (its header's notes with it); ``refused``: the rows the
    kernels' source does not take (a note each)."""
    from ..analysis.analyze import view as records_view
    from ..report.machine import compile_only

    machine = machine or compile_only()
    if fmt is Format.json:
        return records_view.to_json(records, machine, command, refused=refused)
    if fmt is Format.csv:
        return records_view.to_csv(records)
    if fmt is Format.md:
        return records_view.to_markdown(records, machine, title=title, refused=refused)
    if fmt is Format.html:
        from .common import command_line

        return records_view.to_html(records, machine, command_line(), title=title or f"vgprscope {command}",
                                    refused=refused)
    naming = records_view.SCAN if by_kernel else records_view.ANALYZE
    return records_view.table_text(records, machine, title=title, wide=wide, naming=naming, refused=refused)


def reads_loops(fmt: Format, out: Output, sort: str | None = None) -> bool:
    """Whether the output shows the hot loop's matrix share and lines (every field of JSON, CSV and markdown,
    --wide's columns, a sort by one): else the compile leaves them unread where they cost a disassembly."""
    return fmt is not Format.table or out.wide or bool(sort and "loop" in sort)


def summarize_failures(records, refused=()) -> int:
    """One stderr line on the rows that did not compile; the exit code: 1 when none did, else 0. ``refused``:
    the rows the kernels' source does not take; when they are all there is, nothing compiled (exit 1)."""
    from ..report.refusals import refusals
    from .common import nothing_compiled

    if refused and not records:
        err(f"error: no row compiled: {'; '.join(refusals(refused))}")
        return 1
    failed = [r for r in records if not r.ok]
    if records and len(failed) == len(records):
        err(nothing_compiled([r.status for r in records]))
        return FAILURE
    if failed:
        err(f"{len(failed)} of {len(records)} rows did not compile or cannot launch (see their status)")
    return SUCCESS


def history_output(result, fmt: Format, out: Output, plot_path) -> None:
    """Several toolchains: each kernel's resources release by release (oldest first)."""
    from ..analysis.history import view as history_view
    from .common import command_line

    rows = result.history()
    text = {Format.table: lambda: history_view.to_table(rows, result.machine, wide=out.wide),
            Format.json: lambda: history_view.to_json(rows, result.machine),
            Format.csv: lambda: history_view.to_csv(rows),
            Format.md: lambda: history_view.to_markdown(rows, result.machine),
            Format.html: lambda: result.to_html(command=command_line())}[fmt]()
    emit(text, out.output)
    if plot_path is not None:
        err(f"wrote {history_view.plot(rows, plot_path)}")
    if result.records and all(not r.ok for r in result.records):
        err("error: no row compiled under any of the toolchains")
        raise typer.Exit(FAILURE)


def _plot_needs_a_history(specs: list[str]) -> None:
    """--plot draws releases side by side: with one Triton there is nothing to draw (refused before compiling)."""
    from ..compile.toolchains import is_range
    from ..core.errors import UsageError

    if len(specs) < 2 and not any(is_range(s) for s in specs):
        raise UsageError("--plot draws each kernel release by release; give several Tritons (--triton 3.7.0 "
                         "--triton 3.9.0) or a range (--triton 3.4.0..3.9.0)")


@handles_errors
@bundled
def analyze(*, kernels: Kernels, grid: Grid, sort: SortOpt = None, format: FormatOpt = Format.table, out: Output,
            run: Compiles, warn: Warnings, large: Large, tc: Toolchains, plot: PlotOpt = None) -> None:
    """Registers, spills, LDS and occupancy of each variant on each arch, compiled here without a GPU.

    Several values of a config option make a grid: every combination is compiled. Several --triton (or a
    range, 3.4.0..3.9.0) give each kernel's history, release by release."""
    from ..core.fsutil import check_writable
    from ..library import api
    from .progress import compile_progress

    if plot is not None:  # before minutes of compiling, not after
        from ..core.extras import require_matplotlib

        check_writable(plot)
        _plot_needs_a_history(tc.triton or [])
        require_matplotlib("analyze --plot")
    selection, note = in_project(kernels.library())
    with compile_progress() as progress:
        result = api.analyze(**selection, **grid.library(), sort=sort, **tc.library(), **run.library(),
                             **warn.library(), **large.library(), on_progress=progress,
                             loops=reads_loops(format, out, sort))
    result = headed(result, note)
    if len(result.toolchains) > 1:
        history_output(result, format, out, plot)
        return
    code = summarize_failures(result.records, result.refused)
    emit(render(list(result.records), format, "analyze", title="vgprscope analyze", wide=out.wide,
                machine=result.machine, refused=result.refused), out.output)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(analyze)
