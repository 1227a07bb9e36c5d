"""Files are written whole or not at all: interrupted runs leave no half-written output or cache entry.

A path that cannot be written is an ``OutputError`` (one line: which path, and why), never an OSError
traceback; ``check_writable`` finds the same reasons before any work is done.

Only regular files are written: a FIFO, a device node or a socket at the path is refused (replacing
``/dev/null`` with a file is never what was meant); a symlink is followed and the file it leads to is
replaced, the link kept. A replaced file keeps its mode; a new one gets the umask's (0644 typically), as a
file the shell creates would.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from .errors import OutputError, UsageError

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(path: Path) -> str | None:
    """What the file at ``path`` (a symlink followed) is when it exists and is neither a regular file nor
    a directory, else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((what for test, what in _KINDS if test(mode)), None)


def target_of(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: the path itself, or where its symlinks lead (kept as links). A
    symlink loop leads nowhere: an OutputError (writing would replace the link with a file)."""
    path = Path(path)
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:  # a link to a file not made yet: that file
        return Path(os.path.realpath(path))
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {why_not(exc)}") from None


def why_not(exc: OSError) -> str:
    """An OSError in words, without Python's ``[Errno N]``: a symlink loop said as one."""
    if exc.errno == errno.ELOOP:
        return "it is a symlink loop (its links lead back to themselves)"
    return exc.strerror or str(exc)


def loop_in(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` cannot be reached because a symlink on the way leads back to itself."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def resolve_input(path: str | os.PathLike[str], what: str) -> Path:
    """An input path made absolute, its symlinks followed; one that is a symlink loop is a UsageError naming
    ``what`` and the path (pathlib would raise a RuntimeError)."""
    if loop_in(path):
        raise UsageError(f"cannot read {what} {path}: it is a symlink loop (its links lead back to themselves)")
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError) as exc:  # a loop made meanwhile, or a parent that cannot be read
        raise UsageError(f"cannot read {what} {path}: {exc}") from None


@functools.cache
def _umask() -> int:
    """The process's umask, read without changing it (/proc), else by setting and restoring it."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` when it is not a directory (a file in the way)."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise OutputError when ``path`` could not be written as a file: a file where a directory must be, a
    directory that does not exist, the path itself a directory or another kind of file than a regular one
    (a FIFO, a device), or no permission to create it. Creates nothing."""
    given = Path(path)
    if given.is_dir():
        raise OutputError(f"cannot write {given}: it is a directory; give a file name")
    kind = _not_regular(given)
    if kind is not None:
        raise OutputError(f"cannot write {given}: it is {kind}, not a regular file; give a file name")
    path = target_of(given)
    blocker = _blocking_file(path)
    if blocker is not None:
        raise OutputError(f"cannot write {path}: {blocker} is a file, not a directory")
    existing = next((p for p in path.parents if p.exists()), Path("."))
    # what stops the write first: a read-only file system, then permission, then a directory to make
    if not os.access(existing, os.W_OK | os.X_OK):
        if _read_only(existing):
            raise OutputError(f"cannot write {path}: {existing} is on a read-only file system")
        raise OutputError(f"cannot write {path}: no permission to write in {existing}")
    if not path.parent.is_dir():  # a typo'd directory is not made: the file would land where nobody looks
        raise OutputError(f"cannot write {path}: the directory {path.parent} does not exist; create it first")
    if path.exists() and (not os.access(path, os.W_OK) or _file_flags(path) & (_IMMUTABLE | _APPEND_ONLY)):
        # the file itself, its directory writable (an append-only file passes access() but cannot be replaced)
        raise OutputError(f"cannot write {path}: {_unwritable_file(path)}")


def _unwritable_file(path: Path) -> str:
    """Why an existing file cannot be replaced though its directory is writable."""
    if _read_only(path):
        return f"{path} is on a read-only file system"
    flags = _file_flags(path)
    if flags & _IMMUTABLE:
        return "the file is immutable (chattr +i; `chattr -i` lifts it)"
    if flags & _APPEND_ONLY:
        return "the file is append-only (chattr +a; `chattr -a` lifts it)"
    return "the file is read-only (its mode; chmod u+w makes it writable)"


# Linux's inode flags (FS_IOC_GETFLAGS): a file marked so cannot be replaced, even by root
_FS_IOC_GETFLAGS, _IMMUTABLE, _APPEND_ONLY = 0x80086601, 0x10, 0x20


def _file_flags(path: Path) -> int:
    try:
        import fcntl

        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ImportError):
        return 0
    try:
        buf = bytearray(8)
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buf, True)
        return int.from_bytes(buf[:4], "little")
    except OSError:
        return 0
    finally:
        os.close(fd)


def _why_dir(directory: Path, exc: OSError) -> str:
    """Why ``directory`` could not be made: a file in the way, the first existing ancestor's read-only mount,
    or permission."""
    blocker = _blocking_file(directory / "x")
    if blocker is not None:
        return f"{blocker} is a file, not a directory"
    existing = next((p for p in directory.parents if p.exists()), None)
    if existing is not None and (exc.errno == errno.EROFS or _read_only(existing)):
        return f"{existing} is on a read-only file system"
    if existing is not None and exc.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to create it in {existing}"
    return why_not(exc)


def _read_only(path: Path) -> bool:
    """Whether ``path`` is on a file system mounted read-only (EROFS is no matter of permission)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write to a temporary file in the same directory, then rename it over ``path`` (over the file a
    symlink leads to, keeping the link). Refuses what is not a regular file; keeps an existing file's mode."""
    given = Path(path)
    kind = _not_regular(given)
    if kind is not None:
        raise OutputError(f"cannot write {given}: it is {kind}, not a regular file")
    path = target_of(given)
    payload = data.encode() if isinstance(data, str) else data
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # why the directory cannot be made (a read-only mount, no permission), not "create it"
        raise OutputError(f"cannot write {given}: cannot create the directory {path.parent}: "
                          f"{_why_dir(path.parent, exc)}") from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        check_writable(given)  # the precise reason when it is one we know
        raise OutputError(f"cannot write {given}: {why_not(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            # mkstemp makes the file 0600: give it the replaced file's mode, or a new file's (0666 less umask)
            os.fchmod(f.fileno(), stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask())
            if existing is not None and (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                try:  # someone else's file (written as root, or a shared group): keep its owner where allowed
                    os.fchown(f.fileno(), existing.st_uid, existing.st_gid)
                except OSError:
                    pass
            f.write(payload)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            check_writable(given)
            raise OutputError(f"cannot write {given}: {exc.strerror or exc}") from None
        raise


def read_input(path: Path, *, what: str, missing: str, error: type[Exception]) -> bytes:
    """The bytes of a file vgprscope reads (a baseline, a capture); missing or unreadable, one ``error`` line
    naming it: ``no {what} at {path}; {missing}`` (how to make one), ``cannot read {what} {path}: why``."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise error(f"no {what} at {path}; {missing}") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {why_not(exc)}") from None


def read_versioned_json(path: str | os.PathLike[str], *, what: str, schema: str, version: int | tuple[int, ...], missing: str,
                        stale: str, error: type[Exception]) -> dict[str, Any]:
    """A vgprscope JSON document (baseline, capture) checked for its ``schema`` and ``schema_version``; every
    way it can be unusable is one ``error`` line naming the file: missing (``missing`` says how to make
    one), unreadable, not JSON (truncated or corrupt), another kind of file, another version (``stale`` says
    what to do)."""
    path = Path(path)
    data = read_input(path, what=what, missing=missing, error=error)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what} {path}: {exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise error(f"{what} {path} is not valid JSON (truncated or corrupt): {exc}") from None
    except RecursionError:
        raise error(f"{what} {path} is corrupt: nested too deeply to read (not what vgprscope writes)") from None
    kind = what.removesuffix(" file")
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise error(f"{path} is not a vgprscope {kind} (no \"schema\": \"{schema}\")")
    versions = version if isinstance(version, tuple) else (version,)
    if doc.get("schema_version") not in versions:
        readable = " or ".join(map(str, versions))
        raise error(f"{what} {path} has schema version {doc.get('schema_version')!r}; this vgprscope reads "
                    f"version {readable}: {stale}")
    return doc
