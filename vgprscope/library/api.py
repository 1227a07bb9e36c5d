"""vgprscope as a library: ``analyze``, ``compare``, ``frontier``, ``explain``, ``check`` and ``scan`` take the
CLI's selections by the same names (a scalar or a list each: a list makes a grid, as a comma list does on the
command line) and return frozen results (``vgprscope.analysis.<question>.result``, the gate's in
``vgprscope.library.results``) with ``.to_pandas()`` and
``.to_json()``. Errors are the core's typed exceptions (``vgprscope.core.errors``); a failed compile is a record
with its error, never an exception.

Each call but ``scan`` also takes ``triton=`` (a release such as ``"3.8.0"``, installed once into vgprscope's
cache; the path of a Python environment that has Triton) and ``settings=`` (compiler settings, environment
variables Triton reads: ``{"TRITON_HIP_USE_BLOCK_PINGPONG": "1"}``), as ``--triton`` and ``--set`` do: one
Triton each, except ``analyze`` (several, or a range ``"3.4.0..3.9.0"``: each kernel's history) and ``diff``
(two sides).

``analyze``, ``frontier`` and ``explain`` also take a user's own kernel, launched as in their code:
``analyze(my_kernel, x, y, n, BLOCK=128, num_warps=4, arch=["gfx942", "sm_90"])``. With a kernel, every
keyword but the library's own (``arch``, ``jobs``, ``use_cache``, ``cache``, ``yes``, ``max_compiles``,
``scheduler``, ``executor``, ``on_progress``, ``sort``, ``triton``, ``settings``) is the launch's; a list value makes a grid of
launches. A kernel parameter named like one of those is given positionally.

A source's keyword (``capture``, ``kernel_dir``, and every other of ``library/registry.py``'s ``SOURCES``) is
taken by each call that selects kernels, and by the gate's configuration; without one, the bundled variants.

Compiles run in worker processes (started fresh where this process imported triton, as a user's kernel
does; they are not given the user's script to run again: ``tasks.main_not_rerun``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..analysis.analyze.result import AnalyzeResult
from ..analysis.compare.result import CompareResult
from ..analysis.explain.result import ExplainResult
from ..analysis.frontier.result import FrontierResult
from ..analysis.scan.result import ScanResult
from ..backends.base import CompilerWarnings
from ..core.errors import UsageError
from ..core.options import compiler_warnings
from . import selection
from .results import BaselineSaveResult, CheckResult

if TYPE_CHECKING:
    from ..analysis.diff.result import DiffResult

Progress = Callable[[int, int], None]
PathLike = str | Path


def _run(jobs: int | None, use_cache: bool, cache: PathLike | None, on_progress: Progress | None) -> dict[str, Any]:
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise UsageError(f"jobs={jobs!r} is not allowed; allowed: a whole number of processes, 1 or more")
    return {"jobs": jobs, "use_cache": bool(use_cache), "cache_dir": cache, "on_progress": on_progress}


def _warning_values(given: dict[str, Any]) -> dict[str, Any]:
    """A call's compiler warnings (``core.options.COMPILER_WARNINGS``' rows, by name), taken out of its other
    keywords, each its row's default where not given."""
    return {row.name: given.pop(row.name, row.default) for row in compiler_warnings()}


def _warnings(values: dict[str, Any]) -> CompilerWarnings:
    """The compiler warnings asked for, checked (a library caller's values; the CLI's are typed)."""
    for row in compiler_warnings():
        if (why := row.library_error(values[row.name])) is not None:
            raise UsageError(why)
    return CompilerWarnings(tuple((row.name, values[row.name]) for row in compiler_warnings()
                                  if values[row.name] is not row.default))


def _no_launch(what: str, args: tuple[Any, ...], launch: dict[str, Any]) -> None:
    """Without a kernel there is no launch: stray positional or keyword arguments are mistakes."""
    if args:
        raise UsageError(f"{what}: positional arguments are a kernel's launch arguments; give the kernel first "
                         f"({what}(my_kernel, x, y, ...)) or select with keywords")
    if launch:
        raise UsageError(f"{what}() got an unknown keyword {next(iter(launch))!r}; see help(vgprscope.{what})")


