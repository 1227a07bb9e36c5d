"""A capture file as a source: one task per captured specialisation (per autotune config of one) and arch.

Each launch compiles the kernel's *current* source with the recorded launch: editing a kernel is exactly what
a register gate must see. Only a change of the kernel's parameters makes a launch stale (the compile worker
says so in the row). A kernel whose file is not at the recorded place is looked up by its module name on this
Python's path, without importing anything (a capture taken in another machine's environment).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from ..archs import Arch
from ..capture.model import Capture, CapturedKernel, CapturedLaunch, load_capture
from ..compile.engine import RowInfo, Task, target_of
from ..backends import BACKENDS
from ..compile.job import Arg, CompileJob, FunctionSource, Target
from ..records import ArgSpec, AutotunePick, KernelIdentity, LaunchConfig
from .inductor import THRESHOLD_EXTRA, inductor_slot, spill_threshold

__all__ = ["capture_tasks", "load_capture", "launch_config", "launch_slot"]

BACKENDS_BY_NAME = {b.name: b for b in BACKENDS}


def module_file(module: str, root: str | None) -> Path | None:
    """Where ``module`` would load from on this Python's path (the capture's root first), found without
    importing anything (importing would import triton into this process)."""
    rel = Path(*module.split("."))
    for entry in [root, *sys.path]:
        if not entry:
            continue
        for candidate in (Path(entry) / rel.with_suffix(".py"), Path(entry) / rel / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _installed(path: Path) -> bool:
    """Whether a recorded path was a file of an installed package (in a site-packages directory)."""
    return any(part in ("site-packages", "dist-packages") for part in path.parts)


def resolve_file(kernel: CapturedKernel) -> tuple[Path | None, str | None]:
    """The kernel's file on this machine, or why there is none."""
    path = Path(kernel.file)
    if path.is_file():
        return path, None
    if kernel.snapshot and not kernel.source_hash:
        # no file to read when it was captured (a notebook cell, code given to exec): its snapshot is its
        # source (the row says it was compiled from it)
        return path, None
    if kernel.module and kernel.module != "__main__":
        found = module_file(kernel.module, kernel.root)
        if found is not None:
            return found, None
        if kernel.snapshot and _installed(path):
            # an installed library this machine lacks: its snapshot compiles (the row says so); a file of the
            # user's own that is gone was moved or deleted, and says so
            return path, None
        return None, (f"{path} does not exist (moved or deleted since the capture) and {kernel.module} is not on "
                      "this Python's path: install it, or capture again")
    return None, f"{path} does not exist (moved or deleted since the capture): capture again"


def _arg_spec(a: dict) -> ArgSpec:
    """A fact as the config shows it (the descriptor each backend's JIT derives from it)."""
    if a["type"] == "constexpr":
        return ArgSpec(a["name"], "constexpr")
    if a.get("one"):
        return ArgSpec(a["name"], "constexpr")
    hip = ("D" if a.get("aligned") else "") + ("S" if a.get("small") and a["type"].startswith("*") else "")
    cuda = "D" if a.get("aligned") else ""
    return ArgSpec(a["name"], a["type"], hip, cuda)


def launch_config(x: CapturedLaunch) -> LaunchConfig:
    at = x.autotune
    constexprs = {a["name"]: (1 if a.get("one") else a.get("value")) for a in x.args
                  if a["type"] == "constexpr" or a.get("one")}
    return LaunchConfig(
        args=tuple(_arg_spec(a) for a in x.args), constexprs=tuple(constexprs.items()),
        options=tuple(sorted((k, v) for k, v in x.options.items() if v is not None)),
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


def options_for(x: CapturedLaunch, target: Target) -> dict:
    """The launch's options for ``target``: a compile recorded for another vendor's backend (Inductor passes
    its whole option set to triton.compile) loses the options only that backend reads (``launch_pdl`` on
    CUDA, ``waves_per_eu`` on HIP: each backend's ``cache_options``)."""
    recorded = (x.target or {}).get("backend")
    if not recorded or recorded == target.backend:
        return x.options
    foreign = set(BACKENDS_BY_NAME[recorded].cache_options) if recorded in BACKENDS_BY_NAME else set()
    return {k: v for k, v in x.options.items() if k not in foreign}


def generated(x: CapturedLaunch) -> bool:
    """Whether a launch's kernel was generated by a compiler (PyTorch Inductor) rather than written in a file of
    the user's: its source exists only in the capture's snapshot once the compiler's cache is gone."""
    return bool(x.producer) and (x.producer or {}).get("by") == "inductor"


def capture_tasks(capture: Capture, archs: list[Arch]) -> list[Task]:
    """Every captured launch on every arch; a kernel that cannot be found keeps its rows, with why."""
    out: list[Task] = []
    seen: dict[tuple, int] = {}
    files: dict[CapturedKernel, tuple[Path | None, str | None]] = {}
    for x in capture.launches:
        ordinal = 0
        if not x.autotune:
            group = (x.kernel.key(), tuple(a["type"] for a in x.args))
            ordinal = seen.get(group, 0)
            seen[group] = ordinal + 1
        k = x.kernel
        if k not in files:
            files[k] = resolve_file(k)
        path, missing = files[k]
        if missing and k.snapshot and generated(x):
            # Inductor's generated module lived in its cache directory, which is temporary: its snapshot is the
            # kernel (the row says it was compiled from it)
            path, missing = Path(k.file), None
        row = RowInfo(label="inductor" if generated(x) else k.label, kernel=k.qualname, config=launch_config(x),
                      identity=KernelIdentity(k.module, k.qualname, str(path or k.file), k.source_hash),
                      source="capture", source_hash=k.source_hash,
                      slot=inductor_slot(x.args, x.options) if generated(x) else launch_slot(x, ordinal))
        reason = x.reason or missing
        for arch in archs:
            target = target_of(arch)
            rowed = row
            if generated(x):  # the spill threshold Inductor's autotuner applies there
                threshold = spill_threshold((x.producer or {}).get("meta"), (x.target or {}).get("backend"),
                                            target.backend)
                rowed = replace(row, extras=(*row.extras, (THRESHOLD_EXTRA, threshold)))
            if reason:
                out.append(Task(None, arch, rowed, reason))
                continue
            source = FunctionSource(file=str(path), qualname=k.qualname, module=k.module or "", root=k.root or "",
                                    snapshot=k.snapshot or "")
            job = CompileJob.of(source, target, tuple(Arg.from_dict(a) for a in x.args), options_for(x, target))
            out.append(Task(job, arch, rowed))
    return out


def capture_file_tasks(capture_file: Path, archs: list[Arch]) -> list[Task]:
    return capture_tasks(load_capture(capture_file), archs)
