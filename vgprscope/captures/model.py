"""The capture file (docs/design.md, "Data model"): versioned JSON, meant to be committed, read and written whole.

Paths live relative to the capture file when the kernel's file is inside the capture's project (the
nearest directory above the capture file holding ``.git`` or ``pyproject.toml``), so the same file works in
any checkout of the project, at any path; a kernel from elsewhere (an installed library) keeps its absolute
path and is found again by its module name on the analysing machine's path. Each launch is its arguments as
facts (``compile.job.Arg``): type, alignment / divisibility, equal to 1, AMD buffer range, constexpr values.
Schema 3 adds what the gate needs to derive the launch the current source makes: the user's own call
(``call``: how many positional arguments, which keywords) and, for a launch through ``@triton.heuristics`` or
``prune_configs_by``, each scalar argument's value and each tensor's shape and strides (what those read). Schema 2
files (no values: a heuristic then cannot be derived, and its rows say "capture again") are read too; a schema 1
file (each backend's descriptor strings) is refused with one line saying to capture again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.fsutil import atomic_write, read_versioned_json

SCHEMA = "vgprscope-capture"
SCHEMA_VERSION = 3
READABLE_VERSIONS = (2, 3)


class CaptureFileError(UsageError):
    """A capture file that cannot be read: missing, corrupt, truncated or of another schema (exit 2)."""


@dataclass(frozen=True)
class CapturedKernel:
    """A captured kernel's function: ``file`` and ``root`` are absolute here (resolved on load)."""

    module: str
    qualname: str
    file: str
    source_hash: str
    root: str | None = None  # the sys.path entry the module came from
    # the kernel's source and what it reads, as JSON (runtime.snapshot): compiled instead of the
    # module when the module cannot be imported where it is analysed
    snapshot: str | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """The rows' first column: the module (the file's name for a kernel in a script)."""
        return self.module if self.module and self.module != "__main__" else Path(self.file).name

    def key(self) -> tuple[str, str, str]:
        return (self.module, self.qualname, self.file)


@dataclass(frozen=True)
class CapturedLaunch:
    """One distinct specialisation (one autotune config of one, for an autotuned kernel)."""

    kernel: CapturedKernel
    args: tuple[dict[str, Any], ...]  # facts: {"name", "type", "aligned", "one", "small", "value"}
    options: dict[str, Any] = field(default_factory=dict)
    autotune: dict[str, Any] | None = None  # {"index", "count", "declared", "key"}
    reason: str | None = None  # why it cannot be compiled (recorded by the hook)
    interpreted: bool = False
    values: dict[str, Any] | None = None  # scalar arguments' values (None: not recorded, schema 1 and 2)
    tensors: dict[str, Any] | None = None  # tensor arguments' {"shape", "stride"}
    call: dict[str, Any] | None = None  # the user's call: {"positional": n, "keywords": [...]}
    # a compile recorded at ``triton.compile`` (Inductor's kernels, libraries with their own launchers) rather
    # than a JIT launch: the target it was compiled for, and who compiled it ({"by": "inductor", "kernel_name",
    # "heuristic", "config", "meta"})
    origin: str = "jit"
    target: dict[str, Any] | None = None
    producer: dict[str, Any] | None = field(default=None, compare=False)
    gluon: bool = False  # a @gluon.jit kernel (compiled through Gluon's source)

    @property
    def constexprs(self) -> dict[str, Any]:
        return {a["name"]: a.get("value") for a in self.args if a["type"] == "constexpr"}

    def as_json(self, kernel_index: int) -> dict[str, Any]:
        out = {"kernel": kernel_index, "args": list(self.args), "options": self.options,
               "autotune": self.autotune, "reason": self.reason, "interpreted": self.interpreted,
               "values": self.values, "tensors": self.tensors, "call": self.call}
        if self.origin != "jit":
            out |= {"origin": self.origin, "target": self.target, "producer": self.producer}
        if self.gluon:
            out["gluon"] = True
        return out

    @classmethod
    def from_json(cls, kernel: CapturedKernel, x: dict[str, Any], args: tuple[dict[str, Any], ...]) -> CapturedLaunch:
        """A launch as the hook or a capture file wrote it (``args`` already read into facts)."""
        return cls(kernel=kernel, args=args, options=dict(x["options"]), autotune=_autotune(x.get("autotune")),
                   reason=x.get("reason"), interpreted=bool(x.get("interpreted", False)),
                   values=_readings(x.get("values")), tensors=_readings(x.get("tensors")), call=_call(x.get("call")),
                   origin=str(x.get("origin") or "jit"), target=x.get("target"), producer=x.get("producer"),
                   gluon=bool(x.get("gluon", False)))


