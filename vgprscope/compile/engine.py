"""Tasks -> Records: jobs compiled in parallel, cached by the whole compile, parsed (``results``).

A ``Task`` is one CompileJob on one arch with what its row shows (the source's label, kernel, config,
slot). Sources (``vgprscope.sources``: bundled variants, a capture, a Triton cache, a kernel directory)
make them; nothing here knows which. A kernel-directory variant is first *planned* into its jobs by the
same workers (its file's ``check_config`` and ``kernel_specs``), the plans cached beside the compiles.

This process never imports triton for a warm run: workers (``runtime.worker``, standard library and Triton
only) compile and answer with raw outputs and their Triton version; this process checks the version,
parses the outputs into ResourceUsage, applies the occupancy rules and writes the cache.

Beside this module: ``task`` (what a task is), ``plan`` (a variant request and its plan), ``executors``
(where requests run: the process pool, a cluster, a toolchain's workers), ``results`` (an answer -> the
cached result -> a Record).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field, replace
from typing import Any, cast

from ..backends import backend_of
from ..backends.base import CompilerWarnings, warning_options
from ..core.archs import Arch
from ..core.errors import UsageError
from ..core.job import CompileJob, FunctionSource
from ..core.records import Record
from ..runtime import worker
from .cache import CompileCache, entry_key
from .executors import HEALTH_S, OnCluster, Pool, ToolchainPool, ctrl_c_held, in_process, lost
from .identity import Identity
from .plan import Plan, PlanRequest
from .results import PARSER_VERSION, reason_record, record_of, result_of, valid_result, with_every_loop_figure
from .task import Task
from .toolchains import triton_version as triton_version  # the installed Triton's version; callers import it here


class WorkerVersionError(UsageError):
    """A compile worker answered with another Triton than this run compiles with (exit 2)."""


class ExecutorLostError(UsageError):
    """The executor (a Dask scheduler) went away mid-run: the results cannot be trusted whole (exit 2)."""


class ToolchainBrokenError(UsageError):
    """A failure came from the toolchain's own files (they fail to import, changed or went missing during the
    run): nothing of it is cached, and the run stops with one line naming the toolchain (exit 2)."""


def toolchain_identity(toolchain_id: str) -> Identity:
    """A toolchain's files and the environment its Triton reads, as they are now (``compile.identity``)."""
    from . import identity, toolchains

    return identity.identity("" if toolchain_id == "" else toolchains.by_id(toolchain_id).python)


def cache_key(job: CompileJob, triton_version: str, ident: Identity | None = None) -> str:
    """The cache entry of a job: what it compiles, the Triton version, the toolchain's identity (its
    files' fingerprint and the environment variables its Triton reads, inherited or set) and the runtime's
    code that turns the job into the compiler's inputs (``runtime.code_hash``: an answer, failures included,
    made by other code is made again)."""
    from .. import runtime

    ident = ident if ident is not None else toolchain_identity(job.toolchain)
    return entry_key(job.key(), triton_version, ident.key() + runtime.code_hash())


def compile_timeout() -> float:
    """Seconds one compile may run ($VGPRSCOPE_COMPILE_TIMEOUT, default 300; 0 for none)."""
    raw = os.environ.get("VGPRSCOPE_COMPILE_TIMEOUT", "")
    if not raw.strip():
        return worker.DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise UsageError(f"VGPRSCOPE_COMPILE_TIMEOUT={raw!r} is not a number of seconds; allowed: a number >= 0 "
                         "(0: no limit)")
    return value


def _snapshot_hash(job: CompileJob) -> str:
    snap = job.source.snapshot if isinstance(job.source, FunctionSource) else ""
    return hashlib.sha256(snap.encode()).hexdigest()[:32] if snap else ""


