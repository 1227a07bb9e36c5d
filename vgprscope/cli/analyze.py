"""``vgprscope analyze``: compile variants x archs x configs and print what the compiler allocated."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import app
from .diff import SetOpt, TritonOpt, history_output, resolve_toolchains
from .capture import CaptureOpt
from .common import (
    ArchOpt, BlockMOpt, BlockNOpt, CausalOpt, Dtype, DtypeOpt, Format, FormatOpt, HeadDimOpt, JobsOpt,
    KernelDirOpt, KnobOpt, KpackOpt, MaxnregOpt, NoCacheOpt, NonKDimOpt, NumStagesOpt, NumWarpsOpt, OutputOpt, VariantOpt,
    WavesPerEuOpt, WideOpt, emit, err, handles_errors,
)
from .grid import (
    BlockMGrid, BlockNGrid, DtypeGrid, HeadDimGrid, KnobGrid, KpackGrid, MaxCompilesOpt, MaxnregGrid, NonKDimGrid,
    NumStagesGrid, NumWarpsGrid, SchedulerOpt, SortOpt, WavesPerEuGrid, YesOpt,
)


def config_request(block_m, block_n, head_dim, dtype, causal, num_warps, num_stages, waves_per_eu,
                   matrix_instr_nonkdim, kpack, maxnreg, knobs=None):
    from ..attention.config import ConfigRequest, parse_knobs

    return ConfigRequest(block_m=block_m, block_n=block_n, head_dim=head_dim, dtype=dtype.value, causal=causal,
                         num_warps=num_warps, num_stages=num_stages, waves_per_eu=waves_per_eu,
                         matrix_instr_nonkdim=matrix_instr_nonkdim, kpack=kpack, maxnreg=maxnreg,
                         extra=parse_knobs(knobs))


def render(records, fmt: Format, command: str, title: str | None = None, wide: bool = False,
           by_kernel: bool = False) -> str:
    """Records in ``fmt``. ``by_kernel``: rows named by kernel, the file beside it (scan), rather than
    by variant and kernel."""
    from ..report import formats, records_view
    from ..report.machine import compile_only

    machine = compile_only()
    if fmt is Format.json:
        return formats.to_json(records, machine, command)
    if fmt is Format.csv:
        return formats.to_csv(records)
    if fmt is Format.md:
        return records_view.to_markdown(records, machine, title=title)
    naming = records_view.SCAN if by_kernel else records_view.ANALYZE
    return records_view.table_text(records, machine, title=title, wide=wide, naming=naming)


def summarize_failures(records) -> int:
    """One stderr line on the rows that did not compile; the exit code: 1 when none did, else 0."""
    from .common import nothing_compiled

    failed = [r for r in records if not r.ok]
    if records and len(failed) == len(records):
        err(nothing_compiled([r.status for r in records]))
        return 1
    if failed:
        err(f"{len(failed)} of {len(records)} rows did not compile or cannot launch (see their status)")
    return 0


@app.command()
@handles_errors
def analyze(
    variant: VariantOpt = None,
    arch: ArchOpt = None,
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
    sort: SortOpt = None,
    format: FormatOpt = Format.table,
    output: OutputOpt = None,
    jobs: JobsOpt = None,
    kernel_dir: KernelDirOpt = None,
    no_cache: NoCacheOpt = False,
    wide: WideOpt = False,
    capture: CaptureOpt = None,
    yes: YesOpt = False,
    max_compiles: MaxCompilesOpt = None,
    scheduler: SchedulerOpt = None,
    triton: TritonOpt = None,
    setting: SetOpt = None,
    plot: Annotated[Optional[Path], typer.Option(
        "--plot", help="With several --triton: a PNG of registers and spills per release per kernel")] = None,
) -> None:
    """Registers, spills, LDS and occupancy of each variant on each arch, compiled here without a GPU.

    Several values of a config option make a grid: every combination is compiled. Several --triton (or a
    range, 3.4.0..3.9.0) give each kernel's history, release by release."""
    from ..grid import group_records, sort_records
    from .grid import grid_requests, guarded_sweep

    requests = grid_requests(block_m=block_m, block_n=block_n, head_dim=head_dim, dtype=dtype, causal=causal,
                             num_warps=num_warps, num_stages=num_stages, waves_per_eu=waves_per_eu,
                             matrix_instr_nonkdim=matrix_instr_nonkdim, kpack=kpack, maxnreg=maxnreg, knob=knob)
    sides = resolve_toolchains(triton, setting)
    records = guarded_sweep(variant, arch, requests, jobs=jobs, use_cache=not no_cache, kernel_dir=kernel_dir,
                            yes=yes, max_compiles=max_compiles, scheduler=scheduler, capture=capture,
                            toolchains=sides)
    if len(sides) > 1:
        history_output(records, sides, format, output, wide, plot)
        return
    records = sort_records(group_records(records) if len(requests) > 1 else records, sort)
    code = summarize_failures(records)
    emit(render(records, format, "analyze", title="vgprscope analyze", wide=wide), output)
    if code:
        raise typer.Exit(code)
