"""The CI register gate's core: the committed baseline (save / load), the rules, and the diff.

A baseline holds one entry per variant x kernel x arch x full-config hash (``Record.key``), with every
resource field the compiler reported and the occupancy. ``compare`` judges each metric of each entry with
a ``Rule`` and returns typed results; formatting lives in ``gate_report`` and exit codes in the CLI.

Rules are absolute per-metric tolerances, not percentages of a noisy time: most of these counts have a
baseline of 0 (spills, scratch), where any percentage allows nothing or everything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from .errors import NotComparableError, UnknownNameError, UsageError
from .fsutil import atomic_write, read_versioned_json
from .records import Config, Record, ResourceUsage, config_from_dict, usage_from_dict, usage_to_dict

SCHEMA = "vgprscope-baseline"
SCHEMA_VERSION = 1
DEFAULT_BASELINE = "vgprscope-baseline.json"


# ---- metrics ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    """One number the gate watches. ``gated`` False: shown when it changes, never a failure by default
    (``arch_vgpr`` and ``agpr`` are the parts of ``vgpr_total``, which is what occupancy sees)."""

    name: str
    unit: str
    what: str
    higher_is_better: bool = False
    gated: bool = True


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("vgpr_total", "VGPRs", "AMD: unified VGPR+AGPR count per wave (what occupancy sees)"),
    Metric("arch_vgpr", "VGPRs", "AMD: architectural VGPRs (part of vgpr_total)", gated=False),
    Metric("agpr", "AGPRs", "AMD: accumulation registers (part of vgpr_total)", gated=False),
    Metric("sgpr", "SGPRs", "AMD: scalar registers, VCC / flat-scratch / XNACK included"),
    Metric("vgpr_spill", "VGPRs", "AMD: VGPRs spilled to scratch"),
    Metric("sgpr_spill", "SGPRs", "AMD: SGPRs spilled to VGPR lanes"),
    Metric("scratch_bytes", "bytes/lane", "AMD: scratch memory per lane"),
    Metric("lds_bytes", "bytes", "AMD: LDS, static and Triton's dynamic"),
    Metric("spill_insts", "instructions", "AMD: spill stores and reloads"),
    Metric("regs", "registers/thread", "NVIDIA: registers per thread"),
    Metric("stack_bytes", "bytes/thread", "NVIDIA: stack frame per thread"),
    Metric("spill_store_bytes", "bytes", "NVIDIA: spill stores"),
    Metric("spill_load_bytes", "bytes", "NVIDIA: spill loads"),
    Metric("shared_bytes", "bytes", "NVIDIA: shared memory, static and Triton's dynamic"),
    Metric("occupancy", "waves/SIMD | blocks/SM", "theoretical occupancy (may not drop)", higher_is_better=True),
)}


def get_metric(name: str) -> Metric:
    """A metric a user named (a rule): unknown names are an error listing the valid ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise UnknownNameError("metric", name, list(METRICS)) from None


def metric_info(name: str) -> Metric:
    """A metric a usage reported: one ``metrics()`` gained before this table knew it is gated as a count
    that may not grow (the gate fails closed rather than ignore a number)."""
    return METRICS.get(name) or Metric(name, "count", "reported by the parser")


def entry_metrics(usage: ResourceUsage | None, occupancy: Mapping[str, Any] | None) -> dict[str, int]:
    """The gate's numbers of one kernel: the usage's own ``metrics()`` and the occupancy value."""
    out = dict(usage.metrics()) if usage is not None else {}
    if occupancy is not None:
        out["occupancy"] = int(occupancy["value"])
    return out


# ---- rules ------------------------------------------------------------------------------------------

class Mode(Enum):
    LIMIT = "limit"  # may get worse by at most the tolerance
    OFF = "off"  # shown, never a failure
    EXACT = "exact"  # may not change at all: improvements fail too (the baseline must be re-saved)


class Change(str, Enum):
    """asv's change column."""

    WORSE = "+"
    BETTER = "-"
    SAME = "="  # unchanged, or changed within the rule
    NOT_COMPARABLE = "x"


_KEYWORDS = {"off": Mode.OFF, "exact": Mode.EXACT}
_TOLERANCE = re.compile(r"(?P<sign>[+-]?)(?P<amount>\d+(?:\.\d+)?)(?P<percent>%?)")
RULE_SYNTAX = "[VARIANT:]METRIC:TOLERANCE, TOLERANCE one of +N, +N%, -N (higher-is-better metrics), off, exact"


