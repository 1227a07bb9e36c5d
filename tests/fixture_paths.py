"""The absolute paths the committed fixtures name, and a guard that no test opens one.

A committed capture, analysis, compiler output or report names the files of the machine that made it (its
checkout, its site-packages, a temporary directory): ``/work/main/kernels/_fa_common.py`` in a ``.loc`` line,
a capture's kernel file. A test that reads one of those passes on that machine, and only there: on a fresh
clone elsewhere the file is gone. Those that exist where the suite runs, outside its own checkout and its own
Python, are watched: tests/conftest.py puts an audit hook on ``open`` for the session, and a test in whose run
one is opened fails, naming the path (tests/project/test_fixtures_portable.py checks the guard itself).
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the committed inputs the tests read: fixtures, and the reports whose tables and captures tests compare against
FIXTURE_DIRS = ("tests/fixtures", "reports")
# binary files (pictures, archives: a Triton cache's tarball is unpacked into a temporary directory and read there)
_SKIP = (".png", ".svg", ".xz", ".tar", ".whl", ".zip", ".cubin")
_PATH_RE = re.compile(rb"(?<![\w.~-])/(?:[\w.+-]+/)+[\w.+-]+\.[A-Za-z]\w*")


def committed_fixtures(root: Path = ROOT) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", *FIXTURE_DIRS], cwd=root, capture_output=True)
    names = listed.stdout.decode().split("\0") if listed.returncode == 0 else []
    if not any(names):  # not a git checkout (an sdist): every file below the folders
        return sorted(p for d in FIXTURE_DIRS for p in (root / d).rglob("*") if p.is_file())
    return [root / n for n in names if n]


def named_paths(files: list[Path]) -> set[str]:
    """Every absolute file path written in the files (gzip-compressed ones read uncompressed)."""
    found: set[str] = set()
    for f in files:
        if f.name.endswith(_SKIP) or not f.is_file():
            continue
        data = f.read_bytes()
        if f.suffix == ".gz":
            try:
                data = gzip.decompress(data)
            except OSError:
                continue
        found.update(m.decode(errors="replace") for m in _PATH_RE.findall(data))
    return found


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == d or path.startswith(d + os.sep) for d in folders)


def watched_paths(root: Path = ROOT) -> frozenset[str]:
    """The named paths that exist here, outside this checkout and this Python's installation: reading one is
    reading the machine that made the fixture."""
    own = tuple(os.path.realpath(p) for p in {str(root), sys.prefix, sys.base_prefix})
    return frozenset(p for p in named_paths(committed_fixtures(root))
                     if not _inside(os.path.realpath(p), own) and os.path.isfile(p))


class OpenGuard:
    """An audit hook (``sys.addaudithook``: it cannot be removed, so it is added once and switched by its
    ``watched`` set) recording each ``open`` of a watched path."""

    def __init__(self, watched: frozenset[str] = frozenset()):
        self.watched = watched
        self.started = False  # whether ``watched`` was read from the fixtures (at this process's first test)
        self.opened: list[str] = []

    def __call__(self, event: str, args: tuple) -> None:
        if event == "open" and self.watched and isinstance(args[0], (str, os.PathLike)):
            path = os.fspath(args[0])
            if path in self.watched:
                self.opened.append(path)

    def take(self) -> list[str]:
        opened, self.opened = self.opened, []
        return opened


GUARD = OpenGuard()  # the test process's one guard (tests/conftest.py hooks it and sets what it watches)


def unpack(tar: tarfile.TarFile, where: Path) -> None:
    """``tar.extractall(where)`` with the ``data`` filter where this Python has it (3.10.12+, 3.11.4+, 3.12):
    the earlier 3.10 and 3.11 releases the project supports (Debian 12's 3.11.2) lack the keyword, and the
    archives are the repository's own fixtures."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(where, filter="data")
    else:
        tar.extractall(where)
