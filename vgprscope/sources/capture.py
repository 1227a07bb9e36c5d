"""A capture file as a source: one spec per captured specialisation (per autotune config of one)."""

from __future__ import annotations

from pathlib import Path

from ..capture.model import Capture, CapturedLaunch, load_capture
from ..records import ArgSpec, AutotunePick, KernelIdentity, LaunchConfig
from .spec import CompileSpec, dumps

__all__ = ["capture_specs", "load_capture", "launch_spec"]


def _file_reason(path: Path, source_hash: str, hashes: dict[Path, str | None], module: str) -> str | None:
    """Why a captured kernel's file cannot be compiled as captured (moved or changed), or None.

    A missing file of an importable module is not a reason yet: the compile worker imports the module by
    name (a capture from another machine's venv) and checks that its source hashes as captured."""
    from ..compile.load import file_hash

    if path not in hashes:
        hashes[path] = file_hash(path) if path.is_file() else None
    now = hashes[path]
    if now is None:
        if module and module != "__main__":
            return None
        return f"{path} no longer exists (moved or deleted since the capture): capture again"
    if now != source_hash:
        return f"{path.name} changed since the capture (source hash {now}, captured {source_hash}): capture again"
    return None


def launch_config(x: CapturedLaunch) -> LaunchConfig:
    at = x.autotune
    return LaunchConfig(
        args=tuple(ArgSpec(a["name"], a["type"], a.get("hip"), a.get("cuda")) for a in x.args),
        constexprs=tuple(x.constexprs.items()), options=tuple(sorted(x.options.items())),
        autotune=AutotunePick(at["index"], at["count"], at["declared"], tuple(at["key"])) if at else None)


def launch_spec(x: CapturedLaunch, reason: str | None = None) -> CompileSpec:
    k = x.kernel
    config = launch_config(x)
    job = dumps({"module": k.module, "qualname": k.qualname, "file": k.file, "root": k.root,
                 "source_hash": k.source_hash, "args": list(x.args), "constexprs": x.constexprs,
                 "options": x.options})
    return CompileSpec(label=k.label, kernels=(k.qualname,), config=config,
                       identity=KernelIdentity(k.module, k.qualname, k.file, k.source_hash), source="capture",
                       kind="launch", job=job, source_hash=k.source_hash, key=config.key(),
                       reason=x.reason or reason)


def capture_specs(capture: Capture) -> list[CompileSpec]:
    """Every captured launch as a spec; a kernel whose file moved or changed keeps its rows, with why."""
    hashes: dict[Path, str | None] = {}
    return [launch_spec(x, _file_reason(Path(x.kernel.file), x.kernel.source_hash, hashes, x.kernel.module))
            for x in capture.launches]
