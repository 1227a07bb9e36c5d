"""Where compile workers write their files (a snapshot's modules, the AMD linker's stand-in), and who removes them.

A worker never removes its own: a pool's worker ends through ``os._exit`` (multiprocessing runs no atexit
handler there), a killed one (Ctrl-C, a compile past its time limit) runs nothing at all. The process that owns
the workers makes one directory for them all (``make``), named with its process id, hands it to each worker
(``ENV``: each writes in a subdirectory of its own) and removes it when its pool ends (``remove``). A process
that dies before it can (SIGTERM, SIGKILL) leaves its directory to the next one that makes its own: ``make``
first removes every directory whose owner is gone (``sweep``). A process that compiles in place (no worker)
owns its directory the same way, removed at its exit.

Standard library only: a toolchain's worker imports it under another Python.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator

# the directories' names: vgprscope-worker-<owner's process id>-<random>
PREFIX = "vgprscope-worker-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)-")

# the owner's directory, as its workers find it in their environment
ENV = "VGPRSCOPE_WORKER_SCRATCH"

TRITON_CACHE = "TRITON_CACHE_DIR"  # Triton's cache directory, as Triton reads it from the environment

_OWN: list[str] = []  # this process's directory where it compiles in place, made on first use


def make() -> str:
    """A new directory for the workers of this process, after removing those left by owners that are gone."""
    sweep()
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def remove(path: str | None) -> None:
    if path:
        shutil.rmtree(path, ignore_errors=True)


def sweep(root: str | None = None) -> list[str]:
    """Remove the worker directories under ``root`` (the temporary directory) whose owning process is gone;
    the paths removed. A directory of another user's process is left alone (its owner may still run)."""
    root = root or tempfile.gettempdir()
    gone = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            m = _OWNED.match(entry.name)
            if m and entry.is_dir(follow_symlinks=False) and not alive(int(m[1])):
                shutil.rmtree(entry.path, ignore_errors=True)
                gone.append(entry.path)
    return gone


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (one of another user's counts as running: it cannot be asked)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def worker_dir() -> str:
    """This process's directory for the files it writes: its own subdirectory of its owner's (``ENV``), or,
    where it compiles in place, a directory of its own, removed at its exit."""
    owner = os.environ.get(ENV)
    if owner and os.path.isdir(owner):
        path = os.path.join(owner, str(os.getpid()))
        os.makedirs(path, exist_ok=True)
        return path
    if not _OWN:
        import atexit

        _OWN.append(make())
        atexit.register(remove, _OWN[0])
    return _OWN[0]


@contextlib.contextmanager
def temporary_files() -> Iterator[str]:
    """A directory of its own for the files one compile writes on the side, removed after it, however the compile
    ended: Python's temporary directory (Triton's ptxas step leaves its ``.ptx`` there where ptxas fails, a maxnreg
    cap it refuses: a frontier's lowest levels) and Triton's cache directory (under ``TRITON_ALWAYS_COMPILE``,
    which every compile runs with, Triton reads nothing back from it but writes each kernel's IR and binary there:
    a shared directory grew by every compile ever made, 1.6 GB here). Both are restored after."""
    path = tempfile.mkdtemp(prefix="compile-", dir=worker_dir())
    saved, saved_cache = tempfile.tempdir, os.environ.get(TRITON_CACHE)
    tempfile.tempdir = path
    os.environ[TRITON_CACHE] = os.path.join(path, "triton-cache")
    try:
        yield path
    finally:
        tempfile.tempdir = saved
        if saved_cache is None:
            os.environ.pop(TRITON_CACHE, None)
        else:
            os.environ[TRITON_CACHE] = saved_cache
        remove(path)
