"""Baseline vs current, entry by entry: ``judge`` -> ``GateResult`` (typed verdicts, no text, no exit
codes: the report formats them, the CLI maps them to 0 / 1 / 2).

Entries are matched by key (label / kernel / arch / slot), so a slot whose config changed (a new default,
a grown autotune config) is compared metric by metric with what the slot compiled before, and shown as a
changed config. A baseline entry the run does not produce fails unless accepted; a run that compares
nothing is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from ..core.errors import NotComparableError
from ..report.machine import snapshot_note
from .baseline import Baseline, Entry
from .cliff import Cliff, judge_cliff
from .diagnostics import METRIC as DIAGNOSTICS
from .diagnostics import DiagnosticsDiff, toolchain_notes, unjudged_note, versions
from .diagnostics import judge as judge_diagnostics
from .metrics import metric_info
from .rules import Change, Mode, Rule, RuleSet


class State(Enum):
    COMPARED = "compared"
    NEW = "new"  # produced now, no baseline entry
    MISSING = "missing"  # a baseline entry the run no longer produces


@dataclass(frozen=True)
class MetricDiff:
    metric: str
    baseline: int
    current: int
    rule: Rule
    change: Change  # as the rule judges it: a growth within the tolerance is SAME, within its step CHANGED
    fails: bool
    cliff: Cliff | None = None  # a cliff rule's growth: the step it crossed, or the headroom it keeps

    @property
    def delta(self) -> int:
        return self.current - self.baseline

    @property
    def worse(self) -> bool:
        """Whether the value itself moved the bad way, whatever the rule allows."""
        return (self.delta < 0) if metric_info(self.metric).higher_is_better else (self.delta > 0)


@dataclass(frozen=True)
class StatusDiff:
    """The compile status changed (or both failed): ok -> error is worse, error -> ok better."""

    baseline: str
    current: str
    change: Change
    fails: bool


@dataclass(frozen=True)
class EntryDiff:
    key: str
    state: State
    baseline: Entry | None
    current: Entry | None
    metrics: tuple[MetricDiff, ...]  # every metric both sides have, unchanged ones included
    status: StatusDiff | None
    change: Change
    fails: bool
    accepted: bool = False  # a missing entry the configuration accepts (--allow-missing)
    diagnostics: DiagnosticsDiff | None = None  # compiler warning codes gained or lost (gate.diagnostics)

    @property
    def entry(self) -> Entry:
        """The side that exists (the current one when both do)."""
        return self.current or self.baseline  # type: ignore[return-value]

    @property
    def changed_metrics(self) -> tuple[MetricDiff, ...]:
        return tuple(m for m in self.metrics if m.delta != 0)

    @property
    def dropped_by(self) -> tuple[MetricDiff, ...]:
        """When the occupancy dropped: the counts whose own occupancy limit is now below what the kernel
        had (the limiters that dropped it: LDS 65536 -> 133088 B), from the occupancy model's limits."""
        occ = next((m for m in self.metrics if m.metric == "occupancy"), None)
        if occ is None or occ.delta >= 0 or self.current is None or not self.current.occupancy:
            return ()
        limits = self.current.occupancy.get("limits") or {}
        steps = {metric_info(m.metric).step: m for m in self.metrics if metric_info(m.metric).step}
        return tuple(steps[key] for key, limit in limits.items() if key in steps and limit < occ.baseline
                     and steps[key].delta != 0)

    @property
    def config_changed(self) -> bool:
        """The slot compiles another config than the baseline's (its deltas are against the old one)."""
        return self.baseline is not None and self.current is not None and \
            self.baseline.config_key != self.current.config_key


# The order of the report: regressions first, then what cannot be compared, changes, then improvements.
_ORDER = {Change.WORSE: 0, Change.NOT_COMPARABLE: 1, Change.CHANGED: 2, Change.BETTER: 3, Change.SAME: 4}


def _entry_change(metrics: Sequence[MetricDiff], status: StatusDiff | None,
                  diagnostics: DiagnosticsDiff | None = None) -> Change:
    """Worse when anything failed its rule; changed when a count grew within its occupancy step; better
    only when something gated improved and no gated metric got worse at all (a growth within its tolerance
    beside an improvement elsewhere is not "better")."""
    changes = [m.change for m in metrics] + ([status.change] if status else []) + \
        ([diagnostics.change] if diagnostics else [])
    if Change.WORSE in changes:
        return Change.WORSE
    if Change.NOT_COMPARABLE in changes:
        return Change.NOT_COMPARABLE
    if Change.CHANGED in changes:
        return Change.CHANGED
    gated = [m for m in metrics if m.rule.gated]
    if any(m.worse for m in gated):
        return Change.SAME
    if (status and status.change is Change.BETTER) or any(m.change is Change.BETTER for m in gated) or \
            (diagnostics and diagnostics.change is Change.BETTER and diagnostics.rule.gated):
        return Change.BETTER
    return Change.SAME


def _status_diff(base: Entry, cur: Entry, fail_on_change: bool) -> StatusDiff | None:
    if base.status == cur.status:
        return None
    if base.status == "ok":  # a kernel that compiled and now does not (or no longer fits the arch)
        return StatusDiff(base.status, cur.status, Change.WORSE, True)
    change = Change.BETTER if cur.status == "ok" else Change.NOT_COMPARABLE
    return StatusDiff(base.status, cur.status, change, fail_on_change)


