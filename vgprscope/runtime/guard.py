"""What surrounds a compile in a worker: the user's and Triton's output kept off the answers, MLIR's error
diagnostics kept, and a time limit."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

from . import protocol
from .protocol import TIMEOUT_EXIT, CompileTimeout

# how long past its limit a compile stuck where no signal reaches (native code) keeps its worker process, at
# least: the alarm's CompileTimeout gets that long to unwind a compile in Python code first
HARD_STOP_GRACE_S = 10.0


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """What a user's module prints while it is imported, and anything else written to fd 1, goes to stderr:
    a command's stdout holds its tables and JSON only."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def quiet(diagnostics: list[str] | None = None, log: list[str] | None = None) -> Iterator[io.StringIO]:
    """Keep Triton's and LLVM's prints, warnings and dumps out of the user's output. Python-level prints
    (Triton's ptxas log among them) are returned; C-level output on fds 1 and 2 is discarded, except the
    MLIR ``error:`` diagnostics, kept in ``diagnostics`` (a Gluon layout the module rejects is said there
    only: the exception reads "error encountered during parsing"), and LLVM's and MLIR's diagnostic lines,
    kept in ``log`` (``compiler_lines``)."""
    buf = io.StringIO()
    err = io.StringIO()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                yield buf
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            if diagnostics is not None or log is not None:
                sink.seek(0)
                text = sink.read().decode("utf-8", "replace") + "\n" + err.getvalue()
                if diagnostics is not None:
                    diagnostics += _mlir_errors(text)
                if log is not None:
                    log += compiler_lines(text)


# What LLVM and MLIR print when they have something to say (vgprscope's diagnostics parser reads these lines):
# ``LLVM ERROR: ...`` and ``[LOC: ]warning|remark|error|note: ...``; the IR dumps around them are left out.
_COMPILER_LINE = re.compile(r"^(?:LLVM ERROR: |(?:.*?: )?(?:warning|remark|error|note): )")
_COMPILER_LINES = 200


def compiler_lines(text: str) -> list[str]:
    """The diagnostic lines of a compile's C-level output, each once, at most ``_COMPILER_LINES``."""
    kept = dict.fromkeys(ln.rstrip() for ln in text.splitlines() if _COMPILER_LINE.match(ln))
    return list(kept)[:_COMPILER_LINES]


def _mlir_errors(text: str) -> list[str]:
    """MLIR's ``FILE:LINE:COL: error: MESSAGE`` diagnostics of a compile's output, each as one line
    ``FILE:LINE: MESSAGE`` (the message's own continuation lines joined; the source excerpt and caret after
    it left out)."""
    found: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head, sep, message = line.partition(": error: ")
        if not sep:
            continue
        parts = head.rsplit(":", 2)
        where = f"{os.path.basename(parts[0])}:{parts[1]}" if len(parts) == 3 else os.path.basename(head)
        more = []
        for nxt in lines[i + 1:i + 4]:
            if not nxt.strip() or nxt.startswith(" ") or ": note: " in nxt or ": error: " in nxt:
                break
            more.append(nxt.strip())
        found.append(" ".join([f"{where}: {message.strip()}", *more]))
    return found


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Stop a compile that runs past ``seconds``: an alarm raises CompileTimeout in it (Python code: Triton's
    front end, a ptxas it waits on); in a worker process of vgprscope's own, a compile stuck where no signal
    reaches (LLVM) ends the process a little later, which its pool answers for as a dead worker."""
    import signal
    import threading

    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer") or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None) \
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise CompileTimeout(f"the compile ran past {seconds:g} s and was stopped (VGPRSCOPE_COMPILE_TIMEOUT sets "
                             "the limit)")

    hard = None
    if protocol.own_process():
        hard = threading.Timer(seconds + max(HARD_STOP_GRACE_S, seconds / 2), os._exit, (TIMEOUT_EXIT,))
        hard.daemon = True
        hard.start()
    signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        if hard is not None:
            hard.cancel()


