"""``vgprscope bench``: on a GPU, correctness-gated timings of the variants beside torch SDPA."""

from __future__ import annotations

import typer

from ..core.exit_codes import FAILURE
from .common import emit, err, handles_errors
from .options import (
    AnchorsOpt,
    AutotuneOpt,
    BenchGrid,
    BudgetSOpt,
    Cases,
    CudaGraphOpt,
    Format,
    FormatOpt,
    Output,
    RepMsOpt,
    StrategiesOpt,
    bundled,
)


@handles_errors
@bundled
def bench(*, strategies: StrategiesOpt = None, cases: Cases, grid: BenchGrid, autotune: AutotuneOpt = False,
          anchors: AnchorsOpt = True, cuda_graph: CudaGraphOpt = False, rep_ms: RepMsOpt = 200.0,
          budget_s: BudgetSOpt = 10.0, format: FormatOpt = Format.table, out: Output) -> None:
    """Time every variant on this GPU after it passes the correctness gate, beside torch SDPA."""
    import contextlib

    from ..library.bench import bench as run
    from ..library.grid import dtype_values, field_named, option_values
    from .common import nothing_compiled
    from .progress import bench_progress

    bars: list = []  # the progress bar, shown once the machine line is printed

    def started(m, gpu) -> None:
        if not gpu.verified:
            vendor = gpu.backend.vendor.name
            err(f"{vendor} GPU: results are marked unverified until this code has been run on {vendor} hardware "
                "by a person")
        err(m.line())
        bars.append(stack.enter_context(bench_progress()))

    def progress(done: int, total: int, what: str) -> None:
        bars[0](done, total, what)

    # the command line's values (several head dims, dtypes or presets: the cases of each; several values of a
    # config option: a grid, every combination timed)
    with contextlib.ExitStack() as stack:
        result = run(strategies, shape=cases.shape, preset=cases.preset,
                     head_dim=option_values(field_named("head_dim"), cases.head_dim, cli=True),
                     dtype=dtype_values(cases.dtype, cli=True), causal=cases.causal, kv_heads=cases.kv_heads,
                     requests=grid.requests(), autotune=autotune, anchors=anchors, cuda_graph=cuda_graph,
                     rep_ms=rep_ms, budget_s=budget_s, on_start=started, on_progress=progress)
    rows, failed = result.rows, result.failed
    if rows and len(failed) == len(rows):
        err(nothing_compiled([r.status for r in rows], what="has a time"))
    elif failed:
        err(f"{len(failed)} of {len(rows)} rows have no time (see their status)")
    emit(result.render(format.value, out.wide), out.output)
    if rows and len(failed) == len(rows):
        raise typer.Exit(FAILURE)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(bench)