def _launch_of(kernel: Any, args: tuple[Any, ...], launch: dict[str, Any], **selections: Any):
    """The launches of a user's kernel (``kernels.launch_capture``): the keywords the library would take for
    the bundled variants (``selections``: variant, dtype, ...) are the launch's here, with the rest."""
    from .kernels import launch_capture

    given = {k: v for k, v in selections.items() if v is not None}
    return launch_capture(kernel, args, {**given, **launch})


def _sources(named: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The sources' keywords of a call (``library/registry.py``): those its signature names, and any other
    registered one among its keywords (taken out of ``extra``); an unregistered keyword left in ``extra``
    is the caller's to refuse."""
    from .registry import pop_keywords

    return named | pop_keywords(extra)


def _unknown(what: str, extra: dict[str, Any]) -> None:
    if extra:
        raise UsageError(f"{what}() got an unknown keyword {next(iter(extra))!r}; see help(vgprscope.{what})")


def _grid(fields: dict[str, Any], dtype: Any, causal: Any, knob: Any, shape: Any = None) -> list:
    return selection.requests(fields, dtype=dtype, causal=causal, knob=knob, shape=shape)


def _noted(result: Any, records: Sequence[Any]) -> Any:
    """A result whose header says, once, which of its rows were compiled from a capture's snapshot (their
    files not on this machine), rather than each row (``records``: Records, or each row's note)."""
    from dataclasses import replace

    from ..report.machine import snapshot_note

    notes = [r if isinstance(r, str) else str(dict(r.extras).get("note") or "") for r in records]
    line = snapshot_note(notes, len(notes))
    return replace(result, machine=result.machine.with_notes(line)) if line else result


def _grid_fields(given: dict[str, Any], frontier: bool = False) -> dict[str, Any]:
    """A call's grid fields (the tiles' and launch options' rows, ``library.grid.grid_fields``), taken out of
    its other keywords; the frontier leaves its occupancy knobs, which it sets itself, where they are."""
    from .grid import grid_fields

    return {o.name: given.pop(o.name) for o in grid_fields() if o.name in given and not (frontier and o.occupancy_knob)}


F = TypeVar("F", bound=Callable[..., Any])


def _takes_warnings(after: str) -> Callable[[F], F]:
    """The call's signature names every compiler warning (``core.options.COMPILER_WARNINGS``' rows, never
    written here), keyword-only, after ``after``; the call finds them among its keywords (``_warning_values``)."""

    def add(fn: F) -> F:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        at = [p.name for p in params].index(after) + 1
        rows = [inspect.Parameter(row.name, inspect.Parameter.KEYWORD_ONLY, default=row.default,
                                  annotation="bool" if row.type is bool else f"{row.type.__name__} | None")
                for row in compiler_warnings()]
        fn.__signature__ = sig.replace(parameters=params[:at] + rows + params[at:])  # type: ignore[attr-defined]
        return fn

    return add


def _takes_grid_fields(after: str, frontier: bool = False) -> Callable[[F], F]:
    """The call's signature (``help()``, ``inspect.signature``) names every grid field, after ``after``: the
    rows of ``core/options.py`` and ``flashattn/tiles.py``, never written here; the call finds them among its
    keywords (``_grid_fields``)."""

    def add(fn: F) -> F:
        from .grid import grid_fields

        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        at = [p.name for p in params].index(after) + 1
        fields = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Ints")
                  for o in grid_fields() if not (frontier and o.occupancy_knob)]
        fn.__signature__ = sig.replace(parameters=params[:at] + fields + params[at:])  # type: ignore[attr-defined]
        return fn

    return add


Ints = int | Sequence[int] | None
Names = str | Sequence[str] | None


