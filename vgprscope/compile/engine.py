"""Tasks -> Records: jobs compiled in parallel, cached by the whole compile, parsed here.

A ``Task`` is one CompileJob on one arch with what its row shows (the source's label, kernel, config,
slot). Sources (``vgprscope.sources``: bundled variants, a capture, a Triton cache, a kernel directory)
make them; nothing here knows which. A kernel-directory variant is first *planned* into its jobs by the
same workers (its file's ``check_config`` and ``kernel_specs``), the plans cached beside the compiles.

This process never imports triton for a warm run: workers (``runtime.worker``, standard library and Triton
only) compile and answer with raw outputs and their Triton version; this process checks the version,
parses the outputs into ResourceUsage, applies the occupancy rules and writes the cache.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from ..core.archs import Arch
from ..backends import backend_of, backend_of_usage
from ..core.errors import UsageError
from ..runtime import worker
from ..core.parse.diagnostics import compile_diagnostics, failure_reason
from ..core.records import Config, Diagnostic, KernelIdentity, Record, ResourceUsage, usage_from_dict, usage_to_dict
from ..runtime.plan import PLAN_VERSION
from .cache import CompileCache, entry_key
from .identity import Identity
from ..core.job import CompileJob, FunctionSource, Target
from .toolchains import triton_version as triton_version  # the installed Triton's version; callers import it here

PARSER_VERSION = 5  # 4: the usage carries the hot loop's figures; 5: the compiler's diagnostics and LLVM version
# beside the usage, a failed ptxas's own error line


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
    """The cache entry of a job: what it compiles, the Triton version, and the toolchain's identity (its
    files' fingerprint and the environment variables its Triton reads, inherited or set)."""
    ident = ident if ident is not None else toolchain_identity(job.toolchain)
    return entry_key(job.key(), triton_version, ident.key())


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


@dataclass(frozen=True)
class RowInfo:
    """What a task's row shows, whatever compiles it: the source's label (a variant's name, a captured
    kernel's module), the kernel, the config as the source describes it, the slot the gate compares it by."""

    label: str
    kernel: str
    config: Config
    identity: KernelIdentity
    source: str  # "variants", "capture", "triton-cache"
    source_hash: str = ""
    slot: str = ""
    extras: tuple[tuple[str, Any], ...] = ()
    variant: Any = field(default=None, compare=False)  # the bundled Variant (traffic model, bench)
    toolchain: str = ""  # the side that compiles it, when not the installed Triton as is (Toolchain.label)


@dataclass(frozen=True)
class Task:
    """One job on one arch, or (``job`` None) a row that cannot compile, with its ``reason``."""

    job: CompileJob | None
    arch: Arch
    row: RowInfo
    reason: str | None = None

    def __hash__(self) -> int:
        return hash((self.job.key() if self.job else self.reason, self.arch.name, self.row.label, self.row.kernel,
                     self.row.slot))

    @property
    def config(self) -> Config:
        return self.row.config

    @property
    def variant(self) -> Any:
        return self.row.variant

    @property
    def label(self) -> str:
        return self.row.label

    def vary(self, **options: Any) -> Task:
        """The same task with these launch options set: its job and its row's config follow."""
        job = self.job.with_options(**options) if self.job is not None else None
        return replace(self, job=job, row=replace(self.row, config=self.row.config.with_options(**options)))

    def under(self, toolchain: Any) -> Task:
        """The same task compiled by another toolchain (``compile.toolchains.Toolchain``), with its settings."""
        job = self.job.with_toolchain(toolchain.id, dict(toolchain.settings)) if self.job is not None else None
        return replace(self, job=job, row=replace(self.row, toolchain=toolchain.label))


def target_of(arch: Arch) -> Target:
    """What ``triton.compile`` targets for ``arch`` (its backend's answer)."""
    return backend_of(arch).target(arch)


def parse_output(arch: Arch, out: dict[str, Any]) -> ResourceUsage:
    """One kernel's raw compiler outputs -> ResourceUsage, through the backend's own parser."""
    return backend_of(arch).parse(out)


