"""``vgprscope explain``: where the registers go (tensors live across each loop) and where the spills are."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from .app import app
from .capture import CaptureOpt
from .common import (
    ArchOpt, BlockMOpt, BlockNOpt, CausalOpt, Dtype, DtypeOpt, HeadDimOpt, JobsOpt, KernelDirOpt, KnobOpt, KpackOpt,
    MaxnregOpt, NonKDimOpt, NumStagesOpt, NumWarpsOpt, OutputOpt, VariantOpt, WavesPerEuOpt, WideOpt, emit, err,
    handles_errors,
)


class ExplainFormat(str, Enum):
    table = "table"
    json = "json"
    md = "md"


ExplainFormatOpt = Annotated[ExplainFormat, typer.Option("--format", "-f", help="Output format")]


def render(explanations, fmt: ExplainFormat, command: str, wide: bool = False) -> str:
    from ..report import explain_view
    from ..report.machine import compile_only

    machine = compile_only()
    if fmt is ExplainFormat.json:
        return explain_view.to_json(explanations, machine, command)
    if fmt is ExplainFormat.md:
        return explain_view.to_markdown(explanations, machine, title="vgprscope explain", command=command)
    return explain_view.to_table(explanations, machine, wide=wide)


@app.command()
@handles_errors
def explain(
    variant: VariantOpt = None,
    arch: ArchOpt = None,
    block_m: BlockMOpt = None,
    block_n: BlockNOpt = None,
    head_dim: HeadDimOpt = 128,
    num_warps: NumWarpsOpt = None,
    num_stages: NumStagesOpt = None,
    waves_per_eu: WavesPerEuOpt = None,
    matrix_instr_nonkdim: NonKDimOpt = None,
    kpack: KpackOpt = None,
    maxnreg: MaxnregOpt = None,
    knob: KnobOpt = None,
    dtype: DtypeOpt = Dtype.fp16,
    causal: CausalOpt = False,
    format: ExplainFormatOpt = ExplainFormat.table,
    output: OutputOpt = None,
    wide: WideOpt = False,
    jobs: JobsOpt = None,
    kernel_dir: KernelDirOpt = None,
    capture: CaptureOpt = None,
) -> None:
    """Where the registers go: registers per live tensor of each loop, and spill sites by source line.

    Live tensors come from TTGIR and their layouts, beside the allocation and seed 001's estimate (default
    variant: baseline; with --capture, the captured kernels, and the variants too when --variant is given)."""
    from ..library.tasks import Selection, explain_of
    from .analyze import config_request
    from .progress import compile_progress

    req = config_request(block_m, block_n, head_dim, dtype, causal, num_warps, num_stages, waves_per_eu,
                         matrix_instr_nonkdim, kpack, maxnreg, knob)
    # without a capture, the baseline variant by default; with one, its kernels (and variants when named)
    names = variant or ([] if capture is not None else ["baseline"])
    sel = Selection.of(names, arch, [req], kernel_dir, capture, overrides=False)
    with compile_progress() as progress:
        explanations = explain_of(sel, jobs=jobs, on_progress=progress)
    failed = [e for e in explanations if not e.ok]
    if failed:
        err(f"{len(failed)} of {len(explanations)} kernels could not be explained (see their error)")
    emit(render(explanations, format, "explain", wide=wide), output)
    if explanations and len(failed) == len(explanations):
        raise typer.Exit(1)