@_takes_grid_fields(after="arch")
@_takes_warnings(after="loops")
def analyze(kernel: Any = None, /, *args: Any, variant: Names = None, arch: Names = None, dtype: Names = None, causal: bool | None = None, knob: Any = None, capture: Any = None,
            kernel_dir: PathLike | None = None, sort: str | None = None, triton: Any = None, settings: Any = None,
            jobs: int | None = None, use_cache: bool = True, cache: PathLike | None = None, yes: bool = False,
            max_compiles: int | None = None, scheduler: str | None = None, executor: Executor | None = None,
            on_progress: Progress | None = None, loops: bool = True, **launch: Any) -> AnalyzeResult:
    """Registers, spills, LDS / shared memory and occupancy of each kernel on each arch, compiled here.

    Without ``kernel``: the bundled variants (``variant``, default all; or ``kernel_dir``'s) x ``arch``
    (default gfx90a, gfx942, sm_80) x the config grid, and/or a ``capture`` (a capture file's path, or what
    ``vgprscope.capture()`` recorded); with a capture alone the launch options (``num_warps``, ...) are
    "what if" overrides of every captured launch. With ``kernel``: that kernel launched as
    ``kernel[grid](*args, **launch)``, one record per autotune config (after ``prune_configs_by``) and arch.
    ``triton``: several releases (or a range) compile every kernel under each, oldest first
    (``.history()``: each kernel release by release).
    ``cache``: a compile-cache directory (default $VGPRSCOPE_CACHE_DIR or ~/.cache/vgprscope);
    ``use_cache=False`` compiles everything again; ``yes`` runs a grid of more than 10,000 compiles.
    ``loops=False``: the hot loop's matrix share and source lines are left unread (None) where reading them
    costs a disassembly, as for a table that does not show them; the loops' spill figures are always read.
    ``warn_on_spills``: ptxas's ``--warn-on-spills`` on every NVIDIA compile; ``warn_stack_size``: LLVM's
    ``warn-stack-size`` attribute (bytes) on every AMD compile: their warnings are each row's diagnostics."""
    from ..analysis.order import group_records, sort_records
    from .tasks import Selection, sweep

    fields = _grid_fields(launch) if kernel is None else {}
    asked = _warning_values(launch)
    run = _run(jobs, use_cache, cache, on_progress)
    archs = selection.arch_names(arch)
    if kernel is not None:
        launches = _launch_of(kernel, args, launch, variant=variant, dtype=dtype, causal=causal, knob=knob,
                              capture=capture, kernel_dir=kernel_dir)
        sides = selection.toolchains(triton, settings)
        sel = Selection.of((), archs, (), {"capture": launches}, toolchains=sides)
        requests: list = [sel.requests[0]]
    else:
        keywords = _sources({"capture": capture, "kernel_dir": kernel_dir}, launch)
        _no_launch("analyze", args, launch)
        requests = _grid(fields, dtype, causal, knob)
        sides = selection.toolchains(triton, settings)
        sel = Selection.of(selection.names(variant, "variant"), archs, requests, keywords, toolchains=sides,
                           own_archs=True)
        if (why := sel.empty()) is not None:
            raise UsageError(why)
    warnings = _warnings(asked)
    records, refused = split_refused(sweep(sel, yes=yes, max_compiles=max_compiles, scheduler=scheduler,
                                           executor=executor, loops=loops, warnings=warnings, **run))
    if len(sides) <= 1:  # a history keeps the toolchains' order; one table sorts as asked
        records = sort_records(group_records(records) if len(requests) > 1 else records, sort)
    return _noted(AnalyzeResult(tuple(records), toolchains=tuple(sides), refused=tuple(refused)), records)


