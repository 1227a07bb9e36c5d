"""A path as vgprscope shows it: relative to a root (the working directory, the repository root in CI) where
it lies inside it, in POSIX form; messages, tables, annotations and SARIF locations all take it from here."""

from __future__ import annotations

import os
from pathlib import Path


def relative_path(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> str | None:
    """``path`` relative to ``root`` (default the working directory), both resolved, in POSIX form; None where
    it lies outside."""
    try:
        return Path(path).resolve().relative_to(Path(root or Path.cwd()).resolve()).as_posix()
    except ValueError:
        return None


def shown_path(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> str:
    """``path`` as messages and tables show it: relative to ``root`` (default the working directory) where it
    lies inside it, else as given."""
    relative = relative_path(path, root)
    return relative if relative is not None else str(path)
