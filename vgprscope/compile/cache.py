"""The on-disk compile cache: one entry per full specialisation, written atomically.

Key: variant, its source hash (the file and the shared helpers beside it), arch, KernelConfig.key(),
the Triton version and the cache format. An entry holds the compiler's raw outputs (AMDGCN text, ptxas
log, cuobjdump text, Triton's `shared`) so that a parser fix never needs a recompile, and the parsed
usage keyed by the parser version so a warm run parses nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write

# 2: raw outputs carry the TTGIR (and NVIDIA's cubin) for `explain`; older entries recompile once
FORMAT = 2


def default_dir() -> Path:
    env = os.environ.get("VGPRSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vgprscope"


def entry_key(variant: str, source_hash: str, arch: str, config_key: str, triton_version: str) -> str:
    blob = json.dumps([FORMAT, variant, source_hash, arch, config_key, triton_version])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class CompileCache:
    def __init__(self, directory: Path | None = None, enabled: bool = True):
        self.directory = Path(directory) if directory else default_dir()
        self.enabled = enabled

    def _path(self, key: str, suffix: str) -> Path:
        return self.directory / key[:2] / f"{key}{suffix}"

    def load_parsed(self, key: str) -> dict[str, Any] | None:
        """The parsed entry, or None (missing, unreadable or from another format: all mean "compile")."""
        if not self.enabled:
            return None
        try:
            with open(self._path(key, ".json")) as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        return entry if entry.get("format") == FORMAT else None

    def load_raw(self, key: str) -> list[dict[str, Any]] | None:
        try:
            with gzip.open(self._path(key, ".raw.json.gz"), "rt") as f:
                return json.load(f)
        except (OSError, ValueError, EOFError):
            return None

    def store(self, key: str, raw: list[dict[str, Any]] | None, parsed: dict[str, Any]) -> None:
        """``raw`` None: outputs that live elsewhere (a Triton cache's artifacts); only the parse is kept."""
        if not self.enabled:
            return
        # raw first: a parsed entry is only ever visible with its raw outputs beside it
        if raw is not None:
            atomic_write(self._path(key, ".raw.json.gz"), gzip.compress(json.dumps(raw).encode(), 6))
        atomic_write(self._path(key, ".json"), json.dumps({"format": FORMAT, **parsed}).encode())

