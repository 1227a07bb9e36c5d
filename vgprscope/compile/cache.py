"""The on-disk compile cache: one entry per whole compile, checked on every read, written atomically.

Key: the CompileJob's key (what is compiled, the launch facts, options, target, toolchain and compiler
settings) with the toolchain's Triton version, its identity (a fingerprint of its files, the environment
variables its Triton and LLVM read: ``compile.identity``) and this format. An entry records its own key, arch and
Triton version, and the manifest of source files the compile read (the kernel's file, every file of a
``@triton.jit`` function it reaches, the modules the globals it reads come from) with their content
hashes; a read that finds any of these different, or an entry of the wrong shape, is a miss and the job
compiles again. Only the compiler's own verdicts are stored: a failure the machine caused never is (nor one
from the toolchain's own files, nor a compile stopped by its time limit). A kernel compiled from a capture's
snapshot is stored with the snapshot's hash, which a read checks.

The raw outputs (AMDGCN text, ptxas log, cubin, TTGIR) sit beside the parsed usage, so a parser fix
re-parses without compiling and ``explain`` reads the IR back.

A directory that cannot be written costs the next run its speed, never this run's results: a write that
fails is a warning (``CacheWarning``), once per cache.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from ..core.errors import OutputError
from ..core.fsutil import atomic_write
from ..runtime.hashing import file_hash

# 3: entries keyed by the CompileJob and checked against the files the compile read (was: the kernel file)
# 4: keyed by the toolchain's identity too (its files' fingerprint, the environment its Triton reads)
# 5: the raw outputs keep the compiler's own diagnostic lines and its LLVM version (older entries lack them)
FORMAT = 5


class CacheWarning(UserWarning):
    """The compile cache could not be written; results are still reported."""


def default_dir() -> Path:
    env = os.environ.get("VGPRSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vgprscope"


def entry_key(job_key: str, triton_version: str, toolchain: str = "") -> str:
    """An entry's key: the job's, the Triton version, the toolchain's identity (``compile.identity``)."""
    blob = json.dumps([FORMAT, job_key, triton_version, toolchain])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


_HASHES: dict[tuple[str, int, int], str] = {}


def current_hash(path: str) -> str | None:
    """A file's content hash as the compile worker computes it, memoised by its size and mtime."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    memo = (path, st.st_mtime_ns, st.st_size)
    if memo not in _HASHES:
        try:
            _HASHES[memo] = file_hash(path)
        except OSError:
            return None
    return _HASHES[memo]


def deps_current(deps: Any) -> bool:
    """Whether every file of a manifest still has the content the compile read."""
    if not isinstance(deps, dict):
        return False
    return all(isinstance(p, str) and isinstance(h, str) and current_hash(p) == h for p, h in deps.items())


class CompileCache:
    def __init__(self, directory: Path | None = None, enabled: bool = True):
        self.directory = Path(directory) if directory else default_dir()
        self.enabled = enabled
        self._warned = False

    def _path(self, key: str, suffix: str, kind: str = "") -> Path:
        return self.directory / kind / key[:2] / f"{key}{suffix}"

    def _read_json(self, path: Path) -> Any:
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError, UnicodeDecodeError):
            return None

    def load(self, key: str, *, arch: str, triton_version: str) -> dict[str, Any] | None:
        """The entry stored under ``key`` if it is whole, is this key's, arch's and Triton's, and every file
        it was compiled from is unchanged; None (compile) otherwise."""
        if not self.enabled:
            return None
        entry = self._read_json(self._path(key, ".json"))
        if not (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("key") == key
                and entry.get("arch") == arch and entry.get("triton_version") == triton_version
                and isinstance(entry.get("result"), dict) and deps_current(entry.get("deps"))):
            return None
        return entry

    def load_raw(self, key: str) -> dict[str, Any] | None:
        try:
            with gzip.open(self._path(key, ".raw.json.gz"), "rt") as f:
                raw = json.load(f)
        except (OSError, ValueError, EOFError, UnicodeDecodeError):
            return None
        return raw if isinstance(raw, dict) and raw.get("key") == key else None

    def store(self, key: str, entry: dict[str, Any], raw: dict[str, Any] | None) -> bool:
        """``entry`` (with its key, arch, Triton version, deps and parsed result) and the raw outputs (None:
        outputs that live elsewhere, a Triton cache's). False, with a warning, when it cannot be written.
        Written when reads are off too (``--no-cache`` compiles afresh): the fresh result replaces the entry."""
        try:
            # raw first: a parsed entry is only ever visible with its raw outputs beside it
            if raw is not None:
                # gzip's fastest level: written once per compile (an NVIDIA entry's cubin and SASS are about
                # 1 MB of JSON), in under half level 6's time for a quarter more bytes, and read back rarely
                atomic_write(self._path(key, ".raw.json.gz"),
                             gzip.compress(json.dumps(raw | {"key": key}).encode(), 1))
            atomic_write(self._path(key, ".json"), json.dumps({"format": FORMAT, "key": key, **entry}).encode())
        except (OutputError, OSError) as exc:
            self._warn(exc)
            return False
        return True

    def discard(self, key: str) -> None:
        """Forget an entry found unusable (its raw outputs unreadable): the next read is a miss."""
        for suffix in (".json", ".raw.json.gz"):
            try:
                self._path(key, suffix).unlink(missing_ok=True)
            except OSError:
                pass

    # plans: a kernel-directory variant at one config -> its jobs (checked against the directory's files)

    def load_plan(self, key: str) -> dict[str, Any] | None:
        if not self.enabled:
            return None
        entry = self._read_json(self._path(key, ".json", "plans"))
        if not (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("key") == key
                and isinstance(entry.get("plan"), dict)):
            return None
        plan: dict[str, Any] = entry["plan"]
        return plan

    def store_plan(self, key: str, plan: dict[str, Any]) -> None:
        if not self.enabled:
            return
        try:
            atomic_write(self._path(key, ".json", "plans"),
                         json.dumps({"format": FORMAT, "key": key, "plan": plan}).encode())
        except (OutputError, OSError) as exc:
            self._warn(exc)

    def _warn(self, exc: BaseException) -> None:
        if self._warned:
            return
        self._warned = True
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        warnings.warn(CacheWarning(
            f"cannot write the compile cache in {self.directory} ({why}); results are not cached, so the next "
            "run compiles again: set VGPRSCOPE_CACHE_DIR to a writable directory"), stacklevel=3)
