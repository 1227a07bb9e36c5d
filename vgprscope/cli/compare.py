"""``vgprscope compare``: every strategy side by side per arch, with its change against baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import app
from .capture import CaptureOpt
from .common import WideOpt
from .common import (
    ArchOpt, BlockMOpt, BlockNOpt, CausalOpt, Dtype, DtypeOpt, Format, FormatOpt, HeadDimOpt, JobsOpt, KernelDirOpt,
    KnobOpt, KpackOpt, MaxnregOpt, NoCacheOpt, NonKDimOpt, NumStagesOpt, NumWarpsOpt, OutputOpt, WavesPerEuOpt, emit, err,
    handles_errors, nonempty_names,
)
from .grid import (
    BlockMGrid, BlockNGrid, DtypeGrid, HeadDimGrid, KnobGrid, KpackGrid, MaxCompilesOpt, MaxnregGrid, NonKDimGrid,
    NumStagesGrid, NumWarpsGrid, SchedulerOpt, WavesPerEuGrid, YesOpt,
)

StrategiesOpt = Annotated[
    Optional[list[str]], typer.Option("--strategies", "-s", callback=nonempty_names, help="'all' or a comma list of variants [default: all]")
]
ShapeOpt = Annotated[str, typer.Option("--shape", help="B,H,Nq,Nk of the traffic model's reference problem")]


def _bench_columns(records, requests, shape, jobs):
    """Time the variants on this GPU (its arch only) for compare --bench, at every grid point; the columns
    are keyed like the tables (the arch, then the point's label in a grid). None without a GPU."""
    from dataclasses import replace

    from ..bench.cases import Case
    from ..bench.device import current_gpu
    from ..bench.runner import BenchOptions, run_bench
    from ..errors import NoGpuError
    from .grid import point_label, varying_axes

    try:
        gpu = current_gpu()
    except NoGpuError as exc:
        err(f"warning: {exc}; showing compile-only columns (run compare --bench on a GPU machine)")
        return None, (), None
    names = tuple(dict.fromkeys(r.variant for r in records))
    headers = ("time (ms)", "TFLOP/s", "GB/s")
    axes = varying_axes(requests) if len(requests) > 1 else ()
    out = {}
    for req in requests:
        case = Case.of(shape, req.head_dim, req.causal, req.dtype)
        rows = run_bench(gpu, [case], BenchOptions(variants=names, request=replace(req), anchors=False))
        label = point_label(req, axes) if axes else ""
        out[f"{gpu.arch.name}{' ' + label if label else ''}"] = {
            r.name: dict(zip(headers, [r.timing.label() if r.timing else r.status,
                                       f"{r.tflops:.1f}" if r.tflops else "-", f"{r.gbps:.0f}" if r.gbps else "-"]))
            for r in rows}
    from ..bench.device import machine

    return out, headers, machine(gpu)


def _keyed(point: str, per_arch: dict) -> dict:
    """Per-arch tables of one grid point, titled by the arch and (in a grid) what the point sets."""
    return {f"{arch}{' ' + point if point else ''}": lines for arch, lines in per_arch.items()}


def _frontier_columns(per_arch, strategies, arch, requests, **kw):
    """Each variant line with its frontier, and the two columns compare shows for it."""
    from ..library.tasks import FRONTIER_HEADERS, frontier_cells, with_frontiers
    from .frontier import compute_frontier

    out = with_frontiers(per_arch, compute_frontier(strategies, arch, requests, **kw))
    return out, frontier_cells(out), FRONTIER_HEADERS


def _merge_extra(per_arch, a, a_headers, b, b_headers):
    """The frontier's columns and the timings' (keyed by arch) on each table's variant lines, '-' where a
    line has none."""
    headers = tuple(a_headers) + tuple(b_headers)
    if not headers:
        return None, ()
    merged: dict = {}
    for key, lines in per_arch.items():
        for ln in lines:
            left = ((a or {}).get(key, {}).get(ln.variant) or dict.fromkeys(a_headers, "-")) if a_headers else {}
            right = ((b or {}).get(key, {}).get(ln.variant) or dict.fromkeys(b_headers, "-")) if b_headers else {}
            merged.setdefault(key, {})[ln.variant] = {**left, **right}
    return merged, headers


@app.command()
@handles_errors
def compare(
    strategies: StrategiesOpt = None,
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
    shape: ShapeOpt = "4,32,4096,4096",
    bench: Annotated[bool, typer.Option("--bench", help="Add timings on this GPU (compile-only without one)")] = False,
    frontier: Annotated[bool, typer.Option(
        "--frontier", help="Compile every occupancy level too: each strategy's spill-free occupancy and the "
        "spills at the next level")] = False,
    sort: Annotated[Optional[str], typer.Option(
        "--sort", help="Order each table best first: regs, spills, scratch, lds, occupancy, spill_free_occupancy")] = None,
    yes: YesOpt = False,
    max_compiles: MaxCompilesOpt = None,
    scheduler: SchedulerOpt = None,
    format: FormatOpt = Format.table,
    output: OutputOpt = None,
    jobs: JobsOpt = None,
    kernel_dir: KernelDirOpt = None,
    no_cache: NoCacheOpt = False,
    wide: WideOpt = False,
    capture: CaptureOpt = None,
) -> None:
    """Each strategy's registers, spills, LDS, occupancy and memory traffic, with deltas against baseline."""
    from ..attention.traffic import line_traffic
    from ..attention.variants import load_variants
    from ..bench.cases import parse_shape
    from ..compare import compare as compare_lines
    from ..report import compare_view as view
    from ..report.machine import compile_only
    from ..grid import sort_lines
    from .analyze import summarize_failures
    from .grid import grid_requests, guarded_sweep, per_request

    ref_shape = parse_shape(shape)
    requests = grid_requests(block_m=block_m, block_n=block_n, head_dim=head_dim, dtype=dtype, causal=causal,
                             num_warps=num_warps, num_stages=num_stages, waves_per_eu=waves_per_eu,
                             matrix_instr_nonkdim=matrix_instr_nonkdim, kpack=kpack, maxnreg=maxnreg, knob=knob,
                             shape=ref_shape)
    records = guarded_sweep(strategies, arch, requests, jobs=jobs, use_cache=not no_cache, kernel_dir=kernel_dir,
                            yes=yes, max_compiles=max_compiles, scheduler=scheduler, capture=capture)
    code = summarize_failures(records)
    # the variants' traffic model on their lines (the kernel directory's variants, or the bundled ones)
    traffic = line_traffic(load_variants(Path(kernel_dir).resolve()).values() if kernel_dir else None)
    # one table per arch (and per grid point: each compared with the baseline of the same request)
    per_arch = {key: lines for key, recs in per_request(strategies, arch, requests, records, kernel_dir).items()
                for key, lines in _keyed(key, compare_lines(recs, traffic)).items()}
    extra, headers, gpu_machine, b_extra = (None, (), None, None)
    if frontier:
        per_arch, extra, headers = _frontier_columns(per_arch, strategies, arch, requests, jobs=jobs,
                                                     use_cache=not no_cache, kernel_dir=kernel_dir, yes=yes,
                                                     max_compiles=max_compiles, scheduler=scheduler)
    per_arch = sort_lines(per_arch, sort)
    if bench:
        b_extra, b_headers, gpu_machine = _bench_columns(records, requests, ref_shape, jobs)
        extra, headers = _merge_extra(per_arch, extra, headers, b_extra, b_headers)
    machine = gpu_machine or compile_only()  # the GPU's line when timings came from it
    renderers = {
        Format.table: lambda: view.tables_text(per_arch, machine, headers, extra, wide=wide),
        Format.md: lambda: view.tables_md(per_arch, machine, "vgprscope compare", headers, extra),
        Format.json: lambda: view.to_json(per_arch, machine, b_extra),  # the frontier has its own key
        Format.csv: lambda: view.to_csv(per_arch),
    }
    emit(renderers[format](), output)
    if code:
        raise typer.Exit(code)
