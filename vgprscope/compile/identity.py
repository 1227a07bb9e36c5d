"""What a compile depends on besides its job: the toolchain's own files and the environment its Triton reads.

Both are part of every cache key (``Engine``), beside the job's key and the Triton version:

- the toolchain's fingerprint: every file of its Triton package (libtriton, the backends with their libdevice,
  ptxas and linker, the Python front end; not its C headers) by its path within the package, its size and
  its content as the wheel's RECORD gives it (the sha256 pip or uv wrote at install), read with ``stat``
  only (a few milliseconds). A file changed after the install (its mtime newer than the RECORD), or one
  no RECORD names (a source build), counts by its mtime. An environment rebuilt at the same version
  string, a file edited, replaced or removed, gives another fingerprint, so its old entries are never served
  for it; the same wheel installed again (a reinstall, another environment) gives the same one. The same fingerprint, read again
  after a failed compile, tells a toolchain broken under a run (``toolchains remove`` mid-run) from the
  compiler's verdict on a kernel.
- the environment: every variable set in this process that the installed Triton or the toolchain's Triton
  and LLVM read. Their names: each release's ``triton/knobs.py`` (read as text, nothing imported), and the
  families its C++ side reads through ``getenv`` (Triton's ``CACHE_INVALIDATING_ENV_VARS``: ``TRITON_``,
  ``MLIR_``, ``LLVM_``, ``AMDGCN_``, ``NVPTX_``, ``DISABLE_``...). Compile workers inherit this process's
  environment, so a variable exported in the shell reaches the compile exactly as one given with ``--set``;
  both are keyed. Left out: what the compile worker sets itself and what only says where Triton keeps its own
  cache and dumps.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..runtime import protocol

# Families of variables Triton's C++ side and LLVM read (GetEnv.hpp's list grows by release): any variable
# of these set in the environment is keyed, whatever the release.
FAMILIES = ("TRITON_", "MLIR_", "LLVM_", "AMDGCN_", "NVPTX_", "DISABLE_", "PTXAS_")
OUTSIDE_FAMILIES = ("ALLOW_LHS_TMEM_LAYOUT_CONVERSION", "USE_IR_LOC")
# Variables that change where Triton writes its own files, never what a compile gives; the AMD linker (the
# linked binary is never read: the compile worker may set a stand-in itself); and the worker's own settings.
UNKEYED = frozenset({"TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_CACHE_MANAGER",
                     "TRITON_REMOTE_CACHE_BACKEND", "TRITON_REDIS_HOST", "TRITON_REDIS_PORT",
                     "TRITON_REDIS_KEY_FORMAT", "TRITON_PRINT_AUTOTUNING", "TRITON_CACHE_AUTOTUNING",
                     "TRITON_HIP_LLD_PATH", *protocol.FORCED_ENV})

_KNOB = re.compile(r"""\b(?:env_\w+|getenv(?:_bool)?|os\.environ\.get|os\.getenv)\(\s*["']([A-Z][A-Z0-9_]*)["']""")
_TOOL = re.compile(r"""\benv_nvidia_tool\(\s*["']([\w-]+)["']""")


def triton_dir(python: str = "") -> Path | None:
    """The Triton package a toolchain compiles with: the installed one (``python`` ""), else the one in the
    environment of that interpreter (its site-packages, or where its probe found it: an editable install)."""
    if not python:
        import importlib.util

        try:
            spec = importlib.util.find_spec("triton")
        except (ImportError, ValueError):
            return None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        return Path(locations[0]) if locations else None
    found = sorted(Path(python).parent.parent.glob("lib/python*/site-packages/triton"))
    if found:
        return found[0]
    from .toolchains import TRITON_DIRS  # where its probe found it (an editable install, a source tree)

    return Path(TRITON_DIRS[python]) if python in TRITON_DIRS else None


# Directories no compile reads: Python's byte code, and the C headers that build Triton's launcher on a GPU.
_NOT_READ = ("__pycache__", "include")


def fingerprint(directory: Path | None) -> str:
    """Every file of a Triton package by its path within the package, its size, and its content as its
    wheel's RECORD says where the file is as installed, else its mtime (``stat`` only), hashed: "" for no
    package, "missing" for a package directory that is gone."""
    if directory is None:
        return ""
    record, installed_ns = installed_files(directory)
    base = str(directory.parent)
    h = hashlib.sha256()
    found = False
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_READ)
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            try:
                st = os.stat(path)
            except OSError:  # a dangling link, a file removed meanwhile: part of the state
                h.update(f"{rel}:gone\n".encode())
                continue
            found = True
            wheel = record.get(rel)
            if wheel is not None and wheel[1] == st.st_size and st.st_mtime_ns <= installed_ns:
                h.update(f"{rel}:{st.st_size}:{wheel[0]}\n".encode())  # as the wheel installed it
            else:
                h.update(f"{rel}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:32] if found else "missing"


def installed_files(directory: Path) -> tuple[dict[str, tuple[str, int]], int]:
    """The wheel's RECORD beside a Triton package (``triton-*.dist-info``): each file's path within
    site-packages -> (its sha256, its size), and when the RECORD was written (ns; a file not modified since
    is as installed). ({}, 0) where there is none (a source build)."""
    records = sorted(directory.parent.glob("triton-*.dist-info/RECORD"))
    if not records:
        return {}, 0
    try:
        st = records[-1].stat()
    except OSError:
        return {}, 0
    return _record(str(records[-1]), st.st_mtime_ns, st.st_size), st.st_mtime_ns


@functools.lru_cache(maxsize=8)
def _record(path: str, mtime_ns: int, size: int) -> dict[str, tuple[str, int]]:
    import csv

    out: dict[str, tuple[str, int]] = {}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.reader(f):
                if len(row) >= 3 and row[1].startswith("sha256=") and row[2].isdigit():
                    out[row[0]] = (row[1][7:], int(row[2]))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}
    return out


def knob_names(directory: Path | None) -> frozenset[str]:
    """The environment variables a release's ``triton/knobs.py`` reads (none where it has no knobs file)."""
    if directory is None:
        return frozenset()
    path = directory / "knobs.py"
    try:
        st = path.stat()
    except OSError:
        return frozenset()
    return _knobs_in(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _knobs_in(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    names = set(_KNOB.findall(text))
    names |= {f"TRITON_{tool.upper().replace('-', '_')}_PATH" for tool in _TOOL.findall(text)}
    return frozenset(names)


def keyed_environment(directories: tuple[Path | None, ...], environ: Mapping[str, str] | None = None) \
        -> dict[str, str]:
    """The variables of ``environ`` (this process's) that the Tritons in ``directories`` read, with their
    values; a value equal to the worker's own default is left out (it compiles the same as unset)."""
    env = os.environ if environ is None else environ
    names = frozenset().union(*(knob_names(d) for d in directories))
    out = {}
    for k, v in env.items():
        if k in UNKEYED or protocol.ENV_DEFAULTS.get(k) == v:
            continue
        if k in names or k in OUTSIDE_FAMILIES or k.startswith(FAMILIES):
            out[k] = v
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class Identity:
    """A toolchain's state for one run: its Triton package, that package's fingerprint, the environment."""

    directory: Path | None
    fingerprint: str
    environment: dict[str, str] = field(default_factory=dict, hash=False)

    def key(self) -> str:
        """What enters the cache key."""
        return json.dumps([self.fingerprint, self.environment], sort_keys=True, separators=(",", ":"))

    def changed(self) -> bool:
        """Whether the toolchain's files differ now from when this identity was taken (read again)."""
        return self.directory is not None and fingerprint(self.directory) != self.fingerprint


# What tells which GPUs a process sees (a module that probes the device at import imports only where one is).
_DEVICES = ("/dev/nvidiactl", "/dev/kfd")
_DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "TRITON_INTERPRET")
# Files that run at interpreter start and may change what imports (a finder refusing a module).
_STARTUP = ("sitecustomize.py", "usercustomize.py")
_PACKAGED = (".dist-info", ".egg-info", ".egg-link", ".pth")


def import_environment() -> str:
    """What decides whether a module imports in this Python, hashed: the interpreter, its module search path
    with what is installed on each entry (one listing per directory: a distribution added, removed or
    upgraded changes it), the start-up files that run there, and the GPUs a process sees. Part of the key of
    whatever the cache keeps about a kernel that depends on whether its module imports (the derivation of a
    captured call, a kernel directory's plan): two environments sharing one cache never read each other's."""
    import sys

    path = tuple(sys.path)
    return _import_environment(sys.executable, path, tuple(os.environ.get(v) for v in _DEVICE_VARIABLES),
                               tuple(_mtime(os.path.join(entry, name)) for entry in path for name in ("", *_STARTUP)))


def _mtime(entry: str) -> int:
    """A search path entry's state (a distribution installed changes its listing and so its modification time),
    or a start-up file's."""
    try:
        return os.stat(entry or os.curdir).st_mtime_ns
    except OSError:
        return -1


@functools.lru_cache(maxsize=16)
def _import_environment(executable: str, path: tuple[str, ...], variables: tuple[str | None, ...],
                        states: tuple[int, ...]) -> str:
    h = hashlib.sha256(json.dumps([os.path.realpath(executable), list(path), list(variables),
                                   [os.path.exists(d) for d in _DEVICES]]).encode())
    for entry in path:
        try:
            names = os.listdir(entry or os.curdir)
        except OSError:
            continue
        h.update(f"{entry}\0{sorted(n for n in names if n.endswith(_PACKAGED))}\0".encode())
        for name in _STARTUP:
            if name in names:
                try:
                    h.update(Path(entry or os.curdir, name).read_bytes())
                except OSError:
                    pass
    return h.hexdigest()[:32]


def identity(python: str = "") -> Identity:
    """The identity of the toolchain whose interpreter is ``python`` ("" for the installed Triton)."""
    directory = triton_dir(python)
    dirs = (directory,) if not python else (directory, triton_dir(""))
    return Identity(directory, fingerprint(directory), keyed_environment(dirs))
