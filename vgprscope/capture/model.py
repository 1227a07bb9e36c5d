"""The capture file (DESIGN.md, "Capture"): versioned JSON, read and written whole."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..fsutil import atomic_write, read_versioned_json

SCHEMA = "vgprscope-capture"
SCHEMA_VERSION = 1
DEFAULT_CAPTURE = "vgprscope-capture.json"


class CaptureFileError(UsageError):
    """A capture file that cannot be read: missing, corrupt, truncated or of another schema (exit 2)."""


@dataclass(frozen=True)
class CapturedKernel:
    module: str
    qualname: str
    file: str
    source_hash: str
    root: str | None = None  # the sys.path entry the module came from

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
    args: tuple[dict[str, Any], ...]  # {"name", "type", "hip": desc, "cuda": desc}
    constexprs: dict[str, Any]
    options: dict[str, Any]
    autotune: dict[str, Any] | None = None  # {"index", "count", "declared", "key"}
    reason: str | None = None  # why it cannot be compiled (recorded by the hook)
    interpreted: bool = False

    def as_json(self, kernel_index: int) -> dict[str, Any]:
        return {"kernel": kernel_index, "args": list(self.args), "constexprs": self.constexprs,
                "options": self.options, "autotune": self.autotune, "reason": self.reason,
                "interpreted": self.interpreted}


@dataclass(frozen=True)
class Capture:
    launches: tuple[CapturedLaunch, ...]
    command: tuple[str, ...] = ()
    triton_version: str = ""
    exit_code: int | None = None
    errors: tuple[str, ...] = ()  # what the hook could not record

    @property
    def kernels(self) -> tuple[CapturedKernel, ...]:
        return tuple(dict.fromkeys(launch.kernel for launch in self.launches))

    def summary(self) -> str:
        tuned = [x for x in self.launches if x.autotune]
        plain = len(self.launches) - len(tuned)
        autotuned = {(x.kernel, tuple(x.autotune["key"])) for x in tuned}
        return (f"{len(self.kernels)} kernels, {plain} specialisations, {len(tuned)} autotune configs "
                f"(of {len(autotuned)} autotuned launches)")

    def to_json(self) -> str:
        from .. import __version__

        kernels = list(self.kernels)
        index = {k: i for i, k in enumerate(kernels)}
        doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "vgprscope_version": __version__,
               "triton_version": self.triton_version, "command": list(self.command), "exit_code": self.exit_code,
               "kernels": [vars(k) for k in kernels],
               "launches": [x.as_json(index[x.kernel]) for x in self.launches], "errors": list(self.errors)}
        return json.dumps(doc, indent=1) + "\n"


def save_capture(path: Path, capture: Capture) -> None:
    atomic_write(path, capture.to_json())


def load_capture(path: Path) -> Capture:
    """Read a capture file; CaptureFileError (one line) when it cannot be used."""
    path = Path(path)
    doc = read_versioned_json(path, what="capture file", schema=SCHEMA, version=SCHEMA_VERSION,
                              missing=f"record one with `vgprscope capture -o {path} -- COMMAND`",
                              stale="capture again", error=CaptureFileError)
    try:
        kernels = [CapturedKernel(k["module"], k["qualname"], k["file"], k["source_hash"], k.get("root"))
                   for k in doc["kernels"]]
        launches = tuple(CapturedLaunch(kernel=kernels[x["kernel"]], args=tuple(_arg(a) for a in x["args"]),
                                        constexprs=dict(x["constexprs"]), options=dict(x["options"]),
                                        autotune=_autotune(x.get("autotune")), reason=x.get("reason"),
                                        interpreted=bool(x.get("interpreted", False)))
                         for x in doc["launches"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise CaptureFileError(f"capture file {path} is corrupt: {type(exc).__name__}: {exc}") from None
    return Capture(launches, tuple(doc.get("command") or ()), str(doc.get("triton_version", "")),
                   doc.get("exit_code"), tuple(doc.get("errors") or ()))


def _arg(a: Any) -> dict[str, Any]:
    if not isinstance(a, dict) or not isinstance(a["name"], str) or not isinstance(a["type"], str):
        raise TypeError(f"argument entry {a!r} lacks a name or a type")
    return {"name": a["name"], "type": a["type"], "hip": a.get("hip"), "cuda": a.get("cuda")}


def _autotune(d: Any) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"index": int(d["index"]), "count": int(d["count"]), "declared": int(d["declared"]),
            "key": [str(k) for k in d.get("key", [])]}
