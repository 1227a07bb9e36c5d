"""What another Triton release, or a compiler setting, does to the same kernels (``vgprscope diff``).

The same tasks (bundled variants, a capture, a kernel directory) compiled by two sides, each a toolchain
with its settings; the after side is compared with the before side by the gate's own rules, entry by
entry (a slot's kernel x config x arch), so "worse" means exactly what it means to ``check``. For every
entry that regressed, the spill sites of both sides by source line (explain's), and the lines that newly
spill. Nothing here compiles on its own: the engine does, under each side's toolchain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...compile.engine import Engine
from ...compile.task import Task
from ...compile.toolchains import Toolchain
from ...core.errors import NotComparableError
from ...core.records import Record
from ...gate.baseline import Baseline, Entry, entries_of
from ...gate.diff import GateResult, judge
from ...gate.rules import RuleSet
from ...sources.inductor import ThresholdCrossing, threshold_crossings
from .loops import LoopChange, loop_changes


@dataclass(frozen=True)
class SiteChange:
    """One source line's spill instructions on each side (``in_loop``: inside a loop)."""

    location: str
    in_loop: bool
    before: int
    after: int

    @property
    def new(self) -> bool:
        return self.before == 0 and self.after > 0


@dataclass(frozen=True)
class SpillSites:
    """A regressed entry's spill sites, before and after, by source line (most instructions first)."""

    key: str
    sites: tuple[SiteChange, ...]
    note: str = ""  # why there are none to show (no compiler outputs, nothing spills)

    @property
    def new(self) -> tuple[SiteChange, ...]:
        return tuple(s for s in self.sites if s.new)


@dataclass(frozen=True)
class SidesDiff:
    """The same kernels under two sides, judged (``diff``); what ``vgprscope.diff`` returns adds its exports
    (``analysis.diff.result.DiffResult``)."""

    before: Toolchain
    after: Toolchain
    archs: tuple[str, ...]
    gate: GateResult
    spills: tuple[SpillSites, ...]
    records_before: tuple[Record, ...]
    records_after: tuple[Record, ...]
    crossings: tuple[ThresholdCrossing, ...] = ()  # Inductor configs whose skip changes between the sides
    # (side label, entry key, why) of each entry a side could not load from its current source (a module that
    # neither imports nor reads there): not judged, and the diff cannot say what the upgrade does to it
    unloaded: tuple[tuple[str, str, str], ...] = ()

    @property
    def comparable(self) -> bool:
        """Whether both sides compiled every kernel from the same (current) source where they compiled it."""
        return not self.unloaded

    @property
    def compared(self) -> int:
        return sum(1 for d in self.gate.entries if d.baseline is not None and d.current is not None
                   and d.baseline.status == "ok" and d.current.status == "ok")

    @property
    def passed(self) -> bool:
        return self.gate.passed

    @property
    def judged(self) -> bool:
        """Whether the gate could judge the upgrade: something compiled on both sides, each from its current
        source."""
        return self.compared > 0 and self.comparable

    def loop_spills(self) -> tuple[int, int]:
        """Spill instructions inside loops over every kernel that compiled on both sides (AMD counts them;
        NVIDIA's ptxas does not say where its spills are, so its kernels add nothing here)."""
        before = after = 0
        for d in self.gate.entries:
            if d.baseline is None or d.current is None:
                continue
            b, a = (_in_loop(rec.usage) for rec in (d.baseline, d.current))
            if b is not None and a is not None:
                before += b
                after += a
        return before, after

    @property
    def loops(self) -> tuple[LoopChange, ...]:
        """The compared entries whose hot loop's scratch traffic per trip changed, named by its lines."""
        return loop_changes(self.gate.entries)

    def summary(self) -> str:
        """'3.8.0 -> 3.9.0 on gfx950: 4 of 31 kernel x arch entries regress; spill instructions in loops 12 -> 77 (+65)'."""
        regress = len(self.gate.failures)
        total = len(self.gate.entries)
        head = f"{self.before.label} -> {self.after.label} on {', '.join(self.archs)}: "
        for side in dict.fromkeys(s for s, _, _ in self.unloaded):
            which = [(k, why) for s, k, why in self.unloaded if s == side]
            head += (f"the {side} side cannot compile {len(which)} kernel x arch entr{'y' if len(which) == 1 else 'ies'} "
                     f"from their current source, not compared ({which[0][1]}); ")
        # an entry is a kernel on an arch (in a slot): "kernels" would count each kernel once per arch
        what = f"kernel x arch entr{'y' if total == 1 else 'ies'}"
        head += (f"{regress} of {total} {what} regress{'es' if regress == 1 else ''}" if regress
                 else f"none of the {total} {what} regresses")
        better = sum(1 for d in self.gate.entries if d.change.name == "BETTER")
        if better:
            head += f", {better} improve"
        changed = sum(1 for d in self.gate.entries if d.change.name == "CHANGED")
        if changed:  # registers, SGPRs or LDS grew within their occupancy step: no cost, no failure
            head += f", {changed} change within their occupancy step"
        b, a = self.loop_spills()
        if a != b:
            head += f"; spill instructions in loops {b} -> {a} ({a - b:+d})"
        grown = [c for c in self.loops if c.grew]
        if grown:
            n, top = len(grown), grown[0]
            head += (f"; the hot loop's scratch traffic per trip grows in {n} entr{'y' if n == 1 else 'ies'} "
                     f"({'up to ' if n > 1 else ''}{top.spill_before} -> {top.spill_after} B)")
        if self.crossings:
            n = len(self.crossings)
            head += f"; {n} Inductor config{'s' if n > 1 else ''} cross{'' if n > 1 else 'es'} its spill threshold"
        return head


