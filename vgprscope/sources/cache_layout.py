"""Where the kernel caches below a directory are, whatever layout torch or Triton left them in.

A Triton cache is a directory of entries, one per compile: a directory of files named after the kernel
(``__grp__NAME.json``, ``NAME.json``, ``NAME.cubin`` / ``NAME.hsaco`` / ``NAME.amdgcn``, ``NAME.ttir``...), or of one
of Triton's compiled C modules (``cuda_utils.so``). It stands wherever ``TRITON_CACHE_DIR`` pointed:
``~/.triton/cache``; ``triton/<device>/`` inside Inductor's directory (``torch._inductor.runtime.cache_dir_utils``);
``<tmp>/triton/`` inside each temporary Inductor cache that ``force_disable_caches`` makes
(``torch._inductor.utils.fresh_cache``: ``TORCHINDUCTOR_CACHE_DIR/tmpXXXXXXXX/``); or beside them.

An Inductor cache holds its generated modules in two-character directories (``XX/cXXXX.py``).

``find_caches`` walks the tree below the directory given (never through a symbolic link, at most
``MAX_DEPTH`` levels and ``MAX_DIRS`` directories) and says what it found where, reading only names and, to
tell a generated module, the head of each ``.py`` file. A directory holding kernel files in no layout it knows
is named with what it holds (never read as an entry).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .inductor import is_inductor_cache

MAX_DEPTH = 8  # levels below the directory given (TORCHINDUCTOR_CACHE_DIR/tmpX/triton/0/HASH is 4)
MAX_DIRS = 50_000  # directories looked at before the walk stops (a home directory given by mistake)

# What a Triton cache entry holds: the kernel's artifacts and intermediates (any backend's), or Triton's
# compiled C modules; FileCacheManager.put writes through a temporary directory inside the entry.
ENTRY_SUFFIXES = (".cubin", ".hsaco", ".amdgcn", ".ttir", ".ttgir", ".llir", ".ptx", ".source", ".spv")
_MODULE_SUFFIXES = (".so", ".pyd", ".dylib")
ENTRY_TMP_PREFIX = "tmp.pid_"


@dataclass(frozen=True)
class FoundCache:
    """A cache found below the directory scanned: ``kind`` "triton" (``entries``: its entry directories)
    or "inductor" (a directory of generated modules)."""

    path: Path
    kind: str
    entries: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Layout:
    """Every cache below ``root``, in the order of the walk (a directory before what is below it), and the
    directories that hold kernel files in no layout scan knows, or were not looked into, each with why."""

    root: Path
    caches: tuple[FoundCache, ...]
    unknown: tuple[tuple[Path, str], ...] = ()

    @property
    def triton(self) -> list[FoundCache]:
        return [c for c in self.caches if c.kind == "triton"]

    @property
    def inductor(self) -> list[FoundCache]:
        return [c for c in self.caches if c.kind == "inductor"]


def _listing(path: Path) -> tuple[list[str], list[str]] | None:
    """(file names, directory names) of ``path``, links to directories not followed; None: unreadable."""
    files, dirs = [], []
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    (dirs if e.is_dir(follow_symlinks=False) else files).append(e.name)
                except OSError:
                    continue
    except OSError:
        return None
    return sorted(files), sorted(dirs)


def _kernel_files(files: list[str]) -> list[str]:
    return [f for f in files if f.endswith(ENTRY_SUFFIXES) or (f.startswith("__grp__") and f.endswith(".json"))
            or f.endswith(".autotune.json")]


def is_entry(name: str, files: list[str], dirs: list[str]) -> bool:
    """Whether a directory's listing is a Triton cache entry's: files only (and FileCacheManager's temporary
    directories), among them a kernel's artifact or group file, its autotuner's timings, or a compiled module.
    Its name is a hash (Triton's keys are 52 or 64 characters): a two-character directory is Inductor's."""
    if len(name) <= 2 or any(not d.startswith(ENTRY_TMP_PREFIX) for d in dirs):
        return False
    if _kernel_files(files):
        return True
    names = [f for f in files if not f.startswith(ENTRY_TMP_PREFIX)]
    return bool(names) and any(f.endswith(_MODULE_SUFFIXES) for f in names) and \
        all(f.endswith((*_MODULE_SUFFIXES, ".c", ".cc", ".cpp", ".h")) for f in names)


def _module_dir(path: Path, files: list[str], dirs: list[str]) -> bool:
    """An Inductor cache's two-character directory of generated modules (``XX/cXXXX.py``)."""
    return len(path.name) == 2 and not dirs and any(f.endswith(".py") for f in files)


def find_caches(root: Path) -> Layout:
    """Every Triton and Inductor cache below ``root`` (``root`` itself included; a single entry given alone is a
    cache of that one entry)."""
    caches: list[FoundCache] = []
    unknown: list[tuple[Path, str]] = []
    seen = 0
    top = _listing(root)
    if top is not None and is_entry(root.name, *top):
        return Layout(root, (FoundCache(root.parent, "triton", (root,)),))

    def visit(path: Path, depth: int) -> None:
        nonlocal seen
        seen += 1
        listing = _listing(path)
        if listing is None:
            unknown.append((path, "cannot be read"))
            return
        files, dirs = listing
        inductor = any(len(d) == 2 for d in dirs) and is_inductor_cache(path)
        if inductor:
            caches.append(FoundCache(path, "inductor"))
        entries: list[Path] = []
        below: list[Path] = []
        for d in dirs:
            sub = path / d
            sub_listing = _listing(sub)
            if sub_listing is None:
                unknown.append((sub, "cannot be read"))
            elif is_entry(d, *sub_listing):
                entries.append(sub)
            elif not (inductor and _module_dir(sub, *sub_listing)) and (sub_listing[0] or sub_listing[1]):
                below.append(sub)
        if entries:
            caches.append(FoundCache(path, "triton", tuple(entries)))
        stray = _kernel_files(files)
        if stray:  # a directory that is no entry (it holds directories) with a kernel's files beside them
            unknown.append((path, f"{len(stray)} kernel file{'s' if len(stray) > 1 else ''} ({stray[0]}"
                                  f"{', ...' if len(stray) > 1 else ''}) outside a Triton cache entry: not read"))
        for sub in below:
            if depth >= MAX_DEPTH:
                unknown.append((sub, f"more than {MAX_DEPTH} levels below {root}: not looked into"))
            elif seen >= MAX_DIRS:
                unknown.append((sub, f"not looked into: the walk stops after {MAX_DIRS} directories"))
                return
            else:
                visit(sub, depth + 1)

    visit(root, 0)
    return Layout(root, tuple(caches), tuple(unknown))
