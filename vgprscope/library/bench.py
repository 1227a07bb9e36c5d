"""``vgprscope bench`` as a library call: on this process's GPU, correctness-gated timings of the variants beside
torch SDPA, for every case (shapes or a preset, each head dim and dtype) and every config request of a grid."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..bench.runner import BenchRow
from ..flashattn.config import ConfigRequest
from ..report.machine import Machine


@dataclass(frozen=True)
class BenchResult:
    """Every row timed (a row without a time says why in its status), and the machine that timed them."""

    rows: tuple[BenchRow, ...]
    machine: Machine

    @property
    def failed(self) -> tuple[BenchRow, ...]:
        return tuple(r for r in self.rows if not r.ok)

    def render(self, fmt: str = "table", wide: bool = False) -> str:
        """The rows as ``bench --format`` prints them: table, md, csv or json."""
        from ..bench.output import RENDERERS

        return RENDERERS[fmt](list(self.rows), self.machine, **({"wide": wide} if fmt == "table" else {}))


def bench(strategies: Sequence[str] | None = None, *, shape: Sequence[str] | None = None,
          preset: Sequence[str] | None = None, head_dim: Sequence[int] | None = None,
          dtype: Sequence[str] | None = None, causal: bool | None = None, kv_heads: int | None = None,
          requests: Sequence[ConfigRequest] = (ConfigRequest(),), autotune: bool = False, anchors: bool = True,
          cuda_graph: bool = False, rep_ms: float = 200.0, budget_s: float = 10.0,
          on_start: Callable[[Machine, Any], None] | None = None,
          on_progress: Callable[[int, int, str], None] | None = None) -> BenchResult:
    """Time the variants (``strategies``, default all) on this GPU after each passes the correctness gate.

    The cases: ``shape`` (``"B,H,Sq,Sk"``, several) or ``preset`` (several), at each ``head_dim`` and ``dtype``
    (default the preset's head dims, fp16), ``causal`` and ``kv_heads`` setting them; each of ``requests`` (a
    grid's config requests) timed in turn, the anchors (torch SDPA) once. What is wrong with the selection is a
    UsageError on any machine, before torch and the GPU are asked; ``on_start`` is told the machine (and the
    GPU) before the first timing."""
    from ..bench.cases import build_cases
    from ..bench.device import current_gpu, machine
    from ..bench.runner import BenchOptions, run_bench
    from ..core.extras import require_torch
    from ..flashattn.config import check_backend_options
    from ..flashattn.variants import check_knobs, select_variants

    head_dims: list[int | None] = [*head_dim] if head_dim else [None]
    dtypes = list(dtype or ()) or ["fp16"]
    presets: list[str | None] = [*dict.fromkeys(preset or [])] or [None]
    problems = list(dict.fromkeys(c for hd, dt, pre in itertools.product(head_dims, dtypes, presets)
                                  for c in build_cases(list(shape) if shape else None, pre, hd, dt, causal, kv_heads)))
    requests = list(requests) or [ConfigRequest()]
    selected = select_variants(list(strategies or []))
    for r in requests:
        check_knobs(r, selected)
    require_torch("vgprscope bench")
    gpu = current_gpu()
    for r in requests:
        check_backend_options(r, [gpu.arch])
    opts = BenchOptions(variants=tuple(v.name for v in selected), request=requests[0], anchors=anchors,
                        rep_ms=rep_ms, time_budget_s=budget_s, autotune=autotune, cuda_graph=cuda_graph)
    m = machine(gpu)
    if on_start is not None:
        on_start(m, gpu)
    rows: list[BenchRow] = []
    for i, r in enumerate(requests):  # the anchors do not depend on the config: timed once
        rows += run_bench(gpu, problems, replace(opts, request=r, anchors=anchors and i == 0), on_progress=on_progress)
    return BenchResult(tuple(rows), m)
