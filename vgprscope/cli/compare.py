"""``vgprscope compare``: every strategy side by side per arch, with its change against baseline."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .analyze import config_request
from .app import app
from .common import WideOpt
from .common import (
    ArchOpt, BlockMOpt, BlockNOpt, CausalOpt, Dtype, DtypeOpt, Format, FormatOpt, HeadDimOpt, JobsOpt, KernelDirOpt,
    KnobOpt, KpackOpt, MaxnregOpt, NoCacheOpt, NonKDimOpt, NumStagesOpt, NumWarpsOpt, OutputOpt, WavesPerEuOpt, emit, err,
    handles_errors, nonempty_names,
)

StrategiesOpt = Annotated[
    Optional[list[str]], typer.Option("--strategies", "-s", callback=nonempty_names, help="'all' or a comma list of variants [default: all]")
]
ShapeOpt = Annotated[str, typer.Option("--shape", help="B,H,Nq,Nk of the traffic model's reference problem")]


def _bench_columns(records, req, shape, jobs):
    """Time the variants on this GPU (its arch only) for compare --bench; None without a GPU."""
    from dataclasses import replace

    from ..bench.cases import Case
    from ..bench.device import current_gpu
    from ..bench.runner import BenchOptions, run_bench
    from ..errors import NoGpuError

    try:
        gpu = current_gpu()
    except NoGpuError as exc:
        err(f"warning: {exc}; showing compile-only columns (run compare --bench on a GPU machine)")
        return None, (), None
    names = tuple(dict.fromkeys(r.variant for r in records))
    case = Case.of(shape, req.head_dim, req.causal, req.dtype)
    rows = run_bench(gpu, [case], BenchOptions(variants=names, request=replace(req), anchors=False))
    headers = ("time (ms)", "TFLOP/s", "GB/s")
    cols = {r.name: dict(zip(headers, [r.timing.label() if r.timing else r.status,
                                       f"{r.tflops:.1f}" if r.tflops else "-", f"{r.gbps:.0f}" if r.gbps else "-"]))
            for r in rows}
    from ..bench.device import machine

    return {gpu.arch.name: cols}, headers, machine(gpu)


@app.command()
@handles_errors
def compare(
    strategies: StrategiesOpt = None,
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
    shape: ShapeOpt = "4,32,4096,4096",
    bench: Annotated[bool, typer.Option("--bench", help="Add timings on this GPU (compile-only without one)")] = False,
    format: FormatOpt = Format.table,
    output: OutputOpt = None,
    jobs: JobsOpt = None,
    kernel_dir: KernelDirOpt = None,
    no_cache: NoCacheOpt = False,
    wide: WideOpt = False,
) -> None:
    """Each strategy's registers, spills, LDS, occupancy and memory traffic, with deltas against baseline."""
    from dataclasses import replace

    from ..bench.cases import parse_shape
    from ..compare import compare as compare_lines
    from ..report import compare_view as view
    from ..report.machine import compile_only
    from ..sweep import run_sweep
    from .analyze import summarize_failures
    from .progress import compile_progress

    ref_shape = parse_shape(shape)
    req = replace(config_request(block_m, block_n, head_dim, dtype, causal, num_warps, num_stages, waves_per_eu,
                                 matrix_instr_nonkdim, kpack, maxnreg, knob), shape=ref_shape)
    with compile_progress() as progress:
        records = run_sweep(strategies, arch, [req], jobs=jobs, use_cache=not no_cache, kernel_dir=kernel_dir,
                            on_progress=progress)
    code = summarize_failures(records)
    per_arch = compare_lines(records)
    extra, headers, gpu_machine = (None, (), None)
    if bench:
        extra, headers, gpu_machine = _bench_columns(records, req, ref_shape, jobs)
    machine = gpu_machine or compile_only()  # the GPU's line when timings came from it
    renderers = {
        Format.table: lambda: view.tables_text(per_arch, machine, headers, extra, wide=wide),
        Format.md: lambda: view.tables_md(per_arch, machine, "vgprscope compare", headers, extra),
        Format.json: lambda: view.to_json(per_arch, machine, extra),
        Format.csv: lambda: view.to_csv(per_arch),
    }
    emit(renderers[format](), output)
    if code:
        raise typer.Exit(code)
