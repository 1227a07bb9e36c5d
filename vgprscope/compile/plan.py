"""Planning: a kernel-directory variant's file at one config, for one arch, becomes its jobs in a worker
(its ``check_config`` and ``kernel_specs``), or the reason it has none; plans are cached beside the compiles."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.archs import Arch
from ..core.job import CompileJob
from ..runtime import worker
from ..runtime.protocol import PLAN_VERSION
from .task import target_of


@dataclass(frozen=True)
class PlanRequest:
    """A kernel-directory variant's file at one config, for one arch: planned by a worker into jobs."""

    directory: Path
    package: str
    file_name: str
    config: dict[str, Any]
    arch: Arch
    options: dict[str, Any]
    tree_hash: str  # of every Python file under the directory: a plan is redone when any changes

    def as_request(self) -> dict[str, Any]:
        return {"op": "plan", "directory": str(self.directory), "package": self.package,
                "file_name": self.file_name, "config": self.config, "options": self.options,
                "compute_units": self.arch.compute_units, "target": vars(target_of(self.arch))}

    def key(self, environment: str = "") -> str:
        """The plan's cache key: the request, and ``environment``, what decides whether the variant's module
        imports here (``identity.import_environment``: a plan made where it imports is no plan where it does
        not)."""
        blob = json.dumps([self.tree_hash, str(self.directory), self.package, self.file_name, self.config,
                           self.arch.name, self.arch.compute_units, self.options, PLAN_VERSION, environment],
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def __hash__(self) -> int:
        return hash(self.key())


@dataclass(frozen=True)
class Plan:
    """A variant request's jobs (kernel name, job), or why it has none."""

    jobs: tuple[tuple[str, CompileJob], ...] = ()
    reason: str | None = None
    cacheable: bool = True  # False: a failure of this machine (an import that failed), never stored
    # True: the reason is the variant's own refusal of the config (its ``check_config``: a value outside its
    # range), not a failure of its file
    refused: bool = False

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> Plan:
        if "error" in answer:
            return cls(reason=str(answer["error"]), cacheable=answer.get("error_kind") != worker.ENVIRONMENT)
        if answer.get("reason"):
            return cls(reason=str(answer["reason"]), refused=True)
        return cls(jobs=tuple((j["name"], CompileJob.from_dict(j["job"])) for j in answer["jobs"]))

    def as_dict(self) -> dict[str, Any]:
        return {"jobs": [{"name": n, "job": j.as_dict()} for n, j in self.jobs], "reason": self.reason,
                "refused": self.refused}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan | None:
        """A stored plan, or None where it is not one (read again: a plan stored before ``refused`` was kept
        cannot tell a refusal from a failure)."""
        try:
            refused = d["refused"]
            if not isinstance(refused, bool):
                return None
            return cls(jobs=tuple((j["name"], CompileJob.from_dict(j["job"])) for j in d.get("jobs") or ()),
                       reason=d.get("reason"), refused=refused)
        except (KeyError, TypeError, ValueError):
            return None
