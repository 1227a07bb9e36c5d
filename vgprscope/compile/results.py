"""A worker's answer -> the cached result of its kernel (usage through the backend's parser, or the error)
-> the task's Record (with the occupancy its backend computes); ``valid_result`` checks a cached result."""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePath
from subprocess import SubprocessError
from typing import Any, cast

from ..backends import backend_of, occupancy_of
from ..backends.base import usage_bounds
from ..backends.loops import loop_fields_consistent, loops_unread, read_loops
from ..core.archs import Arch
from ..core.limits import COUNT_LIMIT
from ..core.parse.diagnostics import compile_diagnostics, failure_reason
from ..core.records import (
    Diagnostic,
    Record,
    ResourceUsage,
    usage_dict_valid,
    usage_from_dict,
    usage_to_dict,
)
from ..runtime import worker
from .task import Task

PARSER_VERSION = 7  # 4: the usage carries the hot loop's figures; 5: the compiler's diagnostics and LLVM version
# beside the usage, a failed ptxas's own error line; 7: every loop's spill traffic, s_clause counted in a loop


def parse_output(arch: Arch, out: dict[str, Any], loops: bool | None = True) -> ResourceUsage:
    """One kernel's raw compiler outputs -> ResourceUsage, through the backend's own parser (``loops``: every
    loop figure, or those a view that shows no loop reads: ``backends.loops.read_loops``)."""
    return backend_of(arch).parse(out, loops)


def launch_limit_reason(arch: Arch, usage: ResourceUsage, num_warps: int | None = None) -> str | None:
    """Why a compiled kernel could not be launched on ``arch`` (Triton only finds out at load time)."""
    return backend_of(arch).launch_limit_reason(arch, usage, num_warps)


def result_of(arch: Arch, answer: dict[str, Any], loops: bool | None = True) -> dict[str, Any]:
    """A worker's answer -> the cached result of its kernel: usage (or error), seconds, num_warps. ``loops``
    False: the loop figures only a view reads (the gate loop's matrix share and lines) are left unread where
    they do not come free (``backends.loops.read_loops``), and the result says so (``loops_unread``); None:
    every figure that costs a disassembly is left unread."""
    out: dict[str, Any] = {"seconds": float(answer.get("seconds") or 0.0)}
    if answer.get("num_warps") is not None:  # what the compiler launched with (the occupancy's warps)
        out["num_warps"] = int(answer["num_warps"])
    if answer.get("note"):  # how it was compiled, when not from the files (a capture's snapshot)
        out["note"] = str(answer["note"])
    if answer.get("llvm_version"):
        out["llvm_version"] = str(answer["llvm_version"])
    diagnostics = compile_diagnostics(answer)
    if diagnostics:
        out["diagnostics"] = [d.as_dict() for d in diagnostics]
    if "error" in answer:
        out["error"] = str(answer["error"])
        if answer.get("error_kind") == worker.ENVIRONMENT:  # the kernel could not be loaded there: no verdict
            out["unloaded"] = True
        # the compiler's own reason where the exception gives only the pipeline's ("PassManager::run failed")
        reason = failure_reason(str(answer.get("compile_log") or ""))
        if reason and (reason.startswith("LLVM ERROR") or "PassManager::run failed" in out["error"]):
            out["error"] = reason
        elif out["error"].startswith("PTXASError:"):  # ptxas's first error, without the headline and closing line
            out["error"] = next((d.text() for d in diagnostics if d.tool == "ptxas" and d.severity == "error"),
                                out["error"])
        return out
    try:
        usage = parse_output(arch, answer, loops)
        out["usage"] = usage_to_dict(usage)
    except Exception as exc:  # a parser failure is a row, never the end of the run
        out["error"] = f"cannot parse the compiler output: {worker.one_line(exc)}"
        return out
    if loops_unread(backend_of(arch), usage, loops):
        out["loops_unread"] = True
    return out


