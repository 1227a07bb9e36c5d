"""The register-split frontier: a warp-specialized kernel compiled at each setting of the knob that splits the
registers between its partitions (a variant's ``VARIANT['frontier_knob']``: ws-regalloc's ``producer_regs``).

Raising a worker partition's ``worker_num_regs`` takes registers from the default partition (Triton's
AllocateWarpGroups rule, :mod:`vgprscope.core.parse.setmaxnreg`); the kernel-wide count ptxas reports does not
move, so the occupancy levels say nothing here. Each setting is an ordinary compile of the spec with the knob
set (what ``analyze -k NAME=V`` prints for it); its row gives each partition's registers as ``explain`` reads
them (the rule, checked against the SASS's ``setmaxnreg``), the kernel's count, its spills and stack; the
summary (``summary.split_summary``) names the settings that compile without spilling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...backends import backend_of
from ...core.archs import Arch
from ...core.parse.setmaxnreg import with_given_registers
from ...core.parse.ttgir import warp_partitions
from ...core.records import Record
from ...report.vendor_words import words_of
from .core import KernelFrontier, Level, LevelPlan


def split_level(knob: str, value: int, record: Record, raw: dict[str, Any] | None, arch: Arch) -> Level:
    """One setting's compile as a Level: its plan's target is the occupancy reached, its budget the
    kernel-wide register count, its setting the knob's value; its partitions as explain gives them."""
    usage = record.usage
    partitions: tuple[Any, ...] = ()
    if usage is not None and raw is not None and "ttgir" in raw:
        sass = backend_of(arch).disassemble(raw) or ""
        partitions = with_given_registers(warp_partitions(raw["ttgir"]), sass, getattr(usage, "regs", None))
    occ = record.occupancy
    lv = Level(LevelPlan(occ.value if occ else 0, 0, knob, value), record, partitions=partitions)
    return replace(lv, plan=replace(lv.plan, budget=lv.allocation or 0))


def given(level: Level, name: str) -> int | None:
    """The registers partition ``name`` is given at this setting (None: not read or not set)."""
    return next((p.given_registers for p in level.partitions if p.name == name), None)


def toolchain_words(kf: KernelFrontier) -> str:
    """' (Triton 3.6.0)' where another toolchain than the installed Triton compiled the frontier, else ''."""
    tc = kf.levels[0].record.toolchain if kf.levels else ""
    return f" (Triton {tc})" if tc else ""


def workers_given(level: Level) -> str:
    """'24' (each worker partition's registers, in order; '?' where the SASS does not set the rule's count)."""
    workers = [p for p in level.partitions if p.name != "default"]
    return ",".join("?" if p.given_registers is None else str(p.given_registers) for p in workers) or "-"


def split_frontier(variant: str, kernel: str, arch: Arch, config: Any, knob: str,
                   levels: Sequence[Level]) -> KernelFrontier:
    """One kernel's register-split frontier: its settings' compiles, fewest registers for the knob first."""
    ordered = tuple(sorted(levels, key=lambda lv: lv.plan.setting or 0))
    free = tuple(lv.plan.setting for lv in ordered if lv.spill_free and lv.plan.setting is not None)
    return KernelFrontier(variant=variant, kernel=kernel, arch=arch.name, config=config,
                          unit=words_of(arch.vendor).unit, knob=knob, levels=ordered, split=True,
                          spill_free_settings=free)


def knob_of(task: Any) -> tuple[str, tuple[int, ...]] | None:
    """The register-split knob the task's variant declares (``VARIANT['frontier_knob']``), or None."""
    return getattr(getattr(task, "variant", None), "frontier_knob", None)


def run_split(tasks: Sequence[Any], compile_fn: Any, raw_fn: Any) -> list[KernelFrontier]:
    """The split frontier of every kernel of ``tasks`` (each task one setting of its variant's knob, which
    its config sets), compiled in one batch: one frontier per kernel x arch x config without the knob x
    toolchain."""
    from .core import compile_grouped, engine_tasks

    access = engine_tasks()
    tasks = list(dict.fromkeys(tasks))
    groups: dict[tuple, tuple[Any, Any, list[Level]]] = {}
    for task, records in zip(tasks, compile_grouped(tasks, compile_fn, access)):
        name = knob_of(task)[0]  # type: ignore[index]
        cfg = task.config
        rest = replace(cfg, extra=tuple((k, v) for k, v in cfg.extra if k != name))
        raw = raw_fn(task)
        for rec in records:
            key = (task.label, rec.kernel, task.arch.name, rest.key(), task.row.toolchain)
            entry = groups.setdefault(key, (task, rest, []))
            entry[2].append(split_level(name, cfg.get(name), rec, raw, task.arch))
    return [split_frontier(task.label, key[1], task.arch, rest, knob_of(task)[0], levels)  # type: ignore[index]
            for key, (task, rest, levels) in groups.items()]