def split_refused(records: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(rows, refused): the records a table shows, and those its kernels' source does not take (a variant
    written for other archs, a value outside its range: ``Record.refused``), which it names in a note."""
    return [r for r in records if not r.refused], [r for r in records if r.refused]


@_takes_grid_fields(after="arch")
def compare(*, strategies: Names = None, variant: Names = None, arch: Names = None, dtype: Names = None, causal: bool | None = None, knob: Any = None, shape: Any = "4,32,4096,4096",
            frontier: bool = False, bench: bool = False, sort: str | None = None, capture: Any = None,
            kernel_dir: PathLike | None = None, triton: Any = None, settings: Any = None, jobs: int | None = None,
            use_cache: bool = True, cache: PathLike | None = None, yes: bool = False,
            max_compiles: int | None = None, scheduler: str | None = None, executor: Executor | None = None,
            on_progress: Progress | None = None, loops: bool = True, **sources: Any) -> CompareResult:
    """Each strategy (``strategies`` or ``variant``, default all) side by side per arch, with the memory
    traffic of the reference problem ``shape`` and each metric's change against the baseline variant (in
    the JSON and the table); with ``frontier``, each strategy's spill-free occupancy too; with ``bench``,
    timings on this process's GPU (without one: compile-only, the reason in ``.notes``). ``loops``: as
    ``analyze``'s."""
    from dataclasses import replace

    from ..analysis.compare.core import REFERENCE, sort_lines
    from .tasks import Selection, bench_columns, compare_tables, frontier_of, sweep, with_frontiers

    fields = _grid_fields(sources)
    keywords = _sources({"capture": capture, "kernel_dir": kernel_dir}, sources)
    _unknown("compare", sources)
    run = _run(jobs, use_cache, cache, on_progress)
    names = selection.names(strategies, "strategies") + selection.names(variant, "variant")
    requests = _grid(fields, dtype, causal, knob, shape)
    archs = selection.arch_names(arch)
    side = selection.one_toolchain("compare", triton, settings)
    sides = (side,) if side is not None else ()
    sel = Selection.of(tuple(dict.fromkeys(names)), archs, requests, keywords, toolchains=sides, own_archs=True,
                       companions=(REFERENCE,))
    common = {"yes": yes, "max_compiles": max_compiles, "scheduler": scheduler, "executor": executor, **run}
    records, refused = split_refused(sweep(sel, **common, loops=loops))
    per_arch = compare_tables(sel, records)
    if frontier:  # the variants' frontier (a capture's launches are compared, not searched)
        levels = frontier_of(replace(sel, sources=(sel.variant_source(),)), **common)
        per_arch = with_frontiers(per_arch, levels)
    per_arch = sort_lines(per_arch, sort)
    result = _noted(CompareResult({k: tuple(v) for k, v in per_arch.items()}, tuple(records), refused=tuple(refused)),
                    records)
    if bench:
        timings = bench_columns(per_arch, requests, selection.shape_value(shape))
        result = replace(result, **timings)
    return result


@_takes_grid_fields(after="arch", frontier=True)
def frontier(kernel: Any = None, /, *args: Any, variant: Names = None, strategies: Names = None, arch: Names = None,
             dtype: Names = None,
             causal: bool | None = None, knob: Any = None, capture: Any = None, kernel_dir: PathLike | None = None,
             sort: str | None = None, triton: Any = None, settings: Any = None, jobs: int | None = None,
             use_cache: bool = True, cache: PathLike | None = None, yes: bool = False,
             max_compiles: int | None = None, scheduler: str | None = None, executor: Executor | None = None,
             on_progress: Progress | None = None, **launch: Any) -> FrontierResult:
    """The highest occupancy each kernel reaches without spilling, and the price of the next level: each
    kernel compiled at every occupancy level of its arch (AMD: waves_per_eu; NVIDIA: maxnreg, then the
    smallest spill-free maxnreg by bisection). Selections as ``analyze`` takes them (a user's kernel too),
    without the knob the frontier sets itself."""
    from ..analysis.frontier.core import sort_frontiers
    from .tasks import Selection, frontier_of

    fields = _grid_fields(launch, frontier=True) if kernel is None else {}
    run = _run(jobs, use_cache, cache, on_progress)
    archs = selection.arch_names(arch)
    if kernel is not None:
        launches = _launch_of(kernel, args, launch, variant=variant, strategies=strategies, dtype=dtype,
                              causal=causal, knob=knob, capture=capture, kernel_dir=kernel_dir)
        side = selection.one_toolchain("frontier", triton, settings)
        sel = Selection.of((), archs, (), {"capture": launches}, toolchains=(side,) if side is not None else ())
    else:
        keywords = _sources({"capture": capture, "kernel_dir": kernel_dir}, launch)
        _no_launch("frontier", args, launch)
        names = selection.names(strategies, "strategies") + selection.names(variant, "variant")
        requests = _grid(fields, dtype, causal, knob)
        side = selection.one_toolchain("frontier", triton, settings)
        # the launch options are "what if" overrides of the captured launches, as analyze takes them
        sel = Selection.of(tuple(dict.fromkeys(names)), archs, requests, keywords,
                           toolchains=(side,) if side is not None else ())
    frontiers = frontier_of(sel, yes=yes, max_compiles=max_compiles, scheduler=scheduler, executor=executor, **run)
    return _noted(FrontierResult(tuple(sort_frontiers(frontiers, sort))),
                  [lv.record for kf in frontiers for lv in kf.levels])