def _sites(engine: Engine, task: Task) -> dict[tuple[str, bool], int] | None:
    """Spill instructions by (source line with its inlined-at chain, in a loop), read from a task's compiler
    outputs as explain reads them: the AMDGCN's spill instructions, or the cubin's SASS (nvdisasm)."""
    from ...backends import backend_of
    from ..explain.core import spill_sites

    raw = engine.raw_outputs(task)
    if raw is None or "error" in raw:
        return None
    instructions = backend_of(task.arch).spill_instructions(raw)
    if instructions is None:
        return None
    return {(" <- ".join(s.location), s.in_loop): s.stores + s.reloads for s in spill_sites(instructions)}


def _in_loop(usage) -> int | None:
    """Spill instructions in loops as the usage's backend counts them (None: it does not say where)."""
    if usage is None:
        return None
    from ...backends import backend_of_usage

    return backend_of_usage(usage).figures(usage).spill_insts_in_loop


def _spills(rec: Record | None) -> int:
    return rec.usage.spills if rec is not None and rec.usage is not None else 0


def _spill_sites(engine: Engine, key: str, before: Task, after: Task, spilled: bool) -> SpillSites:
    if not spilled:  # registers alone regressed: nothing spills on either side, no sites to read
        return SpillSites(key, (), "no spill on either side")
    a, b = _sites(engine, before), _sites(engine, after)
    if a is None or b is None:
        return SpillSites(key, (), "no compiler outputs to read spill sites from")
    changes = [SiteChange(loc, loop, a.get((loc, loop), 0), b.get((loc, loop), 0))
               for loc, loop in dict.fromkeys([*a, *b])]
    changes.sort(key=lambda s: (-(s.after - s.before), not s.in_loop, s.location))
    return SpillSites(key, tuple(changes), "" if changes else "no spill on either side")


def diff(tasks: Sequence[Task], before: Toolchain, after: Toolchain, *, rules: RuleSet = RuleSet(),
         engine: Engine | None = None, fail_on_change: bool = False) -> SidesDiff:
    """Compile ``tasks`` under both sides and judge the after side by the gate's ``rules``."""
    engine = engine or Engine()
    tasks = list(tasks)
    side_a = [t.under(before) for t in tasks]
    side_b = [t.under(after) for t in tasks]
    records_a, records_b = engine.compile(side_a), engine.compile(side_b)
    # an entry a side could not load (its module neither imports nor reads there) says nothing of the upgrade:
    # it is left out of the judgement and named in the summary, never a regression or an improvement
    unloaded = tuple((tc.label, Entry.from_record(r).key, r.status) for tc, recs in ((before, records_a), (after, records_b))
                     for r in recs if dict(r.extras).get("unloaded"))
    out = {key for _, key, _ in unloaded}
    if out and all(Entry.from_record(r).key in out for r in records_b):
        side, _, why = unloaded[0]
        raise NotComparableError(f"the {side} side cannot compile the kernels from their current source ({why}): "
                                 "nothing to compare")
    baseline = Baseline.of([e for e in entries_of(records_a) if e.key not in out], before.version)
    result = judge(baseline, [e for e in entries_of(records_b) if e.key not in out], rules,
                   fail_on_change=fail_on_change, current_triton=after.version)
    by_key_a = {Entry.from_record(r).key: (t, r) for r, t in zip(records_a, side_a)}
    by_key_b = {Entry.from_record(r).key: (t, r) for r, t in zip(records_b, side_b)}
    spills = tuple(_spill_sites(engine, d.key, by_key_a[d.key][0], by_key_b[d.key][0],
                                _spills(by_key_a[d.key][1]) + _spills(by_key_b[d.key][1]) > 0)
                   for d in result.failures if d.key in by_key_a and d.key in by_key_b)
    archs = tuple(dict.fromkeys(t.arch.name for t in tasks))
    crossings = threshold_crossings({k: r for k, (_, r) in by_key_a.items()}, {k: r for k, (_, r) in by_key_b.items()})
    return SidesDiff(before, after, archs, result, spills, tuple(records_a), tuple(records_b), crossings, unloaded)