def with_every_loop_figure(arch: Arch, result: dict[str, Any],
                           raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A cached result whose loop figures were left unread, with them read from its raw outputs; and the raw
    outputs with the text disassembled for it (an NVIDIA cubin's SASS: ``explain`` reads it next), None where
    nothing was disassembled."""
    backend = backend_of(arch)
    grown = None
    if not raw.get("sass"):
        try:
            sass = backend.disassemble(raw)
        except (OSError, SubprocessError, ImportError, AttributeError):
            sass = None
        if sass:
            raw = grown = raw | {"sass": sass}
    usage = usage_from_dict(result["usage"])
    filled = read_loops(backend, raw, usage, True)
    return {k: v for k, v in result.items() if k != "loops_unread"} | {"usage": usage_to_dict(filled)}, grown


def valid_result(result: Any, arch: Arch) -> bool:
    """A cached result as ``result_of`` writes it: an error line or a usage (never both), every field of its
    type and range (the usage's counts whole numbers within what ``arch`` holds: ``backends.base.usage_bounds``). Anything
    else is a damaged entry: the engine compiles it again, which heals it."""
    if not isinstance(result, dict) or set(result) - _RESULT_FIELDS:
        return False
    seconds = result.get("seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
        return False
    warps = result.get("num_warps", 1)
    if isinstance(warps, bool) or not isinstance(warps, int) or not 1 <= warps <= COUNT_LIMIT:
        return False
    if not all(isinstance(result.get(k, ""), str) for k in ("llvm_version", "note")):
        return False
    diagnostics = result.get("diagnostics", [])
    if not isinstance(diagnostics, list) or not all(
            isinstance(d, dict) and all(isinstance(v, str) for v in d.values()) for d in diagnostics):
        return False
    if result.get("loops_unread", True) is not True or ("loops_unread" in result and "usage" not in result):
        return False
    if ("error" in result) == ("usage" in result):  # exactly one: a failure's line, or a kernel's usage
        return False
    if "error" in result:
        return isinstance(result["error"], str) and bool(result["error"].strip())
    usage = result["usage"]
    if not isinstance(usage, dict) or backend_of(arch).vendor.value != usage.get("vendor"):
        return False
    return usage_dict_valid(usage, usage_bounds(backend_of(arch), arch)) and \
        loop_fields_consistent(usage, bool(result.get("loops_unread")))


# what a cached result may hold (result_of's keys)
_RESULT_FIELDS = frozenset({"seconds", "num_warps", "note", "llvm_version", "diagnostics", "error", "usage",
                            "loops_unread"})


def _deps_hash(deps: dict[str, str] | None) -> str:
    """What the kernel was built from, as one hash: each file's name and content hash, never where it sits, so
    the same sources checked out at another path (a CI runner, a colleague's clone) give the same hash."""
    if not deps:
        return ""
    return hashlib.sha256(json.dumps(sorted((PurePath(p).name, h) for p, h in deps.items())).encode()).hexdigest()[:16]


def record_of(task: Task, result: dict[str, Any], tv: str, cached: bool, deps: dict[str, str] | None) -> Record:
    row = task.row
    usage = usage_from_dict(result.get("usage"))
    status = result.get("error") or "ok"
    occ = None
    if usage is not None:
        warps = cast(int, result.get("num_warps") or task.config.num_warps)
        limit = launch_limit_reason(task.arch, usage, warps)
        status = limit or status
        if limit == launch_limit_reason(task.arch, usage):
            # occupancy 0 for a kernel over the LDS / shared limit; none for a workgroup the arch refuses
            occ = occupancy_of(usage, task.arch, warps, waves_per_eu=task.config.waves_per_eu)
    return Record(variant=row.label, kernel=row.kernel, arch=task.arch.name, config=row.config, status=status,
                  usage=usage, occupancy=occ, compile_seconds=float(result.get("seconds") or 0.0),
                  triton_version=tv, source_hash=_deps_hash(deps) or row.source_hash, cached=cached,
                  identity=row.identity, source=row.source,
                  extras=row.extras + ((("note", result["note"]),) if result.get("note") else ())
                  + ((("unloaded", True),) if result.get("unloaded") else ()), slot=row.slot,
                  toolchain=row.toolchain, llvm_version=str(result.get("llvm_version") or ""),
                  diagnostics=tuple(Diagnostic.from_dict(d) for d in result.get("diagnostics") or ()),
                  refused=task.refused, points=row.points,
                  verdict=row.judge(usage) if row.judge is not None and usage is not None and status == "ok" else None)


def reason_record(task: Task, reason: str, tv: str) -> Record:
    row = task.row
    return Record(variant=row.label, kernel=row.kernel, arch=task.arch.name, config=row.config, status=reason,
                  triton_version=tv, source_hash=row.source_hash, identity=row.identity, source=row.source,
                  extras=row.extras, slot=row.slot, toolchain=row.toolchain, refused=task.refused,
                  points=row.points)