@_takes_grid_fields(after="arch")
def explain(kernel: Any = None, /, *args: Any, variant: Names = None, arch: Names = None, dtype: Names = None, causal: bool | None = None, knob: Any = None, capture: Any = None,
            kernel_dir: PathLike | None = None, triton: Any = None, settings: Any = None, jobs: int | None = None,
            use_cache: bool = True, cache: PathLike | None = None, on_progress: Progress | None = None,
            **launch: Any) -> ExplainResult:
    """Where the registers go: the registers of each tensor live across each loop (from TTGIR) and the
    spill sites by source line. Default variant: baseline; with a ``capture`` or a user's kernel, those
    kernels (and variants too when named). With a capture, the launch options (``num_warps``,
    ``waves_per_eu``, ...) are "what if" overrides of every captured launch, as ``analyze`` takes them."""
    from .tasks import Selection, explain_of

    fields = _grid_fields(launch) if kernel is None else {}
    run = _run(jobs, use_cache, cache, on_progress)
    archs = selection.arch_names(arch)
    if kernel is not None:
        launches = _launch_of(kernel, args, launch, variant=variant, dtype=dtype, causal=causal, knob=knob,
                              capture=capture, kernel_dir=kernel_dir)
        side = selection.one_toolchain("explain", triton, settings)
        sel = Selection.of((), archs, (), {"capture": launches}, toolchains=(side,) if side is not None else ())
    else:
        from .registry import only_default

        keywords = _sources({"capture": capture, "kernel_dir": kernel_dir}, launch)
        _no_launch("explain", args, launch)
        names = selection.names(variant, "variant")
        if only_default(keywords) and not names:  # no other source: the baseline variant
            names = ("baseline",)
        requests = _grid(fields, dtype, causal, knob)
        side = selection.one_toolchain("explain", triton, settings)
        # a grid's launch options are "what if" overrides of the captured launches, as analyze takes them
        # (a capture alone refuses the variants' own options)
        sel = Selection.of(names, archs, requests, keywords, toolchains=(side,) if side is not None else ())
    explained = explain_of(sel, **run)
    return _noted(ExplainResult(tuple(explained)), [e.compiled_from for e in explained])


def _gate_paths(what: str, config: PathLike | None, baseline: PathLike | None, named: dict[str, Any],
                extra: dict[str, Any]) -> tuple[Path | None, Path | None, dict[str, Path]]:
    """The gate's files, and its sources' keywords as paths (a capture file, a kernel directory, ...)."""
    keywords = _sources(named, extra)
    _unknown(what, extra)
    bad = next((k for k, v in keywords.items() if v and not isinstance(v, (str, os.PathLike))), None)
    if bad is not None:
        raise UsageError(f"{what}: {bad}={keywords[bad]!r} is not allowed; the gate's sources are files: give "
                         "a path")
    paths = {k: Path(v) for k, v in keywords.items() if v}
    return Path(config) if config else None, Path(baseline) if baseline else None, paths


