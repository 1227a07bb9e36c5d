"""A worker's answer -> the cached result of its kernel (usage through the backend's parser, or the error)
-> the task's Record (with the occupancy its backend computes); ``valid_result`` checks a cached result."""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePath
from typing import Any, cast

from ..backends import backend_of, backend_of_usage, occupancy_of
from ..core.archs import Arch
from ..core.parse.diagnostics import compile_diagnostics, failure_reason
from ..core.records import Diagnostic, Record, ResourceUsage, usage_from_dict, usage_to_dict
from ..runtime import worker
from .task import Task

PARSER_VERSION = 5  # 4: the usage carries the hot loop's figures; 5: the compiler's diagnostics and LLVM version
# beside the usage, a failed ptxas's own error line


def parse_output(arch: Arch, out: dict[str, Any]) -> ResourceUsage:
    """One kernel's raw compiler outputs -> ResourceUsage, through the backend's own parser."""
    return backend_of(arch).parse(out)


def launch_limit_reason(arch: Arch, usage: ResourceUsage, num_warps: int | None = None) -> str | None:
    """Why a compiled kernel could not be launched on ``arch`` (Triton only finds out at load time)."""
    return backend_of(arch).launch_limit_reason(arch, usage, num_warps)


def result_of(arch: Arch, answer: dict[str, Any]) -> dict[str, Any]:
    """A worker's answer -> the cached result of its kernel: usage (or error), seconds, num_warps."""
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
        # the compiler's own reason where the exception gives only the pipeline's ("PassManager::run failed")
        reason = failure_reason(str(answer.get("compile_log") or ""))
        if reason and (reason.startswith("LLVM ERROR") or "PassManager::run failed" in out["error"]):
            out["error"] = reason
        elif out["error"].startswith("PTXASError:"):  # ptxas's first error, without the headline and closing line
            out["error"] = next((d.text() for d in diagnostics if d.tool == "ptxas" and d.severity == "error"),
                                out["error"])
        return out
    try:
        out["usage"] = usage_to_dict(parse_output(arch, answer))
    except Exception as exc:  # a parser failure is a row, never the end of the run
        out["error"] = f"cannot parse the compiler output: {worker.one_line(exc)}"
    return out


def valid_result(result: Any) -> bool:
    """A cached result of the right shape: an error line, or a usage every count of which is an integer."""
    if not isinstance(result, dict) or not isinstance(result.get("seconds", 0.0), (int, float)):
        return False
    if "num_warps" in result and (isinstance(result["num_warps"], bool) or not isinstance(result["num_warps"], int)):
        return False
    if not isinstance(result.get("llvm_version", ""), str) or not isinstance(result.get("diagnostics", []), list):
        return False
    try:
        [Diagnostic.from_dict(d) for d in result.get("diagnostics", [])]
    except (TypeError, AttributeError):
        return False
    if "error" in result:
        return isinstance(result["error"], str) and bool(result["error"])
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return False
    try:
        u = usage_from_dict(usage)
    except (KeyError, TypeError, ValueError):
        return False
    if u is None:
        return False
    return all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
               for v in backend_of_usage(u).metric_values(u).values())


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
                  extras=row.extras + ((("note", result["note"]),) if result.get("note") else ()), slot=row.slot,
                  toolchain=row.toolchain, llvm_version=str(result.get("llvm_version") or ""),
                  diagnostics=tuple(Diagnostic.from_dict(d) for d in result.get("diagnostics") or ()),
                  refused=task.refused)


def reason_record(task: Task, reason: str, tv: str) -> Record:
    row = task.row
    return Record(variant=row.label, kernel=row.kernel, arch=task.arch.name, config=row.config, status=reason,
                  triton_version=tv, source_hash=row.source_hash, identity=row.identity, source=row.source,
                  extras=row.extras, slot=row.slot, toolchain=row.toolchain, refused=task.refused)
