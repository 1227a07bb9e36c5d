"""The worker protocol: request and answer kinds, the environment every compile runs in, and failures as one
line with their kind.

A failure is an answer with ``error`` (one line) and ``error_kind``: ``compile`` for the compiler's own
verdict on this input (cacheable), ``environment`` for anything this machine caused (a file or module
missing, memory, a killed tool, an interrupted run): never cached, the next run looks again. Every answer
carries the worker's Triton version, so a client never takes another release's numbers for its own.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator

PROTOCOL = 1


# Part of every cached plan's key: a plan made by another encoding of the launch is made again (``plan``).
PLAN_VERSION = 3


COMPILE = "compile"


ENVIRONMENT = "environment"


# Set in every worker before Triton is imported.
_ENV = {
    # kernels decorated while TRITON_INTERPRET is set are interpreter objects and cannot be compiled
    "TRITON_INTERPRET": "0",
    # vgprscope's cache keys by the whole compile; Triton's would hide compile times and leave nothing to parse
    "TRITON_ALWAYS_COMPILE": "1",
    "TRITON_DUMP_PTXAS_LOG": "1",
}


_ENV_DEFAULTS = {"TRITON_DEFAULT_FP_FUSION": "1"}  # Triton 3.9 warns while it is unset; 1 is its default


FORCED_ENV = tuple(_ENV)  # the same in every compile: vgprscope's cache key leaves them out


ENV_DEFAULTS = dict(_ENV_DEFAULTS)


# Seconds a compile may run before it is stopped and made a row (VGPRSCOPE_COMPILE_TIMEOUT in the engine).
DEFAULT_TIMEOUT = 300.0


TIMEOUT_EXIT = 124  # a worker that ended itself because a compile would not stop


# Whether this process is a compile worker of its own (configure() ran), not a user's process compiling in place.
_OWN_PROCESS = False


def configure() -> None:
    """The environment of a compile worker, for good (call before triton is imported there)."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    os.environ.update(_ENV)
    for k, v in _ENV_DEFAULTS.items():
        os.environ.setdefault(k, v)
    # Triton still writes its artifacts; keep them out of the user's ~/.triton
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(tempfile.gettempdir(), "vgprscope-triton"))


def own_process() -> bool:
    """Whether this process is a compile worker of its own (``configure`` ran), not a user's process."""
    return _OWN_PROCESS


@contextlib.contextmanager
def compile_env(settings: dict[str, str] | None = None) -> Iterator[None]:
    """The worker environment (and a job's compiler settings) for one in-process compile, restored after."""
    wanted = dict(_ENV) | {k: os.environ.get(k, v) for k, v in _ENV_DEFAULTS.items()} | dict(settings or {})
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def triton_version() -> str:
    try:
        import triton

        return str(triton.__version__)
    except Exception:
        return ""


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and what it says, not the source excerpt around it.

    Triton's CompilationError puts the source excerpt and a caret first and the reason after the caret
    (a failed ``tl.static_assert``: its message); PTXASError wraps ptxas's own stderr between a headline
    and the repro command: that stderr is the reason."""
    text = str(exc).strip()
    lines = [ln.rstrip() for ln in text.splitlines()]
    msg = ""
    carets = [i for i, ln in enumerate(lines) if ln.strip() == "^"]
    if carets:
        msg = " ".join(ln.strip() for ln in lines[carets[-1] + 1:] if ln.strip())
    elif "`ptxas` stderr:" in text:
        after = text.split("`ptxas` stderr:", 1)[1].split("Repro command:", 1)[0]
        msg = " ".join(ln.strip() for ln in after.splitlines() if ln.strip())
    if not msg and exc.__cause__ is not None and exc.__cause__ is not exc:
        return f"{type(exc).__name__}: {one_line(exc.__cause__)}"
    if not msg:
        kept = [ln.strip() for ln in lines if ln.strip()]
        msg = next((ln for ln in kept if "error" in ln.lower() and len(ln) < 300), kept[-1] if kept else "")
    msg = " ".join(msg.split())[:300]
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def kind(exc: BaseException) -> str:
    """Whether a failure is the compiler's verdict on the input or the machine's doing."""
    from .loader import LoadError  # loaded with what compiles, not by every reader of the protocol

    if isinstance(exc, (OSError, MemoryError, ImportError, subprocess.SubprocessError, LoadError,
                        RecursionError)) or timed_out(exc) is not None or toolchain_fault(exc):
        return ENVIRONMENT
    return COMPILE


def timed_out(exc: BaseException) -> BaseException | None:
    """The CompileTimeout behind an exception (Triton's front end wraps what a kernel's code raises)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, CompileTimeout):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


class CompileTimeout(Exception):
    """A compile ran past its time limit (a row, never cached: a faster or idler machine may finish it)."""


def _triton_root() -> str | None:
    """Where this worker's Triton package is, found without importing it (its import may be what fails)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    return os.path.realpath(where[0]) + os.sep if where else None


_LLVM_VERSIONS: dict[str, str] = {}


def llvm_version() -> str:
    """The LLVM build of this worker's Triton, as its library names it (``24.0.0git (b010a18d...)``, the
    string ``llvm.add_version_info`` writes); "" where it cannot be read."""
    import glob
    import mmap
    import re

    root = _triton_root()
    if root is None:
        return ""
    if root not in _LLVM_VERSIONS:
        found = ""
        for path in sorted(glob.glob(os.path.join(root, "_C", "libtriton*"))):
            try:
                with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    m = re.search(rb"LLVM version (\S+ \([0-9a-f]{7,40}\))", data)
                    found = m[1].decode("ascii", "replace") if m else ""
            except (OSError, ValueError):
                continue
            if found:
                break
        _LLVM_VERSIONS[root] = found
    return _LLVM_VERSIONS[root]


def toolchain_fault(exc: BaseException) -> bool:
    """Whether a failure comes from the toolchain's own files rather than from the kernel: Triton's package
    failing to import (a SyntaxError in its ``__init__.py``, a library that does not load), a syntax error in
    one of its files, or a file of it named in the error that is not there (its libdevice, removed mid-run)."""
    root = _triton_root()
    if root is None:
        return isinstance(exc, ImportError) and getattr(exc, "name", None) == "triton"

    def real(path: str | None) -> str:
        return os.path.realpath(path) if path else ""

    if isinstance(exc, SyntaxError) and real(exc.filename).startswith(root):
        return True
    tb = exc.__traceback__
    while tb is not None:  # an import of Triton's own modules that failed part way
        code = tb.tb_frame.f_code
        if code.co_name == "<module>" and real(code.co_filename).startswith(root):
            return True
        tb = tb.tb_next
    import re

    for path in re.findall(r"(/[^\s'\"`:;,()\[\]]+)", str(exc)):
        path = path.rstrip(".")  # the end of a sentence
        if real(path).startswith(root) and not os.path.exists(path):
            return True
    return False


