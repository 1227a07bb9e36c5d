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
    block_m: BlockMOpt = None,
    block_n: BlockNOpt = None,
    num_warps: NumWarpsOpt = None,
    num_stages: NumStagesOpt = None,
    waves_per_eu: WavesPerEuOpt = None,
    matrix_instr_nonkdim: NonKDimOpt = None,
    kpack: KpackOpt = None,
    maxnreg: MaxnregOpt = None,
    knob: KnobOpt = None,
    autotune: Annotated[bool, typer.Option("--autotune", help="Pick each variant's best config from a small grid")] = False,
    anchors: Annotated[bool, typer.Option("--anchors/--no-anchors", help="Time torch SDPA backends too")] = True,
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
    from ..variants import ConfigRequest, check_backend_options, check_knobs, parse_knobs, select_variants

    from ..extras import require_torch

    # the command line first (a usage error says so on any machine), then torch, then the GPU
    cases = build_cases(shape, preset, head_dim, dtype.value, causal, kv_heads)
    req = ConfigRequest(block_m=block_m, block_n=block_n, num_warps=num_warps, num_stages=num_stages,
                        waves_per_eu=waves_per_eu, matrix_instr_nonkdim=matrix_instr_nonkdim, kpack=kpack,
                        maxnreg=maxnreg, extra=parse_knobs(knob))
    selected = select_variants(list(strategies or []))
    check_knobs(req, selected)
    require_torch("vgprscope bench")
    gpu = current_gpu()
    check_backend_options(req, [gpu.arch])
    names = tuple(v.name for v in selected)
    if gpu.is_amd:
        err("AMD GPU: results are marked unverified until this code has been run on AMD hardware by a person")
    opts = BenchOptions(variants=names, request=req, anchors=anchors, rep_ms=rep_ms, time_budget_s=budget_s,
                        autotune=autotune)
    m = machine(gpu)
    err(m.line())
    from .progress import bench_progress

    with bench_progress() as progress:
        rows = run_bench(gpu, cases, opts, on_progress=progress)
    failed = [r for r in rows if not r.ok]
    if rows and len(failed) == len(rows):
        from .common import nothing_compiled

        err(nothing_compiled([r.status for r in rows], what="has a time"))
    elif failed:
        err(f"{len(failed)} of {len(rows)} rows have no time (see their status)")
    emit(RENDERERS[format.value](rows, m, **({"wide": wide} if format is Format.table else {})), output)
    if rows and len(failed) == len(rows):
        raise typer.Exit(1)
