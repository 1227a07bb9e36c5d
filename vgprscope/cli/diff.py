"""``vgprscope diff``: the same kernels under two Triton releases, or one release with and without a compiler
setting, judged by the gate's rules; ``vgprscope toolchains``: the releases vgprscope has installed."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import app
from .capture import CaptureOpt
from .common import ArchOpt, CausalOpt, JobsOpt, KernelDirOpt, NoCacheOpt, OutputOpt, VariantOpt, emit, err, handles_errors
from .grid import (
    BlockMGrid, BlockNGrid, DtypeGrid, HeadDimGrid, KnobGrid, KpackGrid, MaxnregGrid, NonKDimGrid, NumStagesGrid,
    NumWarpsGrid, SchedulerOpt, WavesPerEuGrid,
)

TritonOpt = Annotated[Optional[list[str]], typer.Option(
    "--triton", "-t", metavar="VERSION|A..B|PATH",
    help="A Triton to compile with: a release (3.8.0; installed once into vgprscope's cache), a range of "
         "releases (3.4.0..3.9.0), or a Python environment that has Triton; repeatable")]
SetOpt = Annotated[Optional[list[str]], typer.Option(
    "--set", "-s", metavar="NAME=VALUE",
    help="A compiler setting (an environment variable Triton reads, e.g. TRITON_HIP_USE_BLOCK_PINGPONG=1) of "
         "the second side; repeatable")]


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


def parse_settings(items: list[str] | None) -> dict[str, str]:
    from ..errors import UsageError

    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not name.strip().replace("_", "").isalnum():
            raise UsageError(f"setting {item!r} is not NAME=VALUE (an environment variable Triton reads, e.g. "
                             "TRITON_HIP_USE_BLOCK_PINGPONG=1)")
        out[name.strip()] = value
    return out


def _say(text: str) -> None:
    err(text)


def resolve_toolchains(specs: list[str] | None, settings: list[str] | None) -> list:
    """The toolchains of --triton (ranges expanded, releases installed on first use), each with --set's
    settings; [] for the installed Triton as is."""
    from ..compile import toolchains

    if not specs and not settings:
        return []
    found = [toolchains.resolve(s, _say) for s in toolchains.expand(list(specs or ["installed"]))]
    extra = parse_settings(settings)
    return [tc.with_settings(extra) if extra else tc for tc in found]


def history_output(records, sides, fmt, output, wide: bool, plot_path: Path | None) -> None:
    """Several toolchains: each kernel's resources release by release (oldest first)."""
    from .. import history_view
    from ..history import history
    from ..report.machine import compile_only

    by_side: dict[str, list] = {tc.label: [] for tc in sides}
    for r in records:
        by_side.setdefault(r.toolchain or sides[0].label, []).append(r)
    rows = history(list(by_side.items()))
    machine = compile_only()
    name = getattr(fmt, "value", str(fmt))
    text = {"table": lambda: history_view.to_table(rows, machine, wide=wide),
            "json": lambda: history_view.to_json(rows, machine),
            "csv": lambda: history_view.to_csv(rows),
            "md": lambda: history_view.to_markdown(rows, machine)}[name]()
    emit(text, output)
    if plot_path is not None:
        err(f"wrote {history_view.plot(rows, plot_path)}")
    if records and all(not r.ok for r in records):
        err("error: no row compiled under any of the toolchains")
        raise typer.Exit(1)


