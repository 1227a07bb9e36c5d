"""A capture file as a source: one spec per captured specialisation (per autotune config of one)."""

from __future__ import annotations

from pathlib import Path

from ..capture.model import Capture, CapturedLaunch, load_capture
from ..records import ArgSpec, AutotunePick, KernelIdentity, LaunchConfig
from .spec import CompileSpec, dumps

__all__ = ["capture_specs", "load_capture", "launch_spec"]


def _module_file(module: str, root: str | None) -> Path | None:
    """Where ``module`` would load from on this Python's path (the capture's root first), found without
    importing anything (importing would import triton into this process)."""
    import sys

    rel = Path(*module.split("."))
    for entry in [root, *sys.path]:
        if not entry:
            continue
        for candidate in (Path(entry) / rel.with_suffix(".py"), Path(entry) / rel / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _file_reason(kernel, hashes: dict[Path, str | None]) -> str | None:
    """Why a captured kernel's source cannot be compiled as captured (moved away or changed), or None.

    A file that is gone but whose module is on this Python's path with the captured content (a capture
    from another machine's venv) is fine: the compile worker imports it by name and checks again."""
    from ..compile.load import file_hash

    path = Path(kernel.file)
    if not path.is_file() and kernel.module and kernel.module != "__main__":
        found = _module_file(kernel.module, kernel.root)
        if found is None:
            return (f"{path} no longer exists (moved or deleted since the capture) and {kernel.module} is not on "
                    "this Python's path: install it, or capture again")
        path = found
    if path not in hashes:
        hashes[path] = file_hash(path) if path.is_file() else None
    now = hashes[path]
    if now is None:
        return f"{path} no longer exists (moved or deleted since the capture): capture again"
    if now != kernel.source_hash:
        return (f"{path.name} changed since the capture (source hash {now}, captured {kernel.source_hash}): "
                "capture again")
    return None


def launch_config(x: CapturedLaunch) -> LaunchConfig:
    at = x.autotune
    return LaunchConfig(
        args=tuple(ArgSpec(a["name"], a["type"], a.get("hip"), a.get("cuda")) for a in x.args),
        constexprs=tuple(x.constexprs.items()), options=tuple(sorted(x.options.items())),
        autotune=AutotunePick(at["index"], at["count"], at["declared"], tuple(at["key"])) if at else None)


def launch_slot(x: CapturedLaunch, ordinal: int) -> str:
    """Record.slot of a captured launch: an autotune config by its key and its index in the config list
    (so a config edited in the list is compared with the one it replaced), any other launch by its
    argument types and its ordinal among the kernel's launches of those types."""
    if x.autotune:
        key = ",".join(x.autotune["key"])
        return f"autotune[{key}] cfg {x.autotune['index'] + 1}"
    types = ",".join(a["type"] for a in x.args if a["type"] != "constexpr")
    return f"({types}) #{ordinal + 1}"


def launch_spec(x: CapturedLaunch, reason: str | None = None, slot: str = "") -> CompileSpec:
    k = x.kernel
    config = launch_config(x)
    job = dumps({"module": k.module, "qualname": k.qualname, "file": k.file, "root": k.root,
                 "source_hash": k.source_hash, "args": list(x.args), "constexprs": x.constexprs,
                 "options": x.options})
    return CompileSpec(label=k.label, kernels=(k.qualname,), config=config,
                       identity=KernelIdentity(k.module, k.qualname, k.file, k.source_hash), source="capture",
                       kind="launch", job=job, source_hash=k.source_hash, key=config.key(),
                       reason=x.reason or reason, slot=slot)


def capture_specs(capture: Capture) -> list[CompileSpec]:
    """Every captured launch as a spec; a kernel whose file moved or changed keeps its rows, with why."""
    hashes: dict[Path, str | None] = {}
    seen: dict[tuple, int] = {}
    out = []
    for x in capture.launches:
        ordinal = 0
        if not x.autotune:
            group = (x.kernel.key(), tuple(a["type"] for a in x.args))
            ordinal = seen.get(group, 0)
            seen[group] = ordinal + 1
        out.append(launch_spec(x, _file_reason(x.kernel, hashes), launch_slot(x, ordinal)))
    return out
