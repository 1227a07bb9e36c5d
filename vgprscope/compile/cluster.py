"""Compiles on a Dask distributed cluster, as a ``concurrent.futures.Executor`` for the engine.

Only the compile requests travel; answers come back to the client, which parses them and writes the cache
(so a re-run is warm on the client whatever ran the compiles). The workers need vgprscope and the same Triton
(the engine refuses another release's answers) and the kernel files at the same paths.

A cluster that cannot do the work says so in one line instead of hanging: no worker within the connect
timeout, every worker gone for that long mid-run, or the scheduler lost (exit 2, nothing written).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

from ..core.errors import UsageError

# seconds to wait for the scheduler, and for a worker to join it, before saying the cluster cannot be used
CONNECT_TIMEOUT_S = 10


class SchedulerUnreachableError(UsageError):
    """The Dask scheduler address cannot be reached, or it has no worker (exit 2)."""


class ClusterLostError(UsageError):
    """The scheduler or every worker went away mid-run (exit 2): the results would not be whole."""


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """distributed logs every failed connection attempt; the user gets one line from us instead."""
    # tornado.application: the futures a stopped run cancels, each logged with its traceback
    loggers = [logging.getLogger(n) for n in ("distributed", "distributed.client", "distributed.comm.core",
                                              "distributed.batched", "distributed.core", "tornado.application")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, lvl in zip(loggers, levels):
            lg.setLevel(lvl)


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


class DaskExecutor(Executor):
    """Submits to a Dask client; ``check()`` (called by the engine while it waits) raises ClusterLostError
    once the scheduler is gone, or no worker has been there for ``timeout_s``."""

    def __init__(self, client: Any, address: str, timeout_s: float):
        self.client, self.address, self.timeout_s = client, address, timeout_s
        self._inner = client.get_executor(pure=False)
        self._alone_since: float | None = None

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = self._inner.submit(fn, *args, **kwargs)
        return future

    def check(self) -> None:
        if self.client.status not in ("running", "connecting"):
            raise ClusterLostError(f"lost the Dask scheduler at {self.address!r} mid-run; nothing was written: "
                                   "run again when it is back")
        try:
            with _quiet_dask():
                workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
        except TypeError:  # distributed before n_workers existed
            workers = self.client.scheduler_info().get("workers", {})
        except Exception as exc:
            raise ClusterLostError(f"lost the Dask scheduler at {self.address!r} mid-run ({_one_line(exc)}); "
                                   "nothing was written: run again when it is back") from None
        if workers:
            self._alone_since = None
            return
        now = time.monotonic()
        self._alone_since = self._alone_since or now
        if now - self._alone_since > self.timeout_s:
            raise ClusterLostError(f"the Dask scheduler at {self.address!r} has had no worker for "
                                   f"{self.timeout_s:g} s mid-run; nothing was written: start workers, or run "
                                   "without --scheduler")

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait)


@contextlib.contextmanager
def dask_executor(address: str, timeout_s: float | None = None) -> Iterator[DaskExecutor]:
    """An Executor submitting to the Dask scheduler at ``address``, once it has a worker; the client is
    closed afterwards."""
    timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        from distributed import Client
        from distributed.comm import resolve_address
    except ImportError:
        from ..core.extras import install_command

        raise UsageError(f"--scheduler needs Dask distributed, which is not installed; install the 'distributed' "
                         f"extra: {install_command('distributed')}") from None
    try:  # before a Client exists: one half-made by a malformed address closes itself at exit, 20 s later
        resolve_address(address)
    except (ValueError, OSError) as exc:
        raise SchedulerUnreachableError(f"cannot use {address!r} as a Dask scheduler address ({_one_line(exc)}); "
                                        "allowed: HOST:PORT or tcp://HOST:PORT") from None
    with _quiet_dask():
        try:
            client = Client(address, timeout=timeout_s, set_as_default=False)
        except Exception as exc:  # OSError / TimeoutError / ValueError for a malformed address
            raise SchedulerUnreachableError(
                f"cannot reach the Dask scheduler at {address!r} within {timeout_s:g} s: {_one_line(exc)}") from None
        try:
            client.wait_for_workers(1, timeout=timeout_s)
        except Exception:
            client.close()
            raise SchedulerUnreachableError(f"the Dask scheduler at {address!r} has no worker (waited "
                                            f"{timeout_s:g} s): start one with `dask worker {address}`, or run "
                                            "without --scheduler") from None
    try:
        with _quiet_dask():  # a run stopped by an error or Ctrl-C: its one line, not the cancelled futures' logs
            yield DaskExecutor(client, address, timeout_s)
    finally:
        with _quiet_dask():
            client.close()
