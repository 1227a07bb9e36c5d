"""Where compile requests go: the installed Triton's process pool (created on first use, shared, killed on
Ctrl-C), a cluster's executor running another toolchain's requests, and a toolchain's worker subprocesses
(``python <runtime directory> --serve`` under that toolchain's Python)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Executor, Future
from typing import TYPE_CHECKING, Any, ClassVar

from ..runtime import scratch, worker, worker_command
from .toolchains import Toolchain, environment, release

if TYPE_CHECKING:  # the pools' modules (multiprocessing) are loaded when a pool is made: a warm run makes none
    from concurrent.futures import ProcessPoolExecutor


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


def _worker_init(scratch_dir: str) -> None:
    os.environ[scratch.ENV] = scratch_dir  # where it writes its files: the pool's directory, removed with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the pool
    if hasattr(signal, "pthread_sigmask"):  # held while the pool started this worker (ctrl_c_held)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent()
    worker.configure()
    # anything a user's module prints when a worker imports it goes to stderr, never into stdout's tables
    os.dup2(2, 1)
    try:
        import triton  # noqa: F401  (imported while the first job is pickled)
    except Exception:
        pass


class Pool:
    """The process-wide pool of compile workers: created on first use, shared by planning and compiling,
    killed (not drained) on Ctrl-C, shut down at exit; its workers' scratch directory removed with it."""

    pool: ProcessPoolExecutor | None = None
    size = 0
    scratch_dir: str | None = None
    state = ""  # what the workers' compiles depend on besides their requests, as they started (``get``)

    @classmethod
    def get(cls, workers: int, state: str = "") -> ProcessPoolExecutor:
        """The pool, made on first use; made again for more workers, or where ``state`` (the installed Triton's
        identity: its files and the environment variables it reads, ``Identity.key``) differs from the one its
        workers started in: a worker keeps the environment it was forked with, so a setting unset since (a
        library user's ``os.environ``) would still reach its compiles, cached under the key without it."""
        if (cls.pool is not None and cls.size >= workers and cls.state == state
                and not getattr(cls.pool, "_broken", False)):
            return cls.pool
        cls.close()
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork is cheap and safe while this process has not imported triton (no LLVM threads, no kernels
        # decorated for the interpreter); otherwise, and off Linux, a fresh interpreter per worker
        fork_ok = sys.platform.startswith("linux") and "triton" not in sys.modules
        ctx = multiprocessing.get_context("fork" if fork_ok else "spawn")
        cls.scratch_dir = scratch.make()
        cls.pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                                       initargs=(cls.scratch_dir,))
        cls.size, cls.state = workers, state
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
        cls._ended()

    @classmethod
    def close(cls) -> None:
        if cls.pool is not None:
            with contextlib.suppress(Exception):
                cls.pool.shutdown(wait=True, cancel_futures=True)
        cls._ended()

    @classmethod
    def _ended(cls) -> None:
        scratch.remove(cls.scratch_dir)
        cls.pool, cls.size, cls.scratch_dir, cls.state = None, 0, None, ""



@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
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
HEALTH_S = 2.0


class OnCluster:
    """A cluster's executor for another toolchain's requests: each runs under that toolchain on the worker."""

    def __init__(self, executor: Executor, toolchain: dict[str, str]):
        self.executor, self.toolchain = executor, toolchain
        self.check = getattr(executor, "check", None)

    def submit(self, fn: Callable[..., Any], request: dict[str, Any]) -> Future[Any]:
        return self.executor.submit(run_on_worker, self.toolchain, request)


def lost(exc: BaseException) -> bool:
    """Whether an executor's exception says the cluster went away rather than one compile failed."""
    return isinstance(exc, CancelledError) or type(exc).__name__ in ("CommClosedError", "FutureCancelledError",
                                                                      "CancelledError")


