"""The committed baseline file: one ``Entry`` per label x kernel x arch x slot, with the config that slot
compiled (and its hash), every resource field the compiler reported and the occupancy.

The slot (``Record.slot``) is what an entry stands for within its source, whatever its config: a bundled
variant's request (``defaults``, ``shape=1x32x1x8192x8``), a captured launch's autotune key and config
index or its argument types and ordinal. Keying by slot rather than by the config's hash is what lets the
gate compare a changed default or a grown autotune config with what it replaced.

Schema 2 is written and read; a schema-1 file (keyed by the config's hash, without slots) is refused with one
line saying to re-save it. A file is read strictly: duplicate keys,
an ``ok`` entry without usage or occupancy, a count that is not a non-negative integer (``true`` is an int
in Python) or is larger than a compiler writes, a usage its arch cannot hold or a status it does not
explain (``_check_fits``), and a key that does not match its entry are each one ``NotComparableError`` line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..core.errors import NotComparableError, OutputError, UsageError
from ..core.fsutil import atomic_write, check_writable, read_input
from ..core.records import (
    USAGE_CLASSES,
    Config,
    Record,
    ResourceUsage,
    config_from_dict,
    usage_from_dict,
    usage_to_dict,
)
from .metrics import entry_metrics

SCHEMA = "vgprscope-baseline"
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class Entry:
    """One baseline row: a compiled kernel's resources, keyed by what it stands for (its slot)."""

    variant: str  # the bundled variant's name, or a captured kernel's label
    kernel: str
    arch: str
    slot: str
    config: Config  # the config the source compiled (records.Config: a captured kernel's LaunchConfig, ...)
    config_key: str
    status: str
    usage: ResourceUsage | None
    occupancy: Mapping[str, Any] | None = field(default=None, compare=False)
    source_hash: str = field(default="", compare=False)
    note: str = field(default="", compare=False)  # how this run compiled it, when not from the files (a snapshot)
    # the codes of what the compiler said (gate.diagnostics); None: a baseline written before they were recorded
    diagnostics: tuple[str, ...] | None = field(default=None, compare=False)
    llvm_version: str = field(default="", compare=False)  # the LLVM build of the Triton that compiled it

    @property
    def key(self) -> str:
        return f"{self.variant}/{self.kernel}/{self.arch}/{self.slot}"

    @property
    def metrics(self) -> dict[str, int]:
        return entry_metrics(self.usage, self.occupancy)

    @property
    def occupancy_unit(self) -> str:
        return self.occupancy["unit"] if self.occupancy else ""

    @classmethod
    def from_record(cls, rec: Record) -> Entry:
        # a source that names no slot: the config is all that tells its rows apart
        slot = rec.slot or f"config {rec.config.key()}"
        return cls(variant=rec.variant, kernel=rec.kernel, arch=rec.arch, slot=slot, config=rec.config,
                   config_key=rec.config.key(), status=rec.status, usage=rec.usage,
                   occupancy=rec.occupancy.as_dict() if rec.occupancy else None, source_hash=rec.source_hash,
                   note=str(dict(rec.extras).get("note") or ""),
                   diagnostics=tuple(sorted({d.code for d in rec.diagnostics})), llvm_version=rec.llvm_version)

    def as_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "kernel": self.kernel, "arch": self.arch, "slot": self.slot,
                "config_key": self.config_key, "config": self.config.as_dict(), "status": self.status,
                "source_hash": self.source_hash, "usage": usage_to_dict(self.usage),
                "occupancy": dict(self.occupancy) if self.occupancy else None} | \
            ({"diagnostics": list(self.diagnostics)} if self.diagnostics is not None else {}) | \
            ({"llvm_version": self.llvm_version} if self.llvm_version else {})

    @classmethod
    def from_json(cls, d: Any) -> Entry:
        """One entry of a baseline file; ValueError / KeyError / TypeError, each naming what is wrong, on
        anything malformed."""
        if not isinstance(d, dict):
            raise TypeError("is not an object")
        for name in ("variant", "kernel", "arch", "slot", "config_key", "status"):
            if not isinstance(d[name], str) or not d[name]:
                raise TypeError(f"has {name} {d[name]!r}, not a non-empty string")
        if not isinstance(d["config"], dict):
            raise TypeError("has a config that is not an object")
        config = config_from_dict(d["config"])
        if config.key() != d["config_key"]:
            raise ValueError(f"has config_key {d['config_key']} but its config hashes to {config.key()}")
        usage = _usage(d["usage"])
        occupancy = _occupancy(d["occupancy"])
        if d["status"] == "ok" and (usage is None or occupancy is None):
            raise ValueError("is \"ok\" but has no " + ("usage" if usage is None else "occupancy"))
        if usage is not None:
            _check_fits(d["arch"], d["status"], usage, config)
        source_hash = d.get("source_hash", "")
        if not isinstance(source_hash, str):
            raise TypeError(f"has source_hash {source_hash!r}, not a string")
        diagnostics = d.get("diagnostics")  # absent: written before the compiler's words were recorded
        if diagnostics is not None and not (isinstance(diagnostics, list)
                                            and all(isinstance(c, str) and c for c in diagnostics)):
            raise TypeError(f"has diagnostics {json.dumps(diagnostics)}, not a list of compiler codes")
        llvm = d.get("llvm_version", "")
        if not isinstance(llvm, str):
            raise TypeError(f"has llvm_version {json.dumps(llvm)}, not a string")
        return cls(variant=d["variant"], kernel=d["kernel"], arch=d["arch"], slot=d["slot"],
                   config=config, config_key=d["config_key"], status=d["status"], usage=usage,
                   occupancy=occupancy, source_hash=source_hash,
                   diagnostics=tuple(diagnostics) if diagnostics is not None else None, llvm_version=llvm)