def _broken(toolchain_id: str, ident: Identity, error: str) -> ToolchainBrokenError:
    from . import toolchains

    tc = toolchains.by_id(toolchain_id)
    where = f" ({ident.directory})" if ident.directory is not None else ""
    if tc.kind == "release":
        fix = f"reinstall it: `vgprscope toolchains remove {tc.version}`, then run again (it installs anew)"
    elif tc.kind == "environment":
        fix = (f"repair Triton in that environment ({tc.python}); `vgprscope toolchains remove VERSION` removes "
               "only releases vgprscope installed")
    else:
        fix = f"reinstall it (pip install --force-reinstall triton=={tc.version}), then run again"
    name = "the installed Triton" if tc.kind == "installed" else f"the Triton {tc.version} toolchain"
    return ToolchainBrokenError(f"{name}{where} is broken or changed during the run ({error}); nothing of it was "
                                f"cached: {fix}")


def untargetable(arch: Arch) -> str | None:
    if arch.triton_target:
        return None
    return (f"the installed Triton ({triton_version()}) cannot target {arch.name}: {arch.description}; it is "
            "in the table for the occupancy calculator")


@dataclass
class Engine:
    """Compiles tasks on ``jobs`` processes (default: all cores), or on ``executor`` (any
    ``concurrent.futures.Executor``: a Dask cluster's; not shut down here). A compile that fails is a row
    with its one-line error; a worker with another Triton stops the run (WorkerVersionError)."""

    jobs: int | None = None
    cache: CompileCache = field(default_factory=CompileCache)
    executor: Executor | None = None
    on_progress: Callable[[int, int], None] | None = None
    # this run's raw outputs by cache key, for ``raw_outputs`` when the cache cannot keep them
    answers: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    timeout: float | None = None  # seconds a compile may run (None: $VGPRSCOPE_COMPILE_TIMEOUT or 300; 0: none)
    idents: dict[str, Identity] = field(default_factory=dict, repr=False)  # the last compile's, by toolchain id
    # every loop figure (the gate loop's matrix share and lines too), or only those that come free and the
    # gate's spill figures (False: a view that shows neither, as analyze's table), or only those that come free
    # (None: a view that shows no loop figure and whose reads compile nothing, as scan's table of stored
    # cubins): ``backends.loops.read_loops``
    loops: bool | None = True
    # the compiler's warnings asked for beyond its defaults (ptxas --warn-on-spills, LLVM warn-stack-size): launch
    # options added to every job of their vendor, so part of each key
    warnings: CompilerWarnings = field(default_factory=CompilerWarnings)

    def _executor(self, toolchain_id: str, workers: int) -> Any:
        """Where requests of a toolchain go: the installed Triton's process pool (or the cluster); another
        release's or environment's worker subprocesses, this process's pool of them (on a cluster: installed
        there on first use). Both pools are shared by every engine and end with the process."""
        if toolchain_id == "":
            if self.executor is not None:
                return self.executor
            # new workers where the installed Triton's files or the environment it reads changed
            ident = self.idents.get("") or toolchain_identity("")
            return Pool.get(max(workers, 1), ident.key())
        from . import toolchains

        tc = toolchains.by_id(toolchain_id)
        if self.executor is not None:
            return OnCluster(self.executor, {"kind": tc.kind, "version": tc.version, "python": tc.python})
        # this process's, shared with every engine; new workers where the toolchain's files or environment changed
        ident = self.idents.get(toolchain_id) or toolchain_identity(toolchain_id)
        return ToolchainPool.get(tc, max(workers, 1), ident.key())

    def _submit_all(self, requests: list[dict[str, Any]], on_answer: Callable[[int, dict[str, Any]], None],
                    toolchain_id: str = "") -> None:
        """Answer every request, in parallel when there are several, calling ``on_answer(i, answer)``."""
        if not requests:
            return
        workers = min(self.jobs or os.cpu_count() or 1, len(requests))
        if toolchain_id == "" and self.executor is None and workers <= 1 and not _interpreting():
            # in this process: the worker environment is set and restored around each job
            for i, req in enumerate(requests):
                on_answer(i, in_process(req))
            return
        pool = self._executor(toolchain_id, workers)
        check = getattr(pool, "check", None)  # a cluster that can tell it lost its workers (compile.cluster)
        futures: dict[Future[Any], int] = {}
        try:
            with ctrl_c_held():
                for i, req in enumerate(requests):
                    futures[pool.submit(worker.run, req)] = i
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, timeout=HEALTH_S, return_when=FIRST_COMPLETED)
                if not finished and check is not None:
                    check()
                for fut in finished:
                    i = futures[fut]
                    try:
                        answer = fut.result()
                    except Exception as exc:
                        if self.executor is not None and lost(exc):
                            if check is not None:
                                check()
                            raise ExecutorLostError("the compile cluster went away mid-run "
                                                    f"({worker.one_line(exc)}); nothing was written: run "
                                                    "again") from None
                        # a crashed worker: a row with the reason, not cached
                        answer = {"error": f"compile worker failed: {worker.one_line(exc)}",
                                  "error_kind": worker.ENVIRONMENT}
                    on_answer(i, answer)
        except BaseException:
            if toolchain_id == "" and self.executor is None:
                Pool.kill()  # cancels what waits itself: see Pool.kill
                raise
            for fut in futures:
                fut.cancel()
            kill = getattr(pool, "kill", None) if toolchain_id else None
            if kill is not None:
                kill()
            raise

    def _check_version(self, answer: dict[str, Any], expected: str) -> None:
        got = answer.get("triton_version")
        if got and got != expected:
            raise WorkerVersionError(f"a compile worker runs Triton {got}, this run compiles with Triton {expected}: "
                                     "its results would be another release's; give every worker the same Triton")

    # ------------------------------------------------------------------------------------ planning

    def plan(self, requests: Sequence[PlanRequest]) -> list[Plan]:
        """Each kernel-directory variant request -> its jobs, or the reason it has none (cached by the
        directory's content, the file, the config and the arch)."""
        from .. import runtime
        from .identity import import_environment

        # a plan is its import's (keyed by where it imports) and its planning code's
        tv, env = triton_version(), import_environment() + runtime.code_hash()
        out: list[Plan | None] = [None] * len(requests)
        todo: list[int] = []
        for i, req in enumerate(requests):
            hit = self.cache.load_plan(req.key(env))
            plan = Plan.from_dict(hit) if hit is not None else None
            if plan is not None:
                out[i] = plan
            else:
                todo.append(i)

        def answered(j: int, answer: dict[str, Any]) -> None:
            i = todo[j]
            self._check_version(answer, tv)
            plan = Plan.from_answer(answer)
            if plan.cacheable:
                self.cache.store_plan(requests[i].key(env), plan.as_dict())
            out[i] = plan

        self._submit_all([requests[i].as_request() for i in todo], answered)
        return [p for p in out if p is not None]

    def ask(self, requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answers of the installed Triton's workers to other requests than compiles (``derive``), in order."""
        tv = triton_version()
        if not requests:
            return []
        # always in a worker process (never this one: importing a user's module here would import triton
        # before the compile pool forks)
        pool = self._executor("", min(self.jobs or os.cpu_count() or 1, len(requests)))
        futures = [pool.submit(worker.run, dict(r)) for r in requests]
        out = []
        for fut in futures:
            try:
                answer = fut.result()
            except Exception as exc:
                answer = {"error": f"compile worker failed: {worker.one_line(exc)}", "error_kind": worker.ENVIRONMENT}
            self._check_version(answer, tv)
            out.append(answer)
        return out

    # ------------------------------------------------------------------------------------ compiling

    def _version(self, toolchain_id: str) -> str:
        """The Triton version a toolchain compiles with (what its answers and cache entries must say)."""
        from . import toolchains

        return triton_version() if toolchain_id == "" else toolchains.by_id(toolchain_id).version

    def compile(self, tasks: Iterable[Task]) -> list[Record]:
        """Records of every task, in order. Cached entries are read (and checked), the rest compiled, each
        under its job's toolchain (one after the other, each on ``jobs`` workers)."""
        tasks = [self._with_warnings(t) for t in tasks]
        records: list[Record | None] = [None] * len(tasks)
        misses: list[int] = []
        unread: list[tuple[int, dict[str, Any]]] = []  # cached with loop figures this run reads, and unread
        keys: dict[int, str] = {}
        versions: dict[int, str] = {}
        idents: dict[str, Identity] = {}  # toolchain id -> its files and environment, read once per call
        self.idents = idents
        timeout = self.timeout if self.timeout is not None else compile_timeout()
        for i, task in enumerate(tasks):
            tv = versions[i] = self._version(task.job.toolchain if task.job is not None else "")
            reason = task.reason or (untargetable(task.arch) if task.job is not None else "nothing to compile")
            if reason:
                records[i] = reason_record(task, reason, tv)
                continue
            job = cast(CompileJob, task.job)  # a task without a job has a reason
            if job.toolchain not in idents:
                idents[job.toolchain] = toolchain_identity(job.toolchain)
            keys[i] = cache_key(job, tv, idents[job.toolchain])
            entry = self.cache.load(keys[i], arch=task.arch.name, triton_version=tv)
            if entry is not None and entry.get("snapshot", "") not in ("", _snapshot_hash(job)):
                entry = None  # compiled from another capture's snapshot of the kernel
            if entry is not None:
                result = entry["result"]
                if entry.get("parser") != PARSER_VERSION:  # compiled before, parsed by an older parser
                    raw = self.cache.load_raw(keys[i])
                    # every figure where its text is at hand (an NVIDIA entry whose SASS was read with it)
                    result = result_of(task.arch, raw, True if raw.get("sass") else self.loops) if raw is not None \
                        else None
                    if result is not None:
                        self.cache.store(keys[i], entry | {"parser": PARSER_VERSION, "result": result}, None)
                if result is not None and valid_result(result, task.arch):
                    if self.loops and result.get("loops_unread"):
                        unread.append((i, entry | {"result": result}))
                        continue
                    records[i] = record_of(task, result, tv, True, entry.get("deps"))
                    continue
            misses.append(i)
        for i, result in self._read_loops(tasks, keys, unread):
            if result is None:  # its raw outputs are unreadable: compiled again, which heals the entry
                misses.append(i)
            else:
                records[i] = record_of(tasks[i], result, versions[i], True, dict(unread)[i].get("deps"))

        done = 0
        if self.on_progress:
            self.on_progress(0, len(misses))

        def answered(i: int, answer: dict[str, Any]) -> None:
            nonlocal done
            task, tv = tasks[i], versions[i]
            job = cast(CompileJob, task.job)  # compiled: it has a job
            self._check_version(answer, tv)
            ident = idents[job.toolchain]
            if "error" in answer and (answer.get("toolchain") or ident.changed()):
                raise _broken(job.toolchain, ident, str(answer["error"]))
            # a Triton cache entry's outputs are not kept (its source says: ``keeps_outputs``): a figure left unread
            # is read again from the entry's files when asked (``_read_loops`` finds no raw outputs: the entry is
            # read again, disassembled then)
            result = result_of(task.arch, answer, self.loops)
            deps = answer.get("deps")
            if answer.get("error_kind") != worker.ENVIRONMENT:
                # a Triton cache entry's outputs stay in that cache: only what was parsed from them is kept
                raw = answer if job.source.keeps_outputs else None
                snapshot = {"snapshot": _snapshot_hash(job)} if "note" in answer else {}
                self.cache.store(keys[i], {"arch": task.arch.name, "triton_version": tv, "deps": deps or {},
                                           "parser": PARSER_VERSION, "result": result,
                                           "job": job.as_dict()} | snapshot, raw)
            if "error" not in answer:
                self.answers[keys[i]] = answer
            records[i] = record_of(task, result, tv, False, deps)
            done += 1
            if self.on_progress:
                self.on_progress(done, len(misses))

        by_toolchain: dict[str, list[int]] = {}
        jobs = {i: cast(CompileJob, tasks[i].job) for i in misses}
        for i in misses:
            by_toolchain.setdefault(jobs[i].toolchain, []).append(i)
        for toolchain_id, group in by_toolchain.items():
            def in_group(j: int, answer: dict[str, Any], group: list[int] = group) -> None:
                answered(group[j], answer)

            # the environment the key names goes with each request: a cluster's worker compiles under it too
            env = idents[toolchain_id].environment
            self._submit_all([{"op": "compile", "job": jobs[i].as_dict() | {"settings": env | dict(jobs[i].settings)},
                               "timeout": timeout, "disassemble": _DISASSEMBLE[self.loops]}
                              for i in group], in_group, toolchain_id)
        return [r for r in records if r is not None]

    def _with_warnings(self, task: Task) -> Task:
        if not self.warnings or task.job is None:
            return task
        extra = warning_options(backend_of(task.arch), self.warnings, dict(task.job.options))
        return replace(task, job=task.job.with_options(**extra)) if extra else task

    def _read_loops(self, tasks: list[Task], keys: dict[int, str],
                    unread: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any] | None]]:
        """Cached results whose loop figures were left unread, read now from their raw outputs (an NVIDIA
        cubin's ``nvdisasm``, on as many threads as compiles: each is a process) and stored back with them:
        a later request reads them from the entry. None for an entry whose raw outputs are unreadable."""
        if not unread:
            return []

        def one(item: tuple[int, dict[str, Any]]) -> tuple[int, dict[str, Any] | None]:
            i, entry = item
            raw = self.cache.load_raw(keys[i])
            if raw is None:
                self.cache.discard(keys[i])
                return i, None
            result, grown = with_every_loop_figure(tasks[i].arch, entry["result"], raw)
            self.cache.store(keys[i], entry | {"result": result}, grown)
            return i, result

        workers = min(self.jobs or os.cpu_count() or 1, len(unread))
        if workers <= 1:
            return [one(item) for item in unread]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vgprscope-loops") as pool:
            return list(pool.map(one, unread))

    def raw_outputs(self, task: Task) -> dict[str, Any] | None:
        """The compiler's raw outputs of a task compiled before (TTGIR, AMDGCN, cubin), for ``explain``."""
        if task.job is None or task.reason:
            return None
        tv = self._version(task.job.toolchain)
        key = cache_key(task.job, tv, self.idents.get(task.job.toolchain))
        if key in self.answers:
            return self.answers[key]
        if self.cache.load(key, arch=task.arch.name, triton_version=tv) is None:
            return None
        raw = self.cache.load_raw(key)
        if raw is None:  # unreadable beside a whole entry: a miss, compiled again, which heals the entry
            self.cache.discard(key)
            self.compile([task])
            raw = self.answers.get(key)
        return raw


def _interpreting() -> bool:
    from ..runtime.interp import interpreting

    return interpreting()


# which cubins a compile worker disassembles (runtime.compile): every one where every loop figure is read; else
# those of kernels with local memory, whose loops may spill (``loops`` False), or none (None)
_DISASSEMBLE = {True: "always", False: "local", None: "never"}


def compile_tasks(tasks: Iterable[Task], jobs: int | None = None, cache: CompileCache | None = None,
                  on_progress: Callable[[int, int], None] | None = None,
                  executor: Executor | None = None, loops: bool | None = True) -> list[Record]:
    """Records of every task, in order (see ``Engine``)."""
    return Engine(jobs, cache or CompileCache(), executor, on_progress, loops=loops).compile(tasks)