# One compile at a time in this process: a compile sets process-wide state for its run and puts it back after (the
# worker environment, Python's temporary directory), so two threads' compiles would each put back what the other
# set, and Triton's code generator is not re-entrant either.
_IN_PROCESS = threading.Lock()


def in_process(request: dict[str, Any]) -> dict[str, Any]:
    with _IN_PROCESS:
        return worker.run(request)


class ToolchainPool:
    """The compile workers of one toolchain, one pool per toolchain per process (``get``), shared by every engine:
    ``python <runtime> --serve`` subprocesses under that toolchain's Python (each imports its Triton: seconds),
    one request at a time each, fed by as many threads as the most workers asked for. A worker is started when a
    request finds none idle, and kept for the next request (of this engine or a later one); one that dies
    answers with an error (not cached) and the next request starts another. Killed (Ctrl-C) it is forgotten: the
    next ``get`` makes a new one. Workers end when this process does (their stdin closes, ``close_all`` at
    exit); their scratch directory is removed when the pool is closed or killed."""

    _pools: ClassVar[dict[str, ToolchainPool]] = {}  # toolchain id -> its pool in this process
    _pools_lock = threading.Lock()

    def __init__(self, toolchain: Toolchain, workers: int, state: str = ""):
        from concurrent.futures import ThreadPoolExecutor

        self.toolchain, self.state = toolchain, state
        self.size = max(workers, 1)
        self._threads = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="vgprscope-toolchain")
        self._procs: list[subprocess.Popen[str]] = []  # every worker alive or not yet seen dead
        self._idle: list[subprocess.Popen[str]] = []  # those waiting for a request
        self._lock = threading.Lock()
        self._scratch: str | None = None
        self._ended = False

    @classmethod
    def get(cls, toolchain: Toolchain, workers: int, state: str = "") -> ToolchainPool:
        """This process's pool of a toolchain, made on first use, grown to ``workers`` threads if it has fewer
        (its workers kept). ``state``: what the workers' compiles depend on besides their requests (the
        toolchain's files and the environment they start in: ``Identity.key``); a pool started in another
        state is closed and a new one made (a toolchain rebuilt at the same version, a setting unset)."""
        with cls._pools_lock:
            pool = stale = cls._pools.get(toolchain.id)
            if pool is None or pool.state != state:
                pool = cls._pools[toolchain.id] = cls(toolchain, workers, state)
            else:
                stale = None
                if workers > pool.size:
                    pool._grow(workers)
        if stale is not None:
            stale.close()
        return pool

    def _grow(self, workers: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            old, self.size = self._threads, workers
            self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vgprscope-toolchain")
        old.shutdown(wait=False)  # what it was given still runs; its threads end then

    def _forget(self) -> None:
        with ToolchainPool._pools_lock:
            if ToolchainPool._pools.get(self.toolchain.id) is self:
                del ToolchainPool._pools[self.toolchain.id]

    def _take(self) -> subprocess.Popen[str] | None:
        """An idle worker, or a new one; None once the pool has ended."""
        with self._lock:
            if self._ended:
                return None
            while self._idle:
                proc = self._idle.pop()
                if proc.poll() is None:
                    return proc
                self._procs.remove(proc)  # died while idle: another is started
            if self._scratch is None:
                self._scratch = scratch.make()
            env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": "", scratch.ENV: self._scratch}
            proc = subprocess.Popen(worker_command(self.toolchain.python, "--serve"), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=None, text=True, env=env,
                                    start_new_session=True)  # a terminal's Ctrl-C is the parent's (kill())
            self._procs.append(proc)
            return proc

    def _put_back(self, proc: subprocess.Popen[str], healthy: bool) -> None:
        with self._lock:
            if healthy and not self._ended:
                self._idle.append(proc)
                return
            if proc in self._procs:
                self._procs.remove(proc)
        _end_worker(proc)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request's answer from a worker of this pool (the calling thread waits for it)."""
        proc = self._take()
        if proc is None:
            return {"error": f"the Triton {self.toolchain.version} compile workers were stopped",
                    "error_kind": "environment", "triton_version": self.toolchain.version}
        answer: dict[str, Any] | None = None
        try:
            if proc.stdin is None or proc.stdout is None:  # opened with pipes: never
                raise OSError("the compile worker has no pipes")
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            answer = json.loads(line) if line else None
        except (OSError, ValueError):
            answer = None
        finally:
            self._put_back(proc, answer is not None)  # one that did not answer is ended
        if answer is None:
            code = proc.wait()
            why = "a compile ran past its time limit and would not stop" if code == 124 else f"exit code {code}"
            return {"error": f"the Triton {self.toolchain.version} compile worker died ({why})",
                    "error_kind": "environment", "triton_version": self.toolchain.version}
        return dict(answer)

    def submit(self, fn: Any, request: dict[str, Any]) -> Future[dict[str, Any]]:  # fn: worker.run, run there
        with self._lock:
            threads = self._threads
        return threads.submit(self.ask, request)

    def _end(self) -> tuple[list[subprocess.Popen[str]], Any]:
        """Forgotten by the process and ended: no request starts a worker any more; its workers and threads."""
        self._forget()
        with self._lock:
            self._ended = True
            procs, self._procs, self._idle = self._procs, [], []
            return procs, self._threads

    def kill(self) -> None:
        """Stop now (Ctrl-C): the running compiles are abandoned, their workers killed; the next ``get`` of this
        toolchain makes a new pool."""
        procs, threads = self._end()
        for p in procs:
            with contextlib.suppress(Exception):
                p.kill()
        threads.shutdown(wait=False, cancel_futures=True)
        self._remove_scratch()

    def close(self, timeout: float = 5.0) -> None:
        """End every worker: its stdin closed, it ends after its request (killed after ``timeout`` seconds)."""
        import time

        procs, threads = self._end()
        for p in procs:
            with contextlib.suppress(Exception):
                if p.stdin is not None:
                    p.stdin.close()
        deadline = time.monotonic() + timeout
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=max(deadline - time.monotonic(), 0.01))
            _end_worker(p)
        threads.shutdown(wait=False, cancel_futures=True)
        self._remove_scratch()

    def _remove_scratch(self) -> None:
        with self._lock:
            scratch.remove(self._scratch)
            self._scratch = None

    @classmethod
    def close_all(cls) -> None:
        """Every toolchain's pool closed (at exit)."""
        with cls._pools_lock:
            pools = list(cls._pools.values())
        for pool in pools:
            pool.close()