_USAGE = USAGE_CLASSES

# The compilers' resource fields are 32-bit (AMDGPU code-object metadata, ptxas and cuobjdump counts): a
# larger count was not written by a compile.
MAX_COUNT = 2**32 - 1


def _count(value: Any, what: str) -> int:
    # bool is a subclass of int: `true` would otherwise be gated as 1 and printed as "True -> 264"
    if type(value) is not int or value < 0:
        raise TypeError(f"has {what} {json.dumps(value)}, not a non-negative integer")
    if value > MAX_COUNT:
        raise ValueError(f"has {what} {value}, more than any compiler reports (its counts are 32-bit)")
    return value


def _check_fits(arch_name: str, status: str, usage: ResourceUsage, config: Config) -> None:
    """A usage must be one its arch's compiler can produce, and the status must be what it says: an ``ok``
    entry launches (every count within the arch's maximum: ``Metric.arch_max``, no launch limit broken);
    an entry with a usage that is not ``ok`` failed to launch, so its status is the launch limit the usage
    breaks (a compile error has no usage)."""
    from ..backends import backend_of, backend_of_usage
    from ..core.archs import get_arch
    from ..core.errors import VgprscopeError

    try:
        arch = get_arch(arch_name)
    except VgprscopeError:
        raise ValueError(f"has arch {arch_name!r}, not one vgprscope knows (vgprscope archs lists them)") from None
    backend = backend_of(arch)
    if backend is not backend_of_usage(usage):
        raise ValueError(f"has {usage.vendor} usage on {arch.name}, a {backend.vendor.name} arch")
    limit = backend.launch_limit_reason(arch, usage, getattr(config, "num_warps", None))
    if status != "ok":
        if limit is None:
            raise ValueError(f"has status {status!r} but its usage launches on {arch.name}: a status is \"ok\", "
                             "a compile error (with no usage) or the launch limit its usage breaks")
        return
    values = backend.metric_values(usage)
    for m in backend.metrics:
        maximum = getattr(arch, m.arch_max) if m.arch_max else None
        if isinstance(maximum, int) and values[m.name] > maximum:
            raise ValueError(f"is \"ok\" with usage {m.name} {values[m.name]}, more than {arch.name}'s maximum of "
                             f"{maximum}")
    if limit:
        raise ValueError(f"is \"ok\" but its usage cannot launch: {limit}")