@dataclass(frozen=True)
class Rule:
    """How much one metric may get worse, for every variant or for one.

    ``amount`` is in the metric's own unit, or a percent of the baseline value when ``percent``.
    """

    metric: str
    mode: Mode = Mode.LIMIT
    amount: float = 0
    percent: bool = False
    variant: str | None = None

    def allowed(self, base: int) -> float:
        """How much worse than ``base`` the metric may get."""
        return base * self.amount / 100 if self.percent else self.amount

    def tolerance(self) -> str:
        """The tolerance as written: ``+4``, ``+5%``, ``-1``, ``off``, ``exact`` (parses back to this rule)."""
        if self.mode is not Mode.LIMIT:
            return self.mode.value
        sign = "-" if metric_info(self.metric).higher_is_better else "+"
        amount = int(self.amount) if float(self.amount).is_integer() else self.amount
        return f"{sign}{amount}{'%' if self.percent else ''}"

    def text(self) -> str:
        head = f"{self.variant}:" if self.variant else ""
        return f"{head}{self.metric}:{self.tolerance()}"

    def judge(self, base: int, cur: int) -> tuple[Change, bool]:
        """(change, fails) for a metric that went from ``base`` to ``cur``."""
        worse = (base - cur) if metric_info(self.metric).higher_is_better else (cur - base)
        if worse == 0:
            return Change.SAME, False
        if worse < 0:
            return Change.BETTER, self.mode is Mode.EXACT
        if self.mode is Mode.OFF:
            return Change.SAME, False
        if self.mode is Mode.EXACT or worse > self.allowed(base):
            return Change.WORSE, True
        return Change.SAME, False  # worse, but within the tolerance: no significant change (asv's blank)


def default_rule(metric: str) -> Rule:
    """Nothing may get worse, except what is shown only (``Metric.gated`` False)."""
    return Rule(metric, Mode.LIMIT if metric_info(metric).gated else Mode.OFF)


def parse_tolerance(metric: str, spec: str | int, variant: str | None = None) -> Rule:
    """``+4`` / ``4`` / ``+5%`` / ``-1`` / ``off`` / ``exact`` for ``metric`` -> Rule.

    A sign must point the way the metric gets worse (``+`` for counts, ``-`` for occupancy), so that
    ``occupancy:+1`` is an error rather than a rule that silently means something else.
    """
    m = get_metric(metric)
    if isinstance(spec, bool) or not isinstance(spec, (str, int)):
        raise UsageError(f"tolerance for {metric} must be a string like \"+4\" or a number; got {spec!r}")
    text = str(spec).strip().lower()
    if text in _KEYWORDS:
        return Rule(metric, _KEYWORDS[text], variant=variant)
    match = _TOLERANCE.fullmatch(text)
    if match is None:
        raise UsageError(f"tolerance {str(spec)!r} for {metric} is not allowed; allowed: +N, +N%, -N, off, exact")
    worse_sign = "-" if m.higher_is_better else "+"
    if match["sign"] and match["sign"] != worse_sign:
        direction = "higher" if m.higher_is_better else "smaller"
        verb = "drop" if m.higher_is_better else "grow"
        raise UsageError(f"{metric} is {direction}-is-better: write its tolerance as {worse_sign}N "
                         f"(it may {verb} by N); got {spec}")
    amount = float(match["amount"])
    return Rule(metric, Mode.LIMIT, int(amount) if amount.is_integer() else amount, bool(match["percent"]), variant)


def parse_rule(text: str) -> Rule:
    """``vgpr_total:+4``, ``split-k:vgpr_total:+8``, ``occupancy:-1``, ``arch_vgpr:exact`` -> Rule."""
    parts = [p.strip() for p in text.split(":")]
    if len(parts) not in (2, 3) or not all(parts):
        raise UsageError(f"rule {text!r} is not allowed; allowed: {RULE_SYNTAX} (e.g. vgpr_total:+4, "
                         "split-k:vgpr_total:+8)")
    variant = parts[0] if len(parts) == 3 else None
    return parse_tolerance(parts[-2], parts[-1], variant)


@dataclass(frozen=True)
class RuleSet:
    """Rules in the order given (pyproject first, then ``--rule``): a variant's own rule beats a
    metric-wide one, which beats the default; among equals the last one given wins."""

    rules: tuple[Rule, ...] = ()

    def rule_for(self, variant: str, metric: str) -> Rule:
        own = [r for r in self.rules if r.metric == metric and r.variant == variant]
        wide = [r for r in self.rules if r.metric == metric and r.variant is None]
        return (own or wide or [default_rule(metric)])[-1]

    def check_variants(self, known: Iterable[str]) -> None:
        """A rule naming a variant that does not exist would silently do nothing: refuse it."""
        known = list(dict.fromkeys(known))
        for r in self.rules:
            if r.variant is not None and r.variant not in known:
                raise UsageError(f"rule {r.text()!r} names unknown variant {r.variant!r}; valid: {', '.join(known)}")