def diff_entry(base: Entry, cur: Entry, rules: RuleSet, fail_on_change: bool = False) -> EntryDiff:
    bm, cm = base.metrics, cur.metrics
    metrics = []
    for name in (n for n in bm if n in cm):
        rule = rules.rule_for(cur.variant, name)
        change, fails = rule.judge(bm[name], cm[name])
        cliff = None
        if rule.mode is Mode.CLIFF and change is Change.CHANGED:
            cliff = judge_cliff(base, cur, name)
            if cliff is None:  # the model cannot place the growth against a step: fail closed
                cliff = Cliff("the occupancy model cannot place this growth against a step", None, "")
            if cliff.crossed:
                change, fails = Change.WORSE, True
        fails = fails or (fail_on_change and change is not Change.SAME)
        metrics.append(MetricDiff(name, bm[name], cm[name], rule, change, fails, cliff))
    status = _status_diff(base, cur, fail_on_change)
    said = judge_diagnostics(base.diagnostics, cur.diagnostics, rules.rule_for(cur.variant, DIAGNOSTICS), fail_on_change)
    config_changed = base.config_key != cur.config_key
    fails = any(m.fails for m in metrics) or bool(status and status.fails) or (fail_on_change and config_changed) \
        or bool(said and said.fails)
    return EntryDiff(cur.key, State.COMPARED, base, cur, tuple(metrics), status,
                     _entry_change(metrics, status, said), fails, diagnostics=said)


@dataclass(frozen=True)
class GateResult:
    """Every entry's verdict, regressions first. Whether the gate passed is ``failures``; the exit code is
    the CLI's."""

    entries: tuple[EntryDiff, ...]
    baseline_triton: str
    current_triton: str
    fail_on_change: bool = False
    notes: tuple[str, ...] = ()

    @property
    def failures(self) -> tuple[EntryDiff, ...]:
        return tuple(e for e in self.entries if e.fails)

    @property
    def passed(self) -> bool:
        return not self.failures

    def count(self, change: Change) -> int:
        return sum(e.change is change for e in self.entries)

    def of_state(self, state: State) -> tuple[EntryDiff, ...]:
        return tuple(e for e in self.entries if e.state is state)

    @property
    def config_changes(self) -> tuple[EntryDiff, ...]:
        return tuple(e for e in self.entries if e.config_changed)


def judge(baseline: Baseline, current: Sequence[Entry], rules: RuleSet = RuleSet(), *,
            in_scope: Callable[[Entry], bool] | None = None, accept_missing: Callable[[Entry], bool] | None = None,
            fail_on_change: bool = False, current_triton: str | None = None,
            notes: Sequence[str] = ()) -> GateResult:
    """Judge every current entry against the baseline entry of its slot.

    A current entry without one is NEW (not a failure unless ``fail_on_change``). A baseline entry the
    run does not produce is MISSING and fails, unless ``accept_missing`` accepts it, or ``in_scope`` says
    it belongs to a part of the set this run did not select (then it is not judged at all).
    NotComparableError when the run produced nothing, or nothing of the baseline is in its scope.
    """
    if not current:
        raise NotComparableError("the run produced no entry to compare (an empty set or capture): a gate that "
                                 "compares nothing passes nothing")
    scoped = {k: b for k, b in baseline.entries.items() if in_scope is None or in_scope(b)}
    if not scoped:
        raise NotComparableError(f"none of the baseline's {len(baseline.entries)} entries is in the part of the set "
                                 "this run selected: nothing to compare; save that part with `vgprscope baseline "
                                 "save` (and the same --variant / --arch)")
    diffs = []
    seen = set()
    for cur in current:
        seen.add(cur.key)
        base = baseline.entries.get(cur.key)
        if base is None:
            diffs.append(EntryDiff(cur.key, State.NEW, None, cur, (), None, Change.NOT_COMPARABLE, fail_on_change))
        else:
            diffs.append(diff_entry(base, cur, rules, fail_on_change))
    for key, base in scoped.items():
        if key not in seen:
            accepted = accept_missing is not None and accept_missing(base)
            diffs.append(EntryDiff(key, State.MISSING, base, None, (), None, Change.NOT_COMPARABLE,
                                   fail_on_change or not accepted, accepted))
    ordered = sorted(diffs, key=lambda d: (not d.fails, _ORDER[d.change]))  # stable: set order within a group
    compilers = toolchain_notes(
        (versions(getattr(d.baseline.usage, "ptxas_version", None), d.baseline.llvm_version),
         versions(getattr(d.current.usage, "ptxas_version", None), d.current.llvm_version))
        for d in diffs if d.baseline is not None and d.current is not None)
    compilers += unjudged_note((d.baseline.diagnostics, d.current.diagnostics) for d in diffs
                               if d.baseline is not None and d.current is not None)
    snapshot = snapshot_note((c.note for c in current), len(current))  # said once, not on each row
    return GateResult(tuple(ordered), baseline.triton_version, current_triton or baseline.triton_version,
                      fail_on_change, (*notes, *compilers, *([snapshot] if snapshot else [])))


__all__ = ["Change", "Cliff", "EntryDiff", "GateResult", "MetricDiff", "Mode", "State", "StatusDiff", "diff_entry", "judge"]