@app.command()
@handles_errors
def diff(
    triton: TritonOpt = None,
    setting: SetOpt = None,
    variant: VariantOpt = None,
    arch: ArchOpt = None,
    capture: CaptureOpt = None,
    kernel_dir: KernelDirOpt = None,
    block_m: BlockMGrid = None,
    block_n: BlockNGrid = None,
    head_dim: HeadDimGrid = None,
    num_warps: NumWarpsGrid = None,
    num_stages: NumStagesGrid = None,
    waves_per_eu: WavesPerEuGrid = None,
    matrix_instr_nonkdim: NonKDimGrid = None,
    kpack: KpackGrid = None,
    maxnreg: MaxnregGrid = None,
    knob: KnobGrid = None,
    dtype: DtypeGrid = None,
    causal: CausalOpt = False,
    rule: Annotated[Optional[list[str]], typer.Option(
        "--rule", "-r", help="\\[VARIANT:]METRIC:TOLERANCE, repeatable, as for `vgprscope check`")] = None,
    config: Annotated[Optional[Path], typer.Option(
        "--config", help="TOML file with the rules (\\[tool.vgprscope]) \\[default: the nearest pyproject.toml]")] = None,
    fail_on_change: Annotated[bool, typer.Option("--fail-on-change", help="Fail on any change")] = False,
    format: Annotated[DiffFormat, typer.Option("--format", "-f", help="Output format")] = DiffFormat.table,
    output: OutputOpt = None,
    wide: Annotated[bool, typer.Option("--wide", help="Table: every column, each row on one line")] = False,
    jobs: JobsOpt = None,
    no_cache: NoCacheOpt = False,
    scheduler: SchedulerOpt = None,
) -> None:
    """What the next Triton (or a compiler setting) does to the same kernels, before you upgrade.

    Two sides: --triton A --triton B; or one --triton (or the installed one) with and without --set
    NAME=VALUE. Each side compiles the same kernels; the second is judged by the gate's rules (as `check`,
    pyproject included). Exit 1: a regression; 0: none; 2: nothing could be compared."""
    from ..diff import run_diff
    from ..report.machine import compile_only
    from .grid import grid_requests

    requests = grid_requests(block_m=block_m, block_n=block_n, head_dim=head_dim, dtype=dtype, causal=causal,
                             num_warps=num_warps, num_stages=num_stages, waves_per_eu=waves_per_eu,
                             matrix_instr_nonkdim=matrix_instr_nonkdim, kpack=kpack, maxnreg=maxnreg, knob=knob)
    result = run_diff(triton or [], parse_settings(setting), variant, arch, requests, capture=capture,
                      kernel_dir=kernel_dir, rules=rule or [], config=config, fail_on_change=fail_on_change,
                      jobs=jobs, use_cache=not no_cache, scheduler=scheduler, say=_say)
    from .. import diff_view

    machine = compile_only()
    render = {DiffFormat.table: lambda: diff_view.to_table(result, machine, wide=wide),
              DiffFormat.md: lambda: diff_view.to_markdown(result, machine),
              DiffFormat.json: lambda: diff_view.to_json(result, machine),
              DiffFormat.csv: lambda: diff_view.to_csv(result)}
    emit(render[format](), output)
    if format is not DiffFormat.table or output is not None:  # the table ends with it already
        err(result.summary())
    if result.compared == 0:
        err("error: nothing could be compared: no kernel compiled on both sides")
        raise typer.Exit(2)
    raise typer.Exit(0 if result.passed else 1)


toolchains_app = typer.Typer(help="The Triton releases vgprscope has installed to compile with.",
                             no_args_is_help=False, invoke_without_command=True)
app.add_typer(toolchains_app, name="toolchains")


@toolchains_app.callback()
@handles_errors
def toolchains_list(ctx: typer.Context) -> None:
    """List the installed Triton toolchains (version, size, path); `toolchains remove VERSION` deletes one."""
    if ctx.invoked_subcommand is not None:
        return
    from ..compile import toolchains

    rows = toolchains.list_installed()
    if not rows:
        err(f"no Triton toolchain installed yet in {toolchains.store()} (`--triton VERSION` installs one)")
        return
    lines = [f"{'Triton':<10} {'MB':>6}  path"]
    for tc, size in rows:
        lines.append(f"{tc.version:<10} {size / 2**20:>6.0f}  {Path(tc.python).parent.parent}")
    emit("\n".join(lines), None)


@toolchains_app.command("remove")
@handles_errors
def toolchains_remove(version: Annotated[str, typer.Argument(help="The release to delete, e.g. 3.8.0")]) -> None:
    """Delete an installed Triton toolchain."""
    from ..compile import toolchains

    where = toolchains.remove(version)
    err(f"removed Triton {version} ({where})")
