"""Compiles on a Dask distributed cluster: its ``concurrent.futures.Executor``, for ``compile_tasks``.

Only the compile jobs travel; results come back to the client, which parses them and writes the cache
(so a re-run is warm on the client whatever ran the compiles). The workers need vgprscope and Triton
installed and the kernel files at the same path (the bundled variants sit inside the installed package).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from concurrent.futures import Executor

from ..errors import UsageError

# seconds to wait for the scheduler before saying it cannot be reached
CONNECT_TIMEOUT_S = 10


class SchedulerUnreachableError(UsageError):
    """The Dask scheduler address cannot be reached (exit 2)."""


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """distributed logs every failed connection attempt; the user gets one line from us instead."""
    loggers = [logging.getLogger(n) for n in ("distributed", "distributed.client", "distributed.comm.core")]
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


@contextlib.contextmanager
def dask_executor(address: str, timeout_s: float | None = None) -> Iterator[Executor]:
    """An Executor submitting to the Dask scheduler at ``address``; the client is closed afterwards."""
    timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask distributed: pip install 'vgprscope[distributed]'") from None
    with _quiet_dask():
        try:
            client = Client(address, timeout=timeout_s, set_as_default=False)
        except Exception as exc:  # OSError / TimeoutError / ValueError for a malformed address
            raise SchedulerUnreachableError(
                f"cannot reach the Dask scheduler at {address!r} within {timeout_s:g} s: {_one_line(exc)}") from None
    try:
        yield client.get_executor(pure=False)
    finally:
        with _quiet_dask():
            client.close()