def check(*, config: PathLike | None = None, baseline: PathLike | None = None, variant: Names = None,
          arch: Names = None, rule: Names = None, allow_missing: bool = False, fail_on_change: bool = False,
          strict: bool = False, allow_version_change: bool = False, kernel_dir: PathLike | None = None, capture: PathLike | None = None,
          triton: Any = None, settings: Any = None, jobs: int | None = None, use_cache: bool = True,
          cache: PathLike | None = None, on_progress: Progress | None = None, **sources: Any) -> CheckResult:
    """The register gate: the configuration (``config``, default the nearest pyproject.toml's
    [tool.vgprscope]) compiled and compared with its baseline. ``.passed`` / ``.exit_code`` give the
    verdict; a baseline that cannot be compared raises NotComparableError. The rules judge cost (spills,
    scratch, occupancy; registers, SGPRs and LDS only across an occupancy step, else ``changed``);
    ``strict``: tolerance 0 on every count. With ``triton``, the set is
    compiled by that release: a preview of the upgrade, where the baseline's other Triton version is
    expected (a note, not an error)."""
    from .gate import GateRun, run_check

    run = _run(jobs, use_cache, cache, on_progress)
    rules = [rule] if isinstance(rule, str) else list(rule or [])
    cfg_file, base_file, paths = _gate_paths("check", config, baseline,
                                             {"kernel_dir": kernel_dir, "capture": capture}, sources)
    gate = GateRun.of(config=cfg_file, baseline=base_file, variant=list(selection.names(variant, "variant")) or None,
                      arch=list(selection.arch_names(arch)) or None, rule=rules, sources=paths,
                      allow_missing=allow_missing, strict=strict, fail_on_change=fail_on_change,
                      allow_version_change=allow_version_change,
                      toolchain=selection.one_toolchain("check", triton, settings),
                      preview=bool(selection.triton_specs(triton)), **run)
    result, entries = run_check(gate)
    return CheckResult(result, tuple(entries), str(gate.config.baseline), config=gate.config, files=gate.files())


def baseline_save(*, config: PathLike | None = None, baseline: PathLike | None = None, variant: Names = None,
                  arch: Names = None, kernel_dir: PathLike | None = None, capture: PathLike | None = None,
                  triton: Any = None, settings: Any = None, jobs: int | None = None, use_cache: bool = True,
                  cache: PathLike | None = None, on_progress: Progress | None = None,
                  **sources: Any) -> BaselineSaveResult:
    """Compile the gate's set and write the baseline ``check`` compares against (atomically); with
    ``variant`` or ``arch``, only those entries are replaced. With ``triton``, that release's numbers (and
    its version) are saved. Nothing is written when no entry compiled (``.written`` is None)."""
    from .gate import GateRun, save

    run = _run(jobs, use_cache, cache, on_progress)
    cfg_file, base_file, paths = _gate_paths("baseline_save", config, baseline,
                                             {"kernel_dir": kernel_dir, "capture": capture}, sources)
    side = selection.one_toolchain("baseline save", triton, settings)
    return save(GateRun.of(config=cfg_file, baseline=base_file,
                           variant=list(selection.names(variant, "variant")) or None,
                           arch=list(selection.arch_names(arch)) or None, sources=paths, toolchain=side, **run))


