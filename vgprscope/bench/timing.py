"""Timings as anchors.md asks: warm-up, L2 flushed before every run, rotating inputs, median and spread."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    max_ms: float
    runs: int
    # "eager": each timed run is the Python call (its host launch cost counts wherever the GPU waits on it);
    # "graph": the replay of a CUDA graph captured from that call, the GPU's own time
    mode: str = "eager"

    @property
    def spread_ms(self) -> float:
        """Half the interquartile range: the ``±`` of every timing vgprscope prints."""
        return (self.q3_ms - self.q1_ms) / 2

    def label(self) -> str:
        """hyperfine style: median ± half the interquartile range."""
        return f"{self.median_ms:.3f} ± {self.spread_ms:.3f}"


def summarize(times_ms: Sequence[float], mode: str = "eager") -> Timing:
    xs = sorted(times_ms)
    if len(xs) >= 4:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    else:
        q1, q3 = xs[0], xs[-1]
    return Timing(median_ms=statistics.median(xs), q1_ms=q1, q3_ms=q3, min_ms=xs[0], max_ms=xs[-1], runs=len(xs),
                  mode=mode)


def time_rotating(run: Callable[[int], object], n_sets: int, warmup_ms: float = 25.0,
                  rep_ms: float = 200.0) -> Timing:
    """Time ``run(i)`` with i cycling over the input sets; Triton's do_bench warms up and flushes L2
    (it zeroes a buffer larger than L2) before every timed run, and returns every run's time."""
    from triton.testing import do_bench

    counter = {"i": 0}

    def fn() -> None:
        run(counter["i"] % n_sets)
        counter["i"] += 1

    return summarize(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all"))


def time_graph_replay(run: Callable[[int], object], n_sets: int, warmup_ms: float = 25.0,
                      rep_ms: float = 200.0) -> Timing:
    """Time the replay of a CUDA graph of ``run(i)``, one graph per input set, with do_bench's warm-up and L2
    flush before every replay: what a serving engine runs at decode, where a launch is too short for Python
    to keep the GPU fed. The host's launch cost (argument binding, workspaces, two kernels for split-k) is
    left out, for the variants and the SDPA anchors alike."""
    import torch
    from triton.testing import do_bench

    for i in range(n_sets):  # compiled, autotuned and allocated before anything is captured
        run(i)
    torch.cuda.synchronize()
    graphs = []
    for i in range(n_sets):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            run(i)
        graphs.append(g)
    torch.cuda.synchronize()
    counter = {"i": 0}

    def fn() -> None:
        graphs[counter["i"] % n_sets].replay()
        counter["i"] += 1

    return summarize(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all"), mode="graph")
