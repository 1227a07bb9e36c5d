"""``vgprscope bench``: on a GPU, correctness-gated timings of the variants beside torch SDPA."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .app import app
from .common import WideOpt
from .common import (
    BlockMOpt, BlockNOpt, Dtype, DtypeOpt, Format, FormatOpt, KnobOpt, KpackOpt, MaxnregOpt, NonKDimOpt, NumStagesOpt,
    NumWarpsOpt, OutputOpt, WavesPerEuOpt, emit, err, handles_errors, nonempty_names,
)
from .grid import (
    BlockMGrid, BlockNGrid, KnobGrid, KpackGrid, MaxnregGrid, NonKDimGrid, NumStagesGrid, NumWarpsGrid, WavesPerEuGrid,
)

StrategiesOpt = Annotated[Optional[list[str]], typer.Option("--strategies", "-s", callback=nonempty_names, help="Variants: 'all' or a,b,...")]
ShapeOpt = Annotated[Optional[list[str]], typer.Option("--shape", help="B,H,Nq,Nk[,Hkv] (repeatable; Hkv: K/V heads)")]
PresetOpt = Annotated[Optional[str], typer.Option("--preset", help="prefill, decode or gqa")]
KvHeadsOpt = Annotated[Optional[int], typer.Option("--kv-heads", min=1, help="K/V heads of --shape cases that give none (grouped-query attention; must divide H) [default: H]")]
CausalBoth = Annotated[Optional[bool], typer.Option("--causal/--no-causal", help="Only causal / non-causal cases [default: as the preset]")]


@app.command()
@handles_errors
def bench(
    strategies: StrategiesOpt = None,
    shape: ShapeOpt = None,
    preset: PresetOpt = None,
    head_dim: Annotated[Optional[int], typer.Option("--head-dim", "-d", min=1, help="Head dim [default: the preset's, else 128]")] = None,
    kv_heads: KvHeadsOpt = None,
    dtype: DtypeOpt = Dtype.fp16,
    causal: CausalBoth = None,
    block_m: BlockMGrid = None,
    block_n: BlockNGrid = None,
    num_warps: NumWarpsGrid = None,
    num_stages: NumStagesGrid = None,
    waves_per_eu: WavesPerEuGrid = None,
    matrix_instr_nonkdim: NonKDimGrid = None,
    kpack: KpackGrid = None,
    maxnreg: MaxnregGrid = None,
    knob: KnobGrid = None,
    autotune: Annotated[bool, typer.Option("--autotune", help="Pick each variant's best config from a small grid")] = False,
    anchors: Annotated[bool, typer.Option("--anchors/--no-anchors", help="Time torch SDPA backends too")] = True,
    cuda_graph: Annotated[bool, typer.Option("--cuda-graph", help="Time CUDA graph replays of each launch (the GPU's time without the host's launch cost, as serving engines run decode) instead of eager calls")] = False,
    rep_ms: Annotated[float, typer.Option("--rep-ms", min=1, help="Timed milliseconds per measurement")] = 200.0,
    budget_s: Annotated[float, typer.Option("--budget-s", min=0.001, help="Skip launches the traffic model puts over this")] = 10.0,
    format: FormatOpt = Format.table,
    output: OutputOpt = None,
    wide: WideOpt = False,
) -> None:
    """Time every variant on this GPU after it passes the correctness gate, beside torch SDPA."""
    from ..bench.cases import build_cases
    from ..bench.device import current_gpu, machine
    from ..bench.output import RENDERERS
    from ..bench.runner import BenchOptions, run_bench
    from ..attention.config import check_backend_options
    from ..attention.variants import check_knobs, select_variants
    from .grid import grid_requests

    from ..extras import require_torch

    # the command line first (a usage error says so on any machine), then torch, then the GPU
    cases = build_cases(shape, preset, head_dim, dtype.value, causal, kv_heads)
    # several values of a config option make a grid: every combination is timed (head dim and dtype come
    # from the cases)
    requests = grid_requests(block_m=block_m, block_n=block_n, num_warps=num_warps, num_stages=num_stages,
                             waves_per_eu=waves_per_eu, matrix_instr_nonkdim=matrix_instr_nonkdim, kpack=kpack,
                             maxnreg=maxnreg, knob=knob)
    req = requests[0]
    selected = select_variants(list(strategies or []))
    for r in requests:
        check_knobs(r, selected)
    require_torch("vgprscope bench")
    gpu = current_gpu()
    for r in requests:
        check_backend_options(r, [gpu.arch])
    names = tuple(v.name for v in selected)
    if not gpu.verified:
        err(f"{gpu.backend.label} GPU: results are marked unverified until this code has been run on "
            f"{gpu.backend.label} hardware by a person")
    opts = BenchOptions(variants=names, request=req, anchors=anchors, rep_ms=rep_ms, time_budget_s=budget_s,
                        autotune=autotune, cuda_graph=cuda_graph)
    m = machine(gpu)
    err(m.line())
    from .progress import bench_progress

    from dataclasses import replace

    rows = []
    with bench_progress() as progress:
        for i, r in enumerate(requests):  # the anchors do not depend on the config: timed once
            rows += run_bench(gpu, cases, replace(opts, request=r, anchors=anchors and i == 0), on_progress=progress)
    failed = [r for r in rows if not r.ok]
    if rows and len(failed) == len(rows):
        from .common import nothing_compiled

        err(nothing_compiled([r.status for r in rows], what="has a time"))
    elif failed:
        err(f"{len(failed)} of {len(rows)} rows have no time (see their status)")
    emit(RENDERERS[format.value](rows, m, **({"wide": wide} if format is Format.table else {})), output)
    if rows and len(failed) == len(rows):
        raise typer.Exit(1)
