"""A task: one CompileJob on one arch (or a row that cannot compile, with its reason) and what its row
shows, whatever source made it; ``target_of`` is what ``triton.compile`` targets for an arch."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..backends import backend_of
from ..core.archs import Arch
from ..core.job import CompileJob, Target
from ..core.records import Config, KernelIdentity, ResourceUsage, Verdict


@dataclass(frozen=True)
class RowInfo:
    """What a task's row shows, whatever compiles it: the source's label (a variant's name, a captured
    kernel's module), the kernel, the config as the source describes it, the slot the gate compares it by."""

    label: str
    kernel: str
    config: Config
    identity: KernelIdentity
    source: str  # "variants", "capture", "triton-cache"
    source_hash: str = ""
    slot: str = ""
    extras: tuple[tuple[str, Any], ...] = ()
    variant: Any = field(default=None, compare=False)  # the bundled Variant (traffic model, bench)
    toolchain: str = ""  # the side that compiles it, when not the installed Triton as is (Toolchain.label)
    # the grid points the row answers (``Record.points``): its slot first, then any other point sharing its config
    points: tuple[str, ...] = ()
    # what the source concludes from a compiled row's counts, stored on its record (``Record.verdict``)
    judge: Judge | None = field(default=None, compare=False)


class Judge(Protocol):
    """A source's judgement of its compiled row: its counts -> the verdict the record stores."""

    def __call__(self, usage: ResourceUsage) -> Verdict: ...


@dataclass(frozen=True)
class Task:
    """One job on one arch, or (``job`` None) a row that cannot compile, with its ``reason``."""

    job: CompileJob | None
    arch: Arch
    row: RowInfo
    reason: str | None = None
    # why the source does not take this row (a variant written for other archs, a value outside its range):
    # the commands that show rows say it in a note, not as a failed row ("" where it applies)
    refused: str = ""

    def __hash__(self) -> int:
        return hash((self.job.key() if self.job else self.reason, self.arch.name, self.row.label, self.row.kernel,
                     self.row.slot))

    @property
    def config(self) -> Config:
        return self.row.config

    @property
    def variant(self) -> Any:
        return self.row.variant

    @property
    def label(self) -> str:
        return self.row.label

    def vary(self, **options: Any) -> Task:
        """The same task with these launch options set: its job and its row's config follow."""
        job = self.job.with_options(**options) if self.job is not None else None
        return replace(self, job=job, row=replace(self.row, config=self.row.config.with_options(**options)))

    def under(self, toolchain: Any) -> Task:
        """The same task compiled by another toolchain (``compile.toolchains.Toolchain``), with its settings."""
        job = self.job.with_toolchain(toolchain.id, dict(toolchain.settings)) if self.job is not None else None
        return replace(self, job=job, row=replace(self.row, toolchain=toolchain.label))


def target_of(arch: Arch) -> Target:
    """What ``triton.compile`` targets for ``arch`` (its backend's answer)."""
    return backend_of(arch).target(arch)
