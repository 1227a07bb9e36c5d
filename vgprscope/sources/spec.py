"""CompileSpec: what one compile needs and nothing more, whichever source yielded it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..records import Config, KernelIdentity


@dataclass(frozen=True)
class CompileSpec:
    """One thing to compile for each arch, and the rows it yields.

    ``job`` is the worker's part as JSON (the kind of compile and its payload: a variant file and config, a
    captured launch, an IR file); ``key`` is stable across runs and part of the cache key with
    ``source_hash``; ``reason``, when set, says why the spec cannot compile (a changed source file, a
    value the capture could not record): its rows carry it and nothing is compiled.
    """

    label: str  # the rows' first column: a bundled variant's name, or the kernel's module
    kernels: tuple[str, ...]  # the kernel names it yields, in order (one row each)
    config: Config
    identity: KernelIdentity
    source: str  # "variants", "capture", "triton-cache"
    kind: str  # what the worker does: "variant", "launch" (captured), "ir" (recompile), "artifact" (read)
    job: str  # JSON payload for the worker
    source_hash: str
    key: str
    reason: str | None = None
    variant: Any = field(default=None, compare=False)  # the bundled Variant (bench and traffic need it)
    extras: tuple[tuple[str, Any], ...] = ()  # columns a source adds to its rows (cache: stored / recompiled)
    slot: str = ""  # Record.slot of its rows: what it stands for within its source, whatever its config

    def payload(self) -> dict[str, Any]:
        return json.loads(self.job)


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))