def launch_limit_reason(arch: Arch, usage: ResourceUsage, num_warps: int | None = None) -> str | None:
    """Why a compiled kernel could not be launched on ``arch`` (Triton only finds out at load time)."""
    return backend_of(arch).launch_limit_reason(arch, usage, num_warps)


def untargetable(arch: Arch) -> str | None:
    if arch.triton_target:
        return None
    return (f"the installed Triton ({triton_version()}) cannot target {arch.name}: {arch.description}; it is "
            "in the table for the occupancy calculator")


# ------------------------------------------------------------------------------------- parsed results

def _result(arch: Arch, answer: dict[str, Any]) -> dict[str, Any]:
    """A worker's answer -> the cached result of its kernel: usage (or error), seconds, num_warps."""
    out: dict[str, Any] = {"seconds": float(answer.get("seconds") or 0.0)}
    if answer.get("num_warps") is not None:  # what the compiler launched with (the occupancy's warps)
        out["num_warps"] = int(answer["num_warps"])
    if answer.get("note"):  # how it was compiled, when not from the files (a capture's snapshot)
        out["note"] = str(answer["note"])
    if answer.get("llvm_version"):
        out["llvm_version"] = str(answer["llvm_version"])
    diagnostics = compile_diagnostics(answer)
    if diagnostics:
        out["diagnostics"] = [d.as_dict() for d in diagnostics]
    if "error" in answer:
        out["error"] = str(answer["error"])
        # the compiler's own reason where the exception gives only the pipeline's ("PassManager::run failed")
        reason = failure_reason(str(answer.get("compile_log") or ""))
        if reason and (reason.startswith("LLVM ERROR") or "PassManager::run failed" in out["error"]):
            out["error"] = reason
        elif out["error"].startswith("PTXASError:"):  # ptxas's first error, without the headline and closing line
            out["error"] = next((d.text() for d in diagnostics if d.tool == "ptxas" and d.severity == "error"),
                                out["error"])
        return out
    try:
        out["usage"] = usage_to_dict(parse_output(arch, answer))
    except Exception as exc:  # a parser failure is a row, never the end of the run
        out["error"] = f"cannot parse the compiler output: {worker.one_line(exc)}"
    return out


def _valid_result(result: Any) -> bool:
    """A cached result of the right shape: an error line, or a usage every count of which is an integer."""
    if not isinstance(result, dict) or not isinstance(result.get("seconds", 0.0), (int, float)):
        return False
    if "num_warps" in result and (isinstance(result["num_warps"], bool) or not isinstance(result["num_warps"], int)):
        return False
    if not isinstance(result.get("llvm_version", ""), str) or not isinstance(result.get("diagnostics", []), list):
        return False
    try:
        [Diagnostic.from_dict(d) for d in result.get("diagnostics", [])]
    except (TypeError, AttributeError):
        return False
    if "error" in result:
        return isinstance(result["error"], str) and bool(result["error"])
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return False
    try:
        u = usage_from_dict(usage)
    except (KeyError, TypeError, ValueError):
        return False
    if u is None:
        return False
    return all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
               for v in backend_of_usage(u).metric_values(u).values())


def _deps_hash(deps: dict[str, str] | None) -> str:
    if not deps:
        return ""
    return hashlib.sha256(json.dumps(sorted(deps.items())).encode()).hexdigest()[:16]


def _record(task: Task, result: dict[str, Any], tv: str, cached: bool, deps: dict[str, str] | None) -> Record:
    from ..backends import occupancy_of

    row = task.row
    usage = usage_from_dict(result.get("usage"))
    status = result.get("error") or "ok"
    occ = None
    if usage is not None:
        warps = cast(int, result.get("num_warps") or task.config.num_warps)
        limit = launch_limit_reason(task.arch, usage, warps)
        status = limit or status
        if limit == launch_limit_reason(task.arch, usage):
            # occupancy 0 for a kernel over the LDS / shared limit; none for a workgroup the arch refuses
            occ = occupancy_of(usage, task.arch, warps, waves_per_eu=task.config.waves_per_eu)
    return Record(variant=row.label, kernel=row.kernel, arch=task.arch.name, config=row.config, status=status,
                  usage=usage, occupancy=occ, compile_seconds=float(result.get("seconds") or 0.0),
                  triton_version=tv, source_hash=_deps_hash(deps) or row.source_hash, cached=cached,
                  identity=row.identity, source=row.source,
                  extras=row.extras + ((("note", result["note"]),) if result.get("note") else ()), slot=row.slot,
                  toolchain=row.toolchain, llvm_version=str(result.get("llvm_version") or ""),
                  diagnostics=tuple(Diagnostic.from_dict(d) for d in result.get("diagnostics") or ()))