@_takes_grid_fields(after="arch")
def diff(*, triton: Any = None, settings: Any = None, variant: Names = None, arch: Names = None,
         dtype: Names = None, causal: bool | None = None, knob: Any = None,
         capture: Any = None, kernel_dir: PathLike | None = None, rule: Names = None,
         config: PathLike | None = None, fail_on_change: bool = False, strict: bool = False, jobs: int | None = None,
         use_cache: bool = True, cache: PathLike | None = None, scheduler: str | None = None,
         executor: Executor | None = None, on_progress: Progress | None = None, **sources: Any) -> DiffResult:
    """The same kernels under two sides, judged by the gate's rules: ``triton=["3.8.0", "3.9.0"]``, or one
    Triton (default the installed one) without and with ``settings``. ``.passed`` is the gate's verdict,
    ``.compared`` how many kernels compiled on both sides; each regressed kernel's spill sites by source
    line, before and after, are in ``.spills``. ``strict``: tolerance 0 on every count (as ``check``)."""
    from ..analysis.diff.core import diff as diff_sides
    from ..analysis.diff.result import DiffResult
    from ..gate.rules import RuleSet, parse_rule
    from .gate import load_config
    from .tasks import Selection, executor_for, main_not_rerun, make_engine, selection_tasks

    fields = _grid_fields(sources)
    keywords = _sources({"capture": capture, "kernel_dir": kernel_dir}, sources)
    _unknown("diff", sources)
    run = _run(jobs, use_cache, cache, on_progress)
    requests = _grid(fields, dtype, causal, knob)
    rules = [rule] if isinstance(rule, str) else list(rule or [])
    before, after = selection.sides(triton, settings)
    cfg = load_config(Path(config) if config else None)
    ruleset = RuleSet(cfg.rules.rules + tuple(parse_rule(r) for r in rules), cfg.rules.strict or strict)
    sel = Selection.of(selection.names(variant, "variant"), selection.arch_names(arch), requests, keywords)
    with executor_for(scheduler, executor) as ex, main_not_rerun():
        engine = make_engine(run["jobs"], run["use_cache"], run["cache_dir"], ex, on_progress)
        core = diff_sides(selection_tasks(sel, engine), before, after, rules=ruleset, engine=engine,
                          fail_on_change=fail_on_change)
    return DiffResult.of(core)


def scan(directory: PathLike | None = None, *, arch: Names = None, jobs: int | None = None,
         use_cache: bool = True, cache: PathLike | None = None, on_progress: Progress | None = None,
         triton: str | Sequence[str] | None = None, loops: bool | None = True) -> ScanResult:
    """The kernels of a Triton cache directory (default $TRITON_CACHE_DIR, else ~/.triton/cache): read from
    the stored AMDGCN / cubin for the arch each was built for, and with ``arch`` recompiled there too.
    ``triton``: one release (or environment) for the entries another Triton wrote: their TTIR compiles there
    and its ptxas gives a stored cubin's spill figures (installed once, as everywhere). An Inductor cache directory
    (``TORCHINDUCTOR_CACHE_DIR``): its generated kernels, each config compiled from its source (README, "torch.compile").
    ``loops``: as ``analyze``'s; None: no loop figure that costs a disassembly is read, not even a kernel's with
    a stack frame (what scan's table asks: it shows none, and a stored read compiles nothing, so that an
    ``nvdisasm`` run would be most of its cost); a later reader of them reads them then."""
    from ..analysis.scan.core import scan as scan_cache
    from ..sources.triton_cache import default_dir
    from .selection import select_archs

    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise UsageError(f"scan({directory!r}): the directory is not a path; allowed: a Triton cache directory's "
                         "path (str or pathlib.Path), or none for $TRITON_CACHE_DIR / ~/.triton/cache")
    from ..compile.toolchains import is_range

    given = [triton] if isinstance(triton, str) else list(triton or [])
    if len(given) > 1 or any(is_range(t) for t in given):
        raise UsageError("scan takes one --triton (the release that wrote the cache, or the one to compile its "
                         f"TTIR with); given: {', '.join(given)}")
    run = _run(jobs, use_cache, cache, on_progress)
    names = selection.arch_names(arch)
    result = scan_cache(Path(directory) if directory else default_dir(), select_archs(names) if names else [],
                        jobs=run["jobs"], use_cache=run["use_cache"], on_progress=on_progress,
                        cache_dir=run["cache_dir"], triton=given[0] if given else None, loops=loops)
    return ScanResult(result.records, directory=result.directory, entries=result.entries, summary=result.summary(),
                      caches=result.caches)