# ---- baseline entries and files ---------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One baseline row: a compiled kernel's resources, keyed like ``Record.key``."""

    variant: str
    kernel: str
    arch: str
    config: Config  # a bundled variant's KernelConfig or a captured kernel's LaunchConfig
    config_key: str
    status: str
    usage: ResourceUsage | None
    occupancy: Mapping[str, Any] | None = field(default=None, compare=False)
    source_hash: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        return f"{self.variant}/{self.kernel}/{self.arch}/{self.config_key}"

    @property
    def metrics(self) -> dict[str, int]:
        return entry_metrics(self.usage, self.occupancy)

    @property
    def occupancy_unit(self) -> str:
        return self.occupancy["unit"] if self.occupancy else ""

    @classmethod
    def from_record(cls, rec: Record) -> Entry:
        return cls(variant=rec.variant, kernel=rec.kernel, arch=rec.arch, config=rec.config,
                   config_key=rec.config.key(), status=rec.status, usage=rec.usage,
                   occupancy=rec.occupancy.as_dict() if rec.occupancy else None, source_hash=rec.source_hash)

    def as_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "kernel": self.kernel, "arch": self.arch, "config_key": self.config_key,
                "config": self.config.as_dict(), "status": self.status, "source_hash": self.source_hash,
                "usage": usage_to_dict(self.usage), "occupancy": dict(self.occupancy) if self.occupancy else None}

    @classmethod
    def from_json(cls, key: str, d: Any) -> Entry:
        """One entry of a baseline file; ValueError / KeyError / TypeError on anything malformed."""
        if not isinstance(d, dict):
            raise TypeError("is not an object")
        entry = cls(variant=d["variant"], kernel=d["kernel"], arch=d["arch"],
                    config=config_from_dict(d["config"]), config_key=d["config_key"], status=d["status"],
                    usage=usage_from_dict(d["usage"]), occupancy=d["occupancy"], source_hash=d.get("source_hash", ""))
        if entry.key != key:
            raise ValueError(f"is stored under a key that does not match its fields ({entry.key})")
        if not all(isinstance(v, int) for v in entry.metrics.values()):  # also reads occupancy["value"]
            raise TypeError("has a metric that is not an integer")
        return entry


@dataclass(frozen=True)
class Baseline:
    triton_version: str
    entries: Mapping[str, Entry]  # by key
    set: Mapping[str, Any] = field(default_factory=dict)  # the configured set it was saved from (for readers)
    vgprscope_version: str = ""

    @classmethod
    def of(cls, entries: Iterable[Entry], triton_version: str, set_: Mapping[str, Any] | None = None) -> Baseline:
        from . import __version__

        return cls(triton_version, {e.key: e for e in sorted(entries, key=lambda e: e.key)}, dict(set_ or {}),
                   __version__)

    def merged(self, newer: Baseline, replaces: Callable[[Entry], bool]) -> Baseline:
        """``newer``'s entries plus this one's that ``replaces`` leaves alone (a save of part of the set)."""
        kept = [e for e in self.entries.values() if not replaces(e)]
        return Baseline.of([*kept, *newer.entries.values()], newer.triton_version, newer.set)

    def to_json(self) -> str:
        # No date and no git sha: re-saving an unchanged set gives the same bytes, so git shows no diff.
        doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "triton_version": self.triton_version,
               "vgprscope_version": self.vgprscope_version, "set": dict(self.set),
               "entries": {k: e.as_json() for k, e in self.entries.items()}}
        return _SCALAR_LIST.sub(lambda m: "[" + ", ".join(x.strip() for x in m[1].split(",")) + "]",
                                json.dumps(doc, indent=1)) + "\n"


# A list of numbers or simple strings on one line: shapes and limiters are read at a glance, not one
# element per line (strings with commas, brackets or braces are never inside such a list here).
_SCALAR_LIST = re.compile(r"\[\s*\n([^\[\]{}]*?)\n\s*\]")