def _reason_record(task: Task, reason: str, tv: str) -> Record:
    row = task.row
    return Record(variant=row.label, kernel=row.kernel, arch=task.arch.name, config=row.config, status=reason,
                  triton_version=tv, source_hash=row.source_hash, identity=row.identity, source=row.source,
                  extras=row.extras, slot=row.slot, toolchain=row.toolchain)


# ---------------------------------------------------------------------------------------- executors

def _die_with_parent() -> None:
    """A compile worker ends when the vgprscope process that started it does, however it ends."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the pool
    if hasattr(signal, "pthread_sigmask"):  # held while the pool started this worker (_ctrl_c_held)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent()
    worker.configure()
    # anything a user's module prints when a worker imports it goes to stderr, never into stdout's tables
    os.dup2(2, 1)
    try:
        import triton  # noqa: F401  (imported while the first job is pickled)
    except Exception:
        pass


class _Pool:
    """The process-wide pool of compile workers: created on first use, shared by planning and compiling,
    killed (not drained) on Ctrl-C, shut down at exit."""

    pool: ProcessPoolExecutor | None = None
    size = 0

    @classmethod
    def get(cls, workers: int) -> ProcessPoolExecutor:
        if cls.pool is not None and cls.size >= workers and not getattr(cls.pool, "_broken", False):
            return cls.pool
        cls.close()
        # fork is cheap and safe while this process has not imported triton (no LLVM threads, no kernels
        # decorated for the interpreter); otherwise, and off Linux, a fresh interpreter per worker
        fork_ok = sys.platform.startswith("linux") and "triton" not in sys.modules
        ctx = multiprocessing.get_context("fork" if fork_ok else "spawn")
        cls.pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init)
        cls.size = workers
        return cls.pool

    @classmethod
    def kill(cls) -> None:
        """Stop now: the running compiles are abandoned, their processes killed."""
        pool = cls.pool
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        # The waiting futures are cancelled by the pool's own manager thread (cancel_futures), which also
        # forgets them; the running ones it fails once it sees the killed workers. A future cancelled from
        # another thread stays in its books, and failing it raised InvalidStateError there: a traceback after
        # "interrupted" (CPython's terminate_broken).
        with contextlib.suppress(Exception):
            pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            with contextlib.suppress(Exception):
                p.kill()
        # the manager thread closes its wake-up pipe as it ends; the interpreter's exit writes to that pipe
        # unless it is closed already, and met it half-closed (an OSError traceback after "interrupted")
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None and manager is not threading.current_thread():
            manager.join(timeout=2)
        cls.pool, cls.size = None, 0

    @classmethod
    def close(cls) -> None:
        if cls.pool is not None:
            with contextlib.suppress(Exception):
                cls.pool.shutdown(wait=True, cancel_futures=True)
        cls.pool, cls.size = None, 0


atexit.register(_Pool.close)


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """While the pool starts its workers: a Ctrl-C is held (blocked, not lost) until they have, so that none
    dies of it before its initializer ignores it (a worker's traceback, the pool broken: every row "compile
    worker failed"); the workers inherit the block, and this thread gets the Ctrl-C when it ends."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    held_before = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    try:  # blocked inside the try: a Ctrl-C raised as the block returns still unblocks it
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        yield
    finally:
        if not held_before:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


# seconds between checks that a cluster still has its scheduler and workers, while waiting for answers
_HEALTH_S = 2.0


class _OnCluster:
    """A cluster's executor for another toolchain's requests: each runs under that toolchain on the worker."""

    def __init__(self, executor: Executor, toolchain: dict[str, str]):
        self.executor, self.toolchain = executor, toolchain
        self.check = getattr(executor, "check", None)

    def submit(self, fn: Callable[..., Any], request: dict[str, Any]) -> Future[Any]:
        from .toolchains import run_on_worker

        return self.executor.submit(run_on_worker, self.toolchain, request)


def _lost(exc: BaseException) -> bool:
    """Whether an executor's exception says the cluster went away rather than one compile failed."""
    return isinstance(exc, CancelledError) or type(exc).__name__ in ("CommClosedError", "FutureCancelledError",
                                                                      "CancelledError")


def _in_process(request: dict[str, Any]) -> dict[str, Any]:
    return worker.run(request)


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
    pools: dict[str, Any] = field(default_factory=dict, repr=False)  # toolchain id -> its worker subprocesses
    timeout: float | None = None  # seconds a compile may run (None: $VGPRSCOPE_COMPILE_TIMEOUT or 300; 0: none)
    idents: dict[str, Identity] = field(default_factory=dict, repr=False)  # the last compile's, by toolchain id

    def _executor(self, toolchain_id: str, workers: int) -> Any:
        """Where requests of a toolchain go: the installed Triton's process pool (or the cluster); another
        release's or environment's worker subprocesses (on a cluster: installed there on first use)."""
        if toolchain_id == "":
            return self.executor if self.executor is not None else _Pool.get(max(workers, 1))
        from . import toolchains

        tc = toolchains.by_id(toolchain_id)
        if self.executor is not None:
            return _OnCluster(self.executor, {"kind": tc.kind, "version": tc.version, "python": tc.python})
        if toolchain_id not in self.pools:
            self.pools[toolchain_id] = toolchains.ToolchainPool(tc, max(workers, 1))
        return self.pools[toolchain_id]

    def _submit_all(self, requests: list[dict[str, Any]], on_answer: Callable[[int, dict[str, Any]], None],
                    toolchain_id: str = "") -> None:
        """Answer every request, in parallel when there are several, calling ``on_answer(i, answer)``."""
        if not requests:
            return
        workers = min(self.jobs or os.cpu_count() or 1, len(requests))
        if toolchain_id == "" and self.executor is None and workers <= 1 and not _interpreting():
            # in this process: the worker environment is set and restored around each job
            for i, req in enumerate(requests):
                on_answer(i, _in_process(req))
            return
        pool = self._executor(toolchain_id, workers)
        check = getattr(pool, "check", None)  # a cluster that can tell it lost its workers (compile.cluster)
        futures: dict[Future[Any], int] = {}
        try:
            with _ctrl_c_held():
                for i, req in enumerate(requests):
                    futures[pool.submit(worker.run, req)] = i
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, timeout=_HEALTH_S, return_when=FIRST_COMPLETED)
                if not finished and check is not None:
                    check()
                for fut in finished:
                    i = futures[fut]
                    try:
                        answer = fut.result()
                    except Exception as exc:
                        if self.executor is not None and _lost(exc):
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
                _Pool.kill()  # cancels what waits itself: see _Pool.kill
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
        tv = triton_version()
        out: list[Plan | None] = [None] * len(requests)
        todo: list[int] = []
        for i, req in enumerate(requests):
            hit = self.cache.load_plan(req.key())
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
                self.cache.store_plan(requests[i].key(), plan.as_dict())
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
        tasks = list(tasks)
        records: list[Record | None] = [None] * len(tasks)
        misses: list[int] = []
        keys: dict[int, str] = {}
        versions: dict[int, str] = {}
        idents: dict[str, Identity] = {}  # toolchain id -> its files and environment, read once per call
        self.idents = idents
        timeout = self.timeout if self.timeout is not None else compile_timeout()
        for i, task in enumerate(tasks):
            tv = versions[i] = self._version(task.job.toolchain if task.job is not None else "")
            reason = task.reason or (untargetable(task.arch) if task.job is not None else "nothing to compile")
            if reason:
                records[i] = _reason_record(task, reason, tv)
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
                    result = _result(task.arch, raw) if raw is not None else None
                    if result is not None:
                        self.cache.store(keys[i], entry | {"parser": PARSER_VERSION, "result": result}, None)
                if result is not None and _valid_result(result):
                    records[i] = _record(task, result, tv, True, entry.get("deps"))
                    continue
            misses.append(i)

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
            result = _result(task.arch, answer)
            deps = answer.get("deps")
            if answer.get("error_kind") != worker.ENVIRONMENT:
                # a Triton cache entry's outputs stay in that cache: only what was parsed from them is kept
                raw = None if "stored" in job.source.as_dict() else answer
                snapshot = {"snapshot": _snapshot_hash(job)} if "note" in answer else {}
                self.cache.store(keys[i], {"arch": task.arch.name, "triton_version": tv, "deps": deps or {},
                                           "parser": PARSER_VERSION, "result": result,
                                           "job": job.as_dict()} | snapshot, raw)
            if "error" not in answer:
                self.answers[keys[i]] = answer
            records[i] = _record(task, result, tv, False, deps)
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
                               "timeout": timeout} for i in group], in_group, toolchain_id)
        return [r for r in records if r is not None]

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

    def close(self) -> None:
        """Shut the toolchain workers this engine started (the installed Triton's pool is shared)."""
        for pool in self.pools.values():
            pool.shutdown(wait=False)
        self.pools.clear()


