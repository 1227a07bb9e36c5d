"""``vgprscope bench``: on a GPU, correctness-gated timings of the variants beside torch SDPA."""

from __future__ import annotations

import typer

from .common import emit, err, handles_errors
from .options import (
    AnchorsOpt, AutotuneOpt, BenchGrid, BudgetSOpt, Cases, CudaGraphOpt, Format, FormatOpt, Output, RepMsOpt,
    StrategiesOpt, bundled,
)
from .exit_codes import FAILURE


@handles_errors
@bundled
def bench(*, strategies: StrategiesOpt = None, cases: Cases, grid: BenchGrid, autotune: AutotuneOpt = False,
          anchors: AnchorsOpt = True, cuda_graph: CudaGraphOpt = False, rep_ms: RepMsOpt = 200.0,
          budget_s: BudgetSOpt = 10.0, format: FormatOpt = Format.table, out: Output) -> None:
    """Time every variant on this GPU after it passes the correctness gate, beside torch SDPA."""
    import itertools

    from ..bench.cases import build_cases
    from ..bench.device import current_gpu, machine
    from ..bench.output import RENDERERS
    from ..bench.runner import BenchOptions, run_bench
    from ..attention.config import check_backend_options
    from ..attention.variants import check_knobs, select_variants
    from ..core.extras import require_torch
    from ..library.grid import dtype_values, field_named, option_values

    # the command line first (a usage error says so on any machine), then torch, then the GPU;
    # several head dims, dtypes or presets: the cases of each (None: the preset's head dims; fp16)
    head_dims: list[int | None] = [*option_values(field_named("head_dim"), cases.head_dim, cli=True)] or [None]
    dtypes = dtype_values(cases.dtype, cli=True) or ["fp16"]
    presets: list[str | None] = [*dict.fromkeys(cases.preset or [])] or [None]
    problems = list(dict.fromkeys(c for hd, dt, preset in itertools.product(head_dims, dtypes, presets)
                                  for c in build_cases(cases.shape, preset, hd, dt, cases.causal, cases.kv_heads)))
    # several values of a config option make a grid: every combination is timed (head dim and dtype come
    # from the cases)
    requests = grid.requests()
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
        err(f"{gpu.backend.vendor.name} GPU: results are marked unverified until this code has been run on "
            f"{gpu.backend.vendor.name} hardware by a person")
    opts = BenchOptions(variants=names, request=req, anchors=anchors, rep_ms=rep_ms, time_budget_s=budget_s,
                        autotune=autotune, cuda_graph=cuda_graph)
    m = machine(gpu)
    err(m.line())
    from .progress import bench_progress

    from dataclasses import replace

    rows = []
    with bench_progress() as progress:
        for i, r in enumerate(requests):  # the anchors do not depend on the config: timed once
            rows += run_bench(gpu, problems, replace(opts, request=r, anchors=anchors and i == 0), on_progress=progress)
    failed = [r for r in rows if not r.ok]
    if rows and len(failed) == len(rows):
        from .common import nothing_compiled

        err(nothing_compiled([r.status for r in rows], what="has a time"))
    elif failed:
        err(f"{len(failed)} of {len(rows)} rows have no time (see their status)")
    emit(RENDERERS[format.value](rows, m, **({"wide": out.wide} if format is Format.table else {})), out.output)
    if rows and len(failed) == len(rows):
        raise typer.Exit(FAILURE)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(bench)