def _usage(d: Any) -> ResourceUsage | None:
    """A usage object, every field of the vendor's class checked for its type."""
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TypeError("has a usage that is not an object")
    cls = _USAGE.get(d.get("vendor"))  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"has usage vendor {d.get('vendor')!r}; allowed: {', '.join(_USAGE)}")
    for f in fields(cls):
        if f.name not in d:
            if f.default is MISSING:
                raise KeyError(f"usage.{f.name}")
            continue
        value, optional = d[f.name], "None" in str(f.type)
        if value is None and optional:
            continue
        if "int" in str(f.type):
            _count(value, f"usage.{f.name}")
        elif not isinstance(value, str):
            raise TypeError(f"has usage.{f.name} {json.dumps(value)}, not a string")
    return usage_from_dict(d)


def _occupancy(d: Any) -> Mapping[str, Any] | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TypeError("has an occupancy that is not an object")
    _count(d["value"], "occupancy.value")
    if not isinstance(d["unit"], str):
        raise TypeError(f"has occupancy.unit {json.dumps(d['unit'])}, not a string")
    return d


def entries_of(records: Iterable[Record]) -> list[Entry]:
    """The entries of a run's records. Two rows of one slot with different configs (a source whose slots
    collide) are told apart by their config hash rather than one hiding the other; such slots match
    nothing of another config, so the gate fails closed on them."""
    entries = [Entry.from_record(r) for r in records]
    configs: dict[str, set[str]] = {}
    for e in entries:
        configs.setdefault(e.key, set()).add(e.config_key)
    out, seen = [], set()
    for e in entries:
        if len(configs[e.key]) > 1:
            e = replace(e, slot=f"{e.slot} ~{e.config_key}")
        if e.key not in seen:  # the same compile listed twice: once is enough
            seen.add(e.key)
            out.append(e)
    return out


@dataclass(frozen=True)
class Baseline:
    triton_version: str
    entries: Mapping[str, Entry]  # by key
    set: Mapping[str, Any] = field(default_factory=dict)  # the configured set it was saved from (for readers)
    vgprscope_version: str = ""
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)  # as read

    @classmethod
    def of(cls, entries: Iterable[Entry], triton_version: str, set_: Mapping[str, Any] | None = None) -> Baseline:
        from .. import __version__

        return cls(triton_version, {e.key: e for e in sorted(entries, key=lambda e: e.key)}, dict(set_ or {}),
                   __version__)

    def merged(self, newer: Baseline, replaces: Callable[[Entry], bool]) -> Baseline:
        """``newer``'s entries plus this one's that ``replaces`` leaves alone (a save of part of the set)."""
        kept = [e for e in self.entries.values() if not replaces(e) and e.key not in newer.entries]
        return Baseline.of([*kept, *newer.entries.values()], newer.triton_version, newer.set)

    def to_json(self) -> str:
        # No date and no git sha: re-saving an unchanged set gives the same bytes, so git shows no diff.
        doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "triton_version": self.triton_version,
               "vgprscope_version": self.vgprscope_version, "set": dict(self.set),
               "entries": {k: e.as_json() for k, e in self.entries.items()}}
        return _SCALAR_LIST.sub(lambda m: "[" + ", ".join(x.strip() for x in m[1].split(",")) + "]",
                                json.dumps(doc, indent=1)) + "\n"


# A list of numbers or simple strings on one line: shapes and limiters are read at a glance, not one
# element per line (strings with commas, brackets or braces are never inside such a list here).
_SCALAR_LIST = re.compile(r"\[\s*\n([^\[\]{}]*?)\n\s*\]")


# ---- reading and writing ----------------------------------------------------------------------------

