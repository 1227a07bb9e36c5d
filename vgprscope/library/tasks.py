"""From a selection to compile tasks and their results: the orchestration the library's calls (and the CLI
commands over them) share.

A ``Selection`` is what a command works on: its sources (``registry.read``: bundled variants or a kernel
directory, captured launches, ...) x archs x config requests, under its toolchains. ``selection_tasks`` asks
each source for its tasks (a grid over the compile limit refused with the time it would take); ``sweep``,
``frontier_of`` and ``explain_of`` compile them on one engine.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends.base import CompilerWarnings
from ..compile.cache import CompileCache
from ..compile.engine import Engine
from ..compile.task import Task
from ..core.records import Record
from ..flashattn.config import ConfigRequest
from ..sources.base import Source, Want

if TYPE_CHECKING:
    from ..analysis.compare.core import VariantLine
    from ..analysis.explain.core import KernelExplanation
    from ..analysis.frontier.core import KernelFrontier
    from ..flashattn.source import VariantSource

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Selection:
    """What a command compiles: its sources (``registry.read``: the bundled variants, a kernel directory's,
    captured launches, ...) on ``archs`` for the config ``requests``, each task under each of ``toolchains``
    (none: the installed Triton)."""

    sources: tuple[Source, ...] = ()
    archs: tuple[str, ...] = ()  # arch names; () is the default archs
    requests: tuple[ConfigRequest, ...] = (ConfigRequest(),)
    toolchains: tuple[Any, ...] = ()  # compile.toolchains.Toolchain: each task under each (else the installed)
    # each kernel also on the archs it is written for (ws-regalloc's sm_90: analyze and compare with the default
    # archs, the gate's set), and ``companions`` (variant names) beside it there (compare's reference)
    own_archs: bool = False
    companions: tuple[str, ...] = ()

    @classmethod
    def of(cls, variants: Sequence[str] | None, archs: Sequence[str] | None, requests: Sequence[ConfigRequest],
           keywords: Mapping[str, Any] | None = None, overrides: bool = True,
           toolchains: Sequence[Any] = (), own_archs: bool = False, companions: Sequence[str] = ()) -> Selection:
        """A selection as the calls give it: ``keywords`` the sources' keywords (``capture=``,
        ``kernel_dir=``, ...; ``registry.SOURCES``); with ``overrides``, a grid's launch options apply to
        captured launches too; ``own_archs`` where no arch is named."""
        from . import registry

        requests = tuple(requests) or (ConfigRequest(),)
        sources = registry.read(keywords or {}, tuple(variants or ()), requests, overrides)
        return cls(sources, tuple(archs or ()), requests, tuple(toolchains), own_archs and not archs,
                   tuple(companions))

    def want(self, guard: Any = None) -> Want:
        """What each source is asked for: the archs (the default ones when none is named) x the requests."""
        from .selection import select_archs

        return Want(tuple(select_archs(self.archs)), self.requests, guard, self.own_archs,
                    self.companions)

    def variant_source(self) -> VariantSource:
        """The variants it compiles (the bundled ones when it compiles none: compare's traffic and frontier)."""
        from ..flashattn.source import VariantSource

        return next((s for s in self.sources if isinstance(s, VariantSource)), VariantSource())

    def empty(self) -> str | None:
        """Why it compiles nothing at all, known before compiling (every source says so), else None."""
        reasons = [s.empty() for s in self.sources]
        return reasons[0] if reasons and all(reasons) else None


@contextlib.contextmanager
def executor_for(scheduler: str | None, executor: Executor | None = None) -> Iterator[Executor | None]:
    """``executor`` if given; else None (the local process pool), or an Executor on the Dask scheduler at
    ``scheduler``."""
    if scheduler is not None and not str(scheduler).strip():
        from ..core.errors import UsageError

        raise UsageError(f"scheduler {scheduler!r} is empty; allowed: a Dask scheduler's address, tcp://HOST:PORT, "
                         "or none for local processes")
    if executor is not None or not scheduler:
        yield executor
        return
    from ..compile.cluster import dask_executor

    with dask_executor(scheduler) as ex:
        yield ex


def sample_of(tasks: Sequence[Any], jobs: int | None) -> list[Any]:
    return list(tasks)[: max(1, jobs or os.cpu_count() or 1)]


def guard(compiles: int, yes: bool, max_compiles: int | None, sample_tasks: Sequence[Any] = (),
          compile_sample: Callable[[list[Any]], Any] | None = None) -> None:
    """Refuse a grid of too many compiles unless confirmed, with how long it would take here.

    The rate is measured by compiling ``sample_tasks`` (a few of the grid's own, one per worker, which the
    cache keeps) with ``compile_sample``."""
    from .grid import GridSize, check_size

    def measure() -> GridSize:
        if not sample_tasks or compile_sample is None:
            return GridSize(compiles, None, 0)
        t0 = time.perf_counter()
        compile_sample(list(sample_tasks))
        wall = time.perf_counter() - t0
        return GridSize(compiles, wall / len(sample_tasks), len(sample_tasks))

    check_size(compiles, max_compiles, yes, measure)


def selection_tasks(sel: Selection, engine: Engine, *, guarded: bool = False, yes: bool = False,
                    max_compiles: int | None = None) -> list[Task]:
    """The selection's tasks: each source's on every arch for every request, in the sources' order (with
    ``guarded``, a grid over the compile limit is refused before it is planned)."""
    def guarding(compiles: int, items: Sequence[Any], compile_sample: Callable[[list[Any]], Any]) -> None:
        guard(compiles, yes, max_compiles, sample_of(items, engine.jobs), compile_sample)

    want = sel.want(guarding if guarded else None)
    tasks = [t for source in sel.sources for t in source.tasks(want, engine)]
    if sel.toolchains:
        tasks = [t.under(tc) for tc in sel.toolchains for t in tasks]
    return tasks


_MAIN_LOCK = threading.Lock()
_main_state: dict[str, Any] = {"depth": 0, "saved": {}}  # calls on several threads nest


@contextlib.contextmanager
def main_not_rerun() -> Iterator[None]:
    """While compile workers may start: a worker started fresh (spawn: this process imported triton, as a
    user's kernel does) is not given the user's script to run again. multiprocessing would run its top level
    in every worker (a script without an ``if __name__ == "__main__":`` guard would print, launch and start
    its own analysis there); the workers need nothing of it."""
    import sys

    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _MAIN_LOCK:
        if _main_state["depth"] == 0:
            _main_state["saved"] = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
            main.__dict__.pop("__file__", None)
            main.__dict__["__spec__"] = None
        _main_state["depth"] += 1
    try:
        yield
    finally:
        with _MAIN_LOCK:
            _main_state["depth"] -= 1
            if _main_state["depth"] == 0:
                main.__dict__.pop("__spec__", None)
                main.__dict__.update(_main_state["saved"])


def make_engine(jobs: int | None = None, use_cache: bool = True, cache_dir: Path | str | None = None,
                executor: Executor | None = None, on_progress: Progress | None = None, loops: bool = True,
                warnings: CompilerWarnings | None = None) -> Engine:
    return Engine(jobs, CompileCache(Path(cache_dir) if cache_dir else None, enabled=use_cache), executor,
                  on_progress, loops=loops, warnings=warnings or CompilerWarnings())


def sweep(sel: Selection, *, jobs: int | None = None, use_cache: bool = True, cache_dir: Path | str | None = None,
          yes: bool = False, max_compiles: int | None = None, scheduler: str | None = None,
          executor: Executor | None = None, on_progress: Progress | None = None, loops: bool = True,
          warnings: CompilerWarnings | None = None) -> list[Record]:
    """Records of a selection, in task order: refused when over the compile limit (with the time it would
    take), run on the Dask scheduler when one is named. ``loops`` False: the loop figures no view of the
    caller shows are left unread where they cost a disassembly (``compile.engine.Engine.loops``)."""
    with executor_for(scheduler, executor) as ex, main_not_rerun():
        engine = make_engine(jobs, use_cache, cache_dir, ex, on_progress, loops, warnings)
        return engine.compile(selection_tasks(sel, engine, guarded=True, yes=yes, max_compiles=max_compiles))


def frontier_of(sel: Selection, *, jobs: int | None = None, use_cache: bool = True,
                cache_dir: Path | str | None = None, yes: bool = False, max_compiles: int | None = None,
                scheduler: str | None = None, executor: Executor | None = None,
                on_progress: Progress | None = None) -> list[KernelFrontier]:
    """The frontier of a selection: the grid guard over every level, then every level compiled."""
    from ..analysis.frontier.core import engine_tasks, level_count, occupancy_levels, run_frontier
    from ..analysis.frontier.split import knob_of, run_split
    from .split_tasks import split_tasks

    access = engine_tasks()
    with executor_for(scheduler, executor) as ex, main_not_rerun():
        engine = make_engine(jobs, use_cache, cache_dir, ex, on_progress)
        tasks = selection_tasks(sel, engine)
        # a variant that declares a register-split knob: its settings, not the occupancy levels
        splits = split_tasks(sel, tasks, lambda s: selection_tasks(s, engine))
        tasks = [t for t in tasks if knob_of(t) is None]
        sample = [access.vary(t, p.knob, p.setting) for t in sample_of(tasks, jobs)
                  for p in occupancy_levels(access.arch(t), access.num_warps(t))[-1:]] or sample_of(splits, jobs)
        guard(level_count(tasks, access) + len(splits), yes, max_compiles, sample, engine.compile)
        return ((run_frontier(tasks, engine.compile, access) if tasks else [])
                + (run_split(splits, engine.compile, engine.raw_outputs) if splits else []))


def explain_of(sel: Selection, *, jobs: int | None = None, use_cache: bool = True,
               cache_dir: Path | str | None = None, on_progress: Progress | None = None) -> list[KernelExplanation]:
    """Each task of the selection compiled (or read from the cache) and explained, beside seed 001's
    estimate for the bundled variants (the attention package's hook)."""
    from ..analysis.explain.core import explain_tasks
    from ..flashattn.live import estimate

    engine = make_engine(jobs, use_cache, cache_dir, None, on_progress)
    with main_not_rerun():
        return explain_tasks(selection_tasks(sel, engine), engine=engine, estimate=estimate)


def compare_tables(sel: Selection, records: Sequence[Record]) -> dict[str, list[VariantLine]]:
    """One table per arch (and per grid point: each compared with the baseline of the same request), the
    variants' traffic model on their lines (the kernel directory's variants, or the bundled ones)."""
    from ..analysis.compare.core import compare_points
    from ..flashattn.config import request_label
    from ..flashattn.traffic import line_traffic
    from ..flashattn.variants import load_variants
    from .grid import point_label, varying_axes

    kernel_dir = sel.variant_source().kernel_dir
    traffic = line_traffic(load_variants(sel.variant_source().directory).values() if kernel_dir else None)
    axes = varying_axes(sel.requests) if len(sel.requests) > 1 else []
    points = {request_label(req): point_label(req, axes) for req in sel.requests}
    return compare_points(records, points, traffic)


def with_frontiers(per_arch: Mapping[str, Sequence[VariantLine]],
                   frontiers: Sequence[KernelFrontier]) -> dict[str, list[VariantLine]]:
    """Each variant line with its frontier (``compare --frontier``)."""
    from dataclasses import replace

    from ..analysis.frontier.core import by_variant

    fronts = by_variant(frontiers)
    return {key: [replace(ln, frontier=fronts.get((ln.variant, ln.arch, ln.kernels[0].config.key())))
                  for ln in lines] for key, lines in per_arch.items()}


def bench_columns(per_arch: Mapping[str, Sequence[VariantLine]], requests: Sequence[ConfigRequest],
                  shape: tuple[int, ...] | None) -> dict[str, Any]:
    """compare's timings: the variants timed on this GPU (its arch only) at every grid point, keyed like the
    tables (the arch, then the point's label in a grid); without a GPU, a note saying so (the tables stay
    compile-only). The fields of CompareResult they fill."""
    from dataclasses import replace

    from ..analysis.compare.view import TIMING_HEADERS, timing_cells
    from ..bench.cases import Case
    from ..bench.device import current_gpu, machine
    from ..bench.runner import BenchOptions, run_bench
    from ..core.errors import NoGpuError
    from ..flashattn.config import DEFAULT_SHAPE
    from .grid import point_label, varying_axes

    try:
        gpu = current_gpu()
    except NoGpuError as exc:
        return {"notes": (f"{exc}; showing compile-only columns (run compare --bench on a GPU machine)",)}
    names = tuple(dict.fromkeys(ln.variant for lines in per_arch.values() for ln in lines))
    axes = varying_axes(requests) if len(requests) > 1 else ()
    out: dict[str, dict[str, dict[str, str]]] = {}
    for req in requests:
        case = Case.of(tuple(shape or DEFAULT_SHAPE), req.head_dim, req.causal, req.dtype)
        rows = run_bench(gpu, [case], BenchOptions(variants=names, request=replace(req), anchors=False))
        label = point_label(req, axes) if axes else ""
        out[f"{gpu.arch.name}{' ' + label if label else ''}"] = {
            r.name: timing_cells(r) for r in rows}
    return {"timings": out, "timing_headers": TIMING_HEADERS, "machine": machine(gpu)}