@dataclass(frozen=True)
class Capture:
    launches: tuple[CapturedLaunch, ...]
    command: tuple[str, ...] = ()
    triton_version: str = ""
    exit_code: int | None = None
    errors: tuple[str, ...] = ()  # what the hook could not record
    # the user's project the capture file belongs to (``project_root`` of its directory), when read from a file
    project: str | None = field(default=None, compare=False)

    @property
    def kernels(self) -> tuple[CapturedKernel, ...]:
        return tuple(dict.fromkeys(launch.kernel for launch in self.launches))

    def summary(self) -> str:
        tuned = [x for x in self.launches if x.autotune]
        plain = len(self.launches) - len(tuned)
        autotuned = {(x.kernel, tuple(x.autotune["key"])) for x in tuned}
        return (f"{_count(len(self.kernels), 'kernel')}, {_count(plain, 'specialisation')}, "
                f"{_count(len(tuned), 'autotune config')} (of {_count(len(autotuned), 'autotuned launch')})")

    def to_json(self, where: Path | None = None) -> str:
        """The file's text; with ``where`` (the file's own path) paths inside its project are relative."""
        from .. import __version__

        kernels = list(self.kernels)
        index = {k: i for i, k in enumerate(kernels)}
        base = Path(where).resolve().parent if where is not None else None
        project = project_root(base) if base is not None else None
        doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "vgprscope_version": __version__,
               "triton_version": self.triton_version, "command": list(self.command), "exit_code": self.exit_code,
               "kernels": [_kernel_json(k, base, project) for k in kernels],
               "launches": [x.as_json(index[x.kernel]) for x in self.launches], "errors": list(self.errors)}
        return json.dumps(doc, indent=1) + "\n"


def project_root(directory: Path) -> Path | None:
    """The nearest directory at or above ``directory`` holding ``.git`` or ``pyproject.toml``."""
    for d in (directory, *directory.parents):
        if (d / ".git").exists() or (d / "pyproject.toml").is_file():
            return d
    return None


def _relative(path: str | None, base: Path | None, project: Path | None) -> str | None:
    """``path`` relative to ``base`` (POSIX) when it lies inside the project, else unchanged."""
    if not path or base is None or project is None:
        return path
    p = Path(path).resolve()
    if any(part in ("site-packages", "dist-packages") for part in p.parts):
        return path  # an installed library (a virtual environment may sit inside the project): by module name
    try:
        p.relative_to(project)
    except ValueError:
        return path  # outside the project (an installed library): found again by module name
    return Path(os.path.relpath(p, base)).as_posix()


def _kernel_json(k: CapturedKernel, base: Path | None, project: Path | None) -> dict[str, Any]:
    out = {"module": k.module, "qualname": k.qualname, "file": _relative(k.file, base, project),
           "source_hash": k.source_hash, "root": _relative(k.root, base, project)}
    return out | ({"snapshot": json.loads(k.snapshot)} if k.snapshot else {})


def save_capture(path: Path, capture: Capture) -> None:
    atomic_write(path, capture.to_json(Path(path)))


def _absolute(path: str | None, base: Path) -> str | None:
    if not path:
        return path
    p = Path(path)
    return str(p if p.is_absolute() else (base / p).resolve())


def load_capture(path: Path) -> Capture:
    """Read a capture file (schema 2 or 3); CaptureFileError (one line) when it cannot be used. Paths come
    back absolute, resolved against the file's own directory."""
    path = Path(path)
    doc = read_versioned_json(path, what="capture file", schema=SCHEMA, version=READABLE_VERSIONS,
                              missing=f"record one with `vgprscope capture -o {path} -- COMMAND`",
                              stale="capture again (`vgprscope capture -o FILE -- COMMAND`)", error=CaptureFileError)
    base = path.resolve().parent
    try:
        kernels = [CapturedKernel(k["module"], k["qualname"], _absolute(k["file"], base), k["source_hash"],
                                  _absolute(k.get("root"), base),
                                  json.dumps(k["snapshot"]) if k.get("snapshot") else None) for k in doc["kernels"]]
        launches = tuple(CapturedLaunch.from_json(kernels[x["kernel"]], x, tuple(_fact(a) for a in x["args"]))
                         for x in doc["launches"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise CaptureFileError(f"capture file {path} is corrupt: {type(exc).__name__}: {exc}") from None
    except RecursionError:
        raise CaptureFileError(f"capture file {path} is corrupt: nested too deeply to read (not what `vgprscope "
                               f"capture` writes)") from None
    project = project_root(base)
    return Capture(launches, tuple(doc.get("command") or ()), str(doc.get("triton_version", "")),
                   doc.get("exit_code"), tuple(doc.get("errors") or ()), str(project) if project else None)


def _readings(d: Any) -> dict[str, Any] | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TypeError(f"launch values {d!r} are not an object")
    return dict(d)


def _call(d: Any) -> dict[str, Any] | None:
    if d is None:
        return None
    if not isinstance(d, dict) or type(d.get("positional")) is not int \
            or not all(isinstance(k, str) for k in d.get("keywords", [])):
        raise TypeError(f"launch call {d!r} lacks a positional count or keyword names")
    return {"positional": d["positional"], "keywords": list(d.get("keywords", []))}


def _fact(a: Any) -> dict[str, Any]:
    if not isinstance(a, dict) or not isinstance(a["name"], str) or not isinstance(a["type"], str):
        raise TypeError(f"argument entry {a!r} lacks a name or a type")
    out = {"name": a["name"], "type": a["type"]}
    for k in ("aligned", "one", "small"):
        if a.get(k):
            out[k] = True
    if a["type"] == "constexpr":
        out["value"] = a.get("value")
    elif "descriptor" in a:
        out["descriptor"] = a["descriptor"]
    return out


def _autotune(d: Any) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"index": int(d["index"]), "count": int(d["count"]), "declared": int(d["declared"]),
            "key": [str(k) for k in d.get("key", [])]}


def _count(n: int, noun: str) -> str:
    """'1 kernel', '2 kernels', '1 autotuned launch', '3 autotuned launches'."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun}{'es' if noun.endswith(('ch', 'sh', 's', 'x')) else 's'}"