class _Duplicate(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object hook: a key given twice (a bad merge) is an error, not the last copy silently."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _read(path: Path) -> dict[str, Any]:
    data = read_input(path, what="baseline", missing="create it with `vgprscope baseline save`",
                      error=NotComparableError)
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys)
    except _Duplicate as exc:
        raise NotComparableError(f"baseline {path} is corrupt: key {exc.args[0]!r} appears twice (a merge "
                                 "that kept both sides?); keep one and run `vgprscope check` again") from None
    except UnicodeDecodeError as exc:
        raise NotComparableError(f"baseline {path} is not UTF-8 text (corrupt): {exc.reason} at byte "
                                 f"{exc.start}") from None
    except ValueError as exc:
        raise NotComparableError(f"baseline {path} is not valid JSON (truncated or corrupt): {exc}") from None
    except RecursionError:
        raise NotComparableError(f"baseline {path} is corrupt: nested too deeply to read (not what `vgprscope "
                                 f"baseline save` writes)") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise NotComparableError(f"{path} is not a vgprscope baseline (no \"schema\": \"{SCHEMA}\")")
    version = doc.get("schema_version")
    if type(version) is int and version < SCHEMA_VERSION:  # schema 1: keyed by config hash, no slots
        raise NotComparableError(f"baseline {path} has schema version {version}, which this vgprscope does not "
                                 "read: re-save with `vgprscope baseline save`")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise NotComparableError(f"baseline {path} has schema version {version!r}; this vgprscope reads version "
                                 f"{SCHEMA_VERSION}: re-create it with `vgprscope baseline save`")
    return doc


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file (schema 2); NotComparableError (one line) when it is missing, unreadable, of
    another schema version, corrupt in any way, or empty (a baseline of nothing gates nothing)."""
    path = Path(path)
    doc = _read(path)
    entries, triton, set_ = doc.get("entries"), doc.get("triton_version"), doc.get("set") or {}
    if not isinstance(entries, dict) or not isinstance(triton, str) or not isinstance(set_, dict):
        raise NotComparableError(f"baseline {path} is corrupt: it lacks \"entries\" or \"triton_version\"")
    if not entries:
        raise NotComparableError(f"baseline {path} has no entries: it gates nothing; save it again with "
                                 "`vgprscope baseline save`")
    parsed: dict[str, Entry] = {}
    for key, raw in entries.items():
        try:
            entry = Entry.from_json(raw)
            if entry.key != key:
                raise ValueError(f"is stored under a key that does not match its fields ({entry.key})")
        except KeyError as exc:
            raise NotComparableError(f"baseline {path} is corrupt: entry {key!r} lacks {exc}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise NotComparableError(f"baseline {path} is corrupt: entry {key!r} {exc}") from None
        parsed[key] = entry
    return Baseline(triton, parsed, set_, str(doc.get("vgprscope_version", "")), doc["schema_version"])


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path``'s saves: ``flock`` on a lock file beside it, removed after.

    The lock file is checked to be the one at its path once locked: a waiter that got the lock on a file
    its holder already removed tries again, so two saves never hold it at once."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: saves are not serialised
        yield
        return
    lock = path.with_name(f".{path.name}.lock")
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: cannot create its lock file {lock}: "
                              f"{exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            mine = os.fstat(fd)
            try:
                now = os.stat(lock)
                if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                    break
            except FileNotFoundError:
                pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(lock)  # before the lock is released: a waiter on this file sees it gone and retries
        except OSError:
            pass
        os.close(fd)


def save_baseline(path: Path, baseline: Baseline, *, replaces: Callable[[Entry], bool] | None = None) -> Baseline:
    """Write ``baseline`` whole or not at all (``atomic_write``), one save of a file at a time (a lock).

    ``replaces``: this is a save of part of the set; the entries of the file as it is once the lock is
    held that ``replaces`` leaves alone are kept (so two saves of different parts at once both land).
    Returns what was written."""
    path = Path(path)
    try:  # the lock file lives beside the baseline
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        check_writable(path)  # the precise reason when it is one we know
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    with _locked(path):
        if replaces is not None and path.exists():
            old = load_baseline(path)
            if old.triton_version != baseline.triton_version:
                raise UsageError(f"{path} was compiled with Triton {old.triton_version}, this is "
                                 f"{baseline.triton_version}: save the whole set (without --variant / --arch) "
                                 "rather than mix versions")
            baseline = old.merged(baseline, replaces)
        atomic_write(path, baseline.to_json())
    return baseline


def check_triton_version(baseline: Baseline, installed: str, allow_change: bool) -> str | None:
    """NotComparableError when the versions differ and that is not allowed; else a note when they differ."""
    if baseline.triton_version == installed:
        return None
    if not allow_change:
        raise NotComparableError(f"the baseline was compiled with Triton {baseline.triton_version}, the installed "
                                 f"Triton is {installed}; re-save it with `vgprscope baseline save`, or pass "
                                 "--allow-version-change to compare across versions")
    return f"Triton changed: baseline {baseline.triton_version}, now {installed} (--allow-version-change)"