def _end_worker(proc: subprocess.Popen[str]) -> None:
    """A toolchain worker killed (if it still runs), reaped, its pipes closed."""
    with contextlib.suppress(Exception):
        proc.kill()
        proc.wait(timeout=5)
    for pipe in (proc.stdin, proc.stdout):
        with contextlib.suppress(Exception):
            if pipe is not None:
                pipe.close()


def run_on_worker(toolchain: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A compile request under a toolchain on a Dask worker: the release is installed there on first use
    (as here), and a worker subprocess of its Python answers (the worker process's pool of that toolchain)."""
    tc = release(toolchain["version"]) if toolchain["kind"] == "release" else environment(toolchain["python"])
    return ToolchainPool.get(tc, 1).ask(request)


def kill_pools() -> None:
    """Every pool of this process killed, with their scratch directories (a Ctrl-C's exit, which runs no atexit
    handler: those the interrupted compile did not use are killed here)."""
    Pool.kill()
    with ToolchainPool._pools_lock:
        pools = list(ToolchainPool._pools.values())
    for pool in pools:
        pool.kill()


def _close_pools() -> None:
    """At exit: the installed Triton's pool first (a forked worker holds a copy of every toolchain worker's
    stdin, which then would not close), then every toolchain's."""
    Pool.close()
    ToolchainPool.close_all()


atexit.register(_close_pools)