def save_baseline(path: Path, baseline: Baseline) -> None:
    """Written whole or not at all (``atomic_write``)."""
    atomic_write(path, baseline.to_json())


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file; NotComparableError (one line) when it is missing, unreadable or corrupt."""
    doc = read_versioned_json(path, what="baseline", schema=SCHEMA, version=SCHEMA_VERSION,
                              missing="create it with `vgprscope baseline save`",
                              stale="re-create it with `vgprscope baseline save`", error=NotComparableError)
    entries = doc.get("entries")
    triton = doc.get("triton_version")
    if not isinstance(entries, dict) or not isinstance(triton, str):
        raise NotComparableError(f"baseline {path} is corrupt: it lacks \"entries\" or \"triton_version\"")
    parsed = {}
    for key, raw in entries.items():
        try:
            parsed[key] = Entry.from_json(key, raw)
        except KeyError as exc:
            raise NotComparableError(f"baseline {path} is corrupt: entry {key!r} lacks {exc}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise NotComparableError(f"baseline {path} is corrupt: entry {key!r} {exc}") from None
    return Baseline(triton, parsed, doc.get("set") or {}, str(doc.get("vgprscope_version", "")))


def check_triton_version(baseline: Baseline, installed: str, allow_change: bool) -> str | None:
    """NotComparableError when the versions differ and that is not allowed; else a note when they differ."""
    if baseline.triton_version == installed:
        return None
    if not allow_change:
        raise NotComparableError(f"the baseline was compiled with Triton {baseline.triton_version}, the installed "
                                 f"Triton is {installed}; re-save it with `vgprscope baseline save`, or pass "
                                 "--allow-version-change to compare across versions")
    return f"Triton changed: baseline {baseline.triton_version}, now {installed} (--allow-version-change)"


# ---- the diff ---------------------------------------------------------------------------------------

class State(Enum):
    COMPARED = "compared"
    NEW = "new"  # compiled now, no baseline entry
    MISSING = "missing"  # a baseline entry the set no longer compiles


@dataclass(frozen=True)
class MetricDiff:
    metric: str
    baseline: int
    current: int
    rule: Rule
    change: Change
    fails: bool

    @property
    def delta(self) -> int:
        return self.current - self.baseline


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

    @property
    def entry(self) -> Entry:
        """The side that exists (the current one when both do)."""
        return self.current or self.baseline  # type: ignore[return-value]

    @property
    def changed_metrics(self) -> tuple[MetricDiff, ...]:
        return tuple(m for m in self.metrics if m.delta != 0)


# The order of the report: regressions first, then what cannot be compared, then improvements.
_ORDER = {Change.WORSE: 0, Change.NOT_COMPARABLE: 1, Change.BETTER: 2, Change.SAME: 3}


def _entry_change(metrics: Sequence[MetricDiff], status: StatusDiff | None) -> Change:
    changes = [m.change for m in metrics] + ([status.change] if status else [])
    return min(changes, key=_ORDER.__getitem__, default=Change.SAME)


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
        fails = fails or (fail_on_change and change is not Change.SAME)
        metrics.append(MetricDiff(name, bm[name], cm[name], rule, change, fails))
    status = _status_diff(base, cur, fail_on_change)
    fails = any(m.fails for m in metrics) or bool(status and status.fails)
    return EntryDiff(cur.key, State.COMPARED, base, cur, tuple(metrics), status, _entry_change(metrics, status), fails)


@dataclass(frozen=True)
class GateResult:
    entries: tuple[EntryDiff, ...]  # regressions first
    baseline_triton: str
    current_triton: str
    fail_on_change: bool = False
    notes: tuple[str, ...] = ()

    @property
    def failures(self) -> tuple[EntryDiff, ...]:
        return tuple(e for e in self.entries if e.fails)

    @property
    def exit_code(self) -> int:
        """0: nothing failed; 1: at least one regression (or any change, with ``fail_on_change``)."""
        return 1 if self.failures else 0

    def count(self, change: Change) -> int:
        return sum(e.change is change for e in self.entries)

    def of_state(self, state: State) -> tuple[EntryDiff, ...]:
        return tuple(e for e in self.entries if e.state is state)


def compare(baseline: Baseline, current: Sequence[Entry], rules: RuleSet = RuleSet(), *,
            in_scope: Callable[[Entry], bool] | None = None, fail_on_change: bool = False,
            current_triton: str | None = None, notes: Sequence[str] = ()) -> GateResult:
    """Judge every current entry against its baseline entry.

    A current entry without a baseline entry is NEW; a baseline entry that nothing compiled now is
    MISSING, unless ``in_scope`` says it belongs to a part of the set this run did not select. Neither is
    a regression unless ``fail_on_change``.
    """
    diffs = []
    seen = set()
    for cur in current:
        seen.add(cur.key)
        base = baseline.entries.get(cur.key)
        if base is None:
            diffs.append(EntryDiff(cur.key, State.NEW, None, cur, (), None, Change.NOT_COMPARABLE, fail_on_change))
        else:
            diffs.append(diff_entry(base, cur, rules, fail_on_change))
    for key, base in baseline.entries.items():
        if key not in seen and (in_scope is None or in_scope(base)):
            diffs.append(EntryDiff(key, State.MISSING, base, None, (), None, Change.NOT_COMPARABLE, fail_on_change))
    ordered = sorted(diffs, key=lambda d: (not d.fails, _ORDER[d.change]))  # stable: set order within a group
    return GateResult(tuple(ordered), baseline.triton_version, current_triton or baseline.triton_version,
                      fail_on_change, tuple(notes))
