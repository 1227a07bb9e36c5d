"""How much each metric may get worse: ``Rule`` (one metric, optionally one variant), ``RuleSet`` (the
rules of a run, with precedence) and the parsers of ``[VARIANT:]METRIC:TOLERANCE``.

Rules are absolute per-metric tolerances, not percentages of a noisy time: most of these counts have a
baseline of 0 (spills, scratch), where any percentage allows nothing or everything.

The default rules judge cost: a count whose every growth costs time (spills, scratch, stack, spill
instructions) may not grow at all; a count that costs time only through occupancy (registers, SGPRs, LDS /
shared memory: ``Metric.step``) gets the ``cliff`` rule: a growth that keeps the occupancy is ``changed``
and passes, one that crosses an occupancy step or the arch's maximum fails (``diff.diff_entry`` judges it,
knowing both entries). ``strict`` gives every gated count tolerance 0 instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from ..core.errors import UsageError
from .metrics import get_metric, metric_info, neutral_metrics


class Mode(Enum):
    LIMIT = "limit"  # may get worse by at most the tolerance
    OFF = "off"  # shown, never a failure
    EXACT = "exact"  # may not change at all: improvements fail too (the baseline must be re-saved)
    CLIFF = "cliff"  # may grow while the occupancy holds: fails only across an occupancy step or the arch's max


class Change(str, Enum):
    """asv's change column."""

    WORSE = "+"
    BETTER = "-"
    SAME = "="  # unchanged, or changed within the rule
    CHANGED = "~"  # grew under a cliff rule without crossing a step: shown with its headroom, passes
    NOT_COMPARABLE = "x"


_KEYWORDS = {"off": Mode.OFF, "exact": Mode.EXACT, "cliff": Mode.CLIFF}
_TOLERANCE = re.compile(r"(?P<sign>[+-]?)(?P<amount>\d+(?:\.\d+)?)(?P<percent>%?)")
RULE_SYNTAX = ("[VARIANT:]METRIC:TOLERANCE, TOLERANCE one of +N, +N%, -N (higher-is-better metrics), off, exact, "
               "cliff (registers, SGPRs, LDS / shared memory)")


@dataclass(frozen=True)
class Rule:
    """How much one metric may get worse, for every variant or for one.

    ``amount`` is in the metric's own unit, or a percent of the baseline value when ``percent``. A rule on
    a neutral metric (``registers``) judges each metric it covers.
    """

    metric: str
    mode: Mode = Mode.LIMIT
    amount: float = 0
    percent: bool = False
    variant: str | None = None

    @property
    def gated(self) -> bool:
        """Whether the rule can fail anything (``off`` only shows)."""
        return self.mode is not Mode.OFF

    def allowed(self, base: int) -> float:
        """How much worse than ``base`` the metric may get."""
        return base * self.amount / 100 if self.percent else self.amount

    def tolerance(self) -> str:
        """The tolerance as written: ``+4``, ``+5%``, ``-1``, ``off``, ``exact`` (parses back to this rule)."""
        if self.mode is not Mode.LIMIT:
            return str(self.mode.value)
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
        if self.mode is Mode.CLIFF:  # whether it crossed a step needs both entries: diff.diff_entry decides
            return Change.CHANGED, False
        if self.mode is Mode.EXACT or worse > self.allowed(base):
            return Change.WORSE, True
        return Change.SAME, False  # worse, but within the tolerance: no significant change (asv's blank)


def default_rule(metric: str, strict: bool = False) -> Rule:
    """What costs time may not get worse: a count that costs only through occupancy (``Metric.step``) may
    grow within its occupancy step (``cliff``); ``strict``: nothing gated may grow at all. What is shown
    only (``Metric.gated`` False) is never a failure."""
    m = metric_info(metric)
    if not m.gated:
        return Rule(metric, Mode.OFF)
    return Rule(metric, Mode.CLIFF if m.step and not strict else Mode.LIMIT)


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
        if _KEYWORDS[text] is Mode.CLIFF and not (m.step or m.covers):
            raise UsageError(f"tolerance cliff is for counts that cost through occupancy (registers, SGPRs, LDS, "
                             f"shared memory); {metric} costs time whenever it grows: use +N, off or exact")
        return Rule(metric, _KEYWORDS[text], variant=variant)
    match = _TOLERANCE.fullmatch(text)
    if match is None:
        raise UsageError(f"tolerance {str(spec)!r} for {metric} is not allowed; allowed: +N, +N%, -N, off, exact, "
                         "cliff")
    worse_sign = "-" if m.higher_is_better else "+"
    if match["sign"] and match["sign"] != worse_sign:
        direction = "higher" if m.higher_is_better else "smaller"
        verb = "drop" if m.higher_is_better else "grow"
        raise UsageError(f"{metric} is {direction}-is-better: write its tolerance as {worse_sign}N "
                         f"(it may {verb} by N); got {spec}")
    amount = float(match["amount"])
    return Rule(metric, Mode.LIMIT, int(amount) if amount.is_integer() else amount, bool(match["percent"]), variant)


def parse_rule(text: str) -> Rule:
    """``vgpr_total:+4``, ``split-k:vgpr_total:+8``, ``occupancy:-1``, ``registers:+4`` -> Rule."""
    parts = [p.strip() for p in text.split(":")]
    if len(parts) not in (2, 3) or not all(parts):
        raise UsageError(f"rule {text!r} is not allowed; allowed: {RULE_SYNTAX} (e.g. vgpr_total:+4, "
                         "split-k:vgpr_total:+8)")
    variant = parts[0] if len(parts) == 3 else None
    return parse_tolerance(parts[-2], parts[-1], variant)


@dataclass(frozen=True)
class RuleSet:
    """Rules in the order given (pyproject first, then ``--rule``). Precedence, most specific first: a
    variant's own rule on the metric, a variant's own rule on a neutral metric covering it
    (``split-k:registers``), a metric-wide rule, a metric-wide neutral one, the default; among equals the
    last one given wins. ``strict``: the default is tolerance 0 on every gated count (``--strict``)."""

    rules: tuple[Rule, ...] = ()
    strict: bool = False

    def rule_for(self, variant: str, metric: str) -> Rule:
        names = (metric, *neutral_metrics(metric))
        for owner in (variant, None):
            for name in names:
                found = [r for r in self.rules if r.metric == name and r.variant == owner]
                if found:
                    return found[-1]
        return default_rule(metric, self.strict)

    def check_variants(self, known: Iterable[str]) -> None:
        """A rule naming a variant that does not exist would silently do nothing: refuse it."""
        known = list(dict.fromkeys(known))
        for r in self.rules:
            if r.variant is not None and r.variant not in known:
                raise UsageError(f"rule {r.text()!r} names unknown variant {r.variant!r}; valid: {', '.join(known)}")