def _interpreting() -> bool:
    from ..runtime.interp import interpreting

    return interpreting()


# ------------------------------------------------------------------------------------------- planning

@dataclass(frozen=True)
class PlanRequest:
    """A kernel-directory variant's file at one config, for one arch: planned by a worker into jobs."""

    directory: Path
    package: str
    file_name: str
    config: dict[str, Any]
    arch: Arch
    options: dict[str, Any]
    tree_hash: str  # of every Python file under the directory: a plan is redone when any changes

    def as_request(self) -> dict[str, Any]:
        return {"op": "plan", "directory": str(self.directory), "package": self.package,
                "file_name": self.file_name, "config": self.config, "options": self.options,
                "compute_units": self.arch.compute_units, "target": vars(target_of(self.arch))}

    def key(self) -> str:
        blob = json.dumps([self.tree_hash, str(self.directory), self.package, self.file_name, self.config,
                           self.arch.name, self.arch.compute_units, self.options, PLAN_VERSION],
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def __hash__(self) -> int:
        return hash(self.key())


@dataclass(frozen=True)
class Plan:
    """A variant request's jobs (kernel name, job), or why it has none."""

    jobs: tuple[tuple[str, CompileJob], ...] = ()
    reason: str | None = None
    cacheable: bool = True  # False: a failure of this machine (an import that failed), never stored

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> Plan:
        if "error" in answer:
            return cls(reason=str(answer["error"]), cacheable=answer.get("error_kind") != worker.ENVIRONMENT)
        if answer.get("reason"):
            return cls(reason=str(answer["reason"]))
        return cls(jobs=tuple((j["name"], CompileJob.from_dict(j["job"])) for j in answer["jobs"]))

    def as_dict(self) -> dict[str, Any]:
        return {"jobs": [{"name": n, "job": j.as_dict()} for n, j in self.jobs], "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan | None:
        try:
            return cls(jobs=tuple((j["name"], CompileJob.from_dict(j["job"])) for j in d.get("jobs") or ()),
                       reason=d.get("reason"))
        except (KeyError, TypeError, ValueError):
            return None


def compile_tasks(tasks: Iterable[Task], jobs: int | None = None, cache: CompileCache | None = None,
                  on_progress: Callable[[int, int], None] | None = None,
                  executor: Executor | None = None) -> list[Record]:
    """Records of every task, in order (see ``Engine``)."""
    return Engine(jobs, cache or CompileCache(), executor, on_progress).compile(tasks)
