"""Files are written whole or not at all: interrupted runs leave no half-written output or cache entry.

A path that cannot be written is an ``OutputError`` (one line: which path, and why), never an OSError
traceback; ``check_writable`` finds the same reasons before any work is done.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import OutputError


def _blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` when it is not a directory (a file in the way)."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_writable(path: str | os.PathLike) -> None:
    """Raise OutputError when ``path`` could not be written as a file: a file where a directory must be,
    the path itself a directory, or no permission to create it. Creates nothing."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory; give a file name")
    blocker = _blocking_file(path)
    if blocker is not None:
        raise OutputError(f"cannot write {path}: {blocker} is a file, not a directory")
    existing = next((p for p in path.parents if p.exists()), Path("."))
    if not os.access(existing, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"cannot write {path}: no permission to write in {existing}")


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write to a temporary file in the same directory, then rename it over ``path``."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        check_writable(path)  # the precise reason when it is one we know
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            check_writable(path)
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def read_versioned_json(path: str | os.PathLike, *, what: str, schema: str, version: int | tuple[int, ...], missing: str,
                        stale: str, error: type[Exception]) -> dict[str, Any]:
    """A vgprscope JSON document (baseline, capture) checked for its ``schema`` and ``schema_version``; every
    way it can be unusable is one ``error`` line naming the file: missing (``missing`` says how to make
    one), unreadable, not JSON (truncated or corrupt), another kind of file, another version (``stale`` says
    what to do)."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise error(f"no {what} at {path}; {missing}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {what} {path}: {exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise error(f"{what} {path} is not valid JSON (truncated or corrupt): {exc}") from None
    kind = what.removesuffix(" file")
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise error(f"{path} is not a vgprscope {kind} (no \"schema\": \"{schema}\")")
    versions = version if isinstance(version, tuple) else (version,)
    if doc.get("schema_version") not in versions:
        readable = " or ".join(map(str, versions))
        raise error(f"{what} {path} has schema version {doc.get('schema_version')!r}; this vgprscope reads "
                    f"version {readable}: {stale}")
    return doc
