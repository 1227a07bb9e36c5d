"""The gate's verdicts (``check``, ``diff``) as SARIF 2.1.0 for code scanning (``report.sarif`` writes the log).

One result per entry and rule that judged a metric of it worse (``vgprscope.<metric>``:
``vgprscope.vgpr_total``, ``vgprscope.occupancy``, ...; a rule over several metrics, ``registers``, one result
naming each), per entry that went missing (``vgprscope.missing``) or stopped compiling (``vgprscope.status``),
at the line of the kernel's ``def`` in its file; a failure is an ``error``, a growth the rule lets pass a
``warning``; a metric no rule gates (``arch_vgpr``) is no result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..report.sarif import RULE_TEXT, Location, kernel_location, log, result
from .diff import GateResult, MetricDiff, State
from .metrics import metric_info
from .rules import Change, Rule


def metric_text(metric: str) -> str:
    m = metric_info(metric)
    verb = "drop" if m.higher_is_better else "grow"
    return RULE_TEXT.get(metric) or f"{m.what} ({m.unit}) may not {verb} past the gate's rule"


def kernel_locations(gate: GateResult, files: Mapping[tuple[str, str], str]) -> dict[str, Location]:
    """Each entry's kernel at its ``def`` line: the one way SARIF, the HTML report's tables and the workflow
    annotations locate a kernel. ``files``: (label, kernel) -> the file defining it, as the run's sources or
    records name it; an entry whose file is unknown or gone has no location."""
    out = {}
    for d in gate.entries:
        where = kernel_location(files.get((d.entry.variant, d.entry.kernel)), d.entry.kernel)
        if where is not None:
            out[d.key] = where
    return out


def gate_sarif(gate: GateResult, locations: Mapping[str, Location], version: str,
               exit_code: int | None = None) -> dict[str, Any]:
    """A ``gate.diff.GateResult`` (check or diff) as a SARIF log: a result per entry and rule that failed, per
    missing or broken entry, and a warning per entry and rule that let a growth pass. ``locations``: entry key -> the kernel's line
    (an entry without one, e.g. a kernel whose file is gone, has no location, only its message)."""
    results: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for d in gate.entries:
        e = d.entry
        where = locations.get(d.key)
        head = f"{e.variant}/{e.kernel} on {e.arch} [{e.slot}]"
        if d.state is State.MISSING:
            if d.fails:
                texts["vgprscope.missing"] = RULE_TEXT["missing"]
                results.append(result("vgprscope.missing", "error", f"{head}: in the baseline, not produced by "
                                       "this run (renamed, no longer launched, or removed)", where, d.key))
            continue
        if d.state is State.NEW:
            continue
        if d.status is not None and d.status.fails:
            texts["vgprscope.status"] = RULE_TEXT["status"]
            results.append(result("vgprscope.status", "error", f"{head}: {d.status.baseline} -> {d.status.current}",
                                   where, d.key))
        if d.diagnostics is not None and d.diagnostics.new:  # a compiler warning the baseline did not have
            level = "error" if d.diagnostics.fails else "warning"
            texts["vgprscope.diagnostics"] = metric_text("diagnostics")
            results.append(result("vgprscope.diagnostics", level, f"{head}: {d.diagnostics.text()}", where,
                                   f"{d.key}/diagnostics", {"new": list(d.diagnostics.new)}))
        # one result per rule of the entry that judged a metric worse: an error where it fails, a warning where
        # it lets the growth pass; a metric no rule gates (arch_vgpr: ``off``) is shown by the table, not here
        by_rule: dict[Rule, list[MetricDiff]] = {}
        for m in d.metrics:
            if m.delta == 0 or not m.worse or not m.rule.gated or (not m.fails and m.change is Change.BETTER):
                continue
            by_rule.setdefault(m.rule, []).append(m)
        for rule, worse in by_rule.items():
            fails = any(m.fails for m in worse)
            rid = f"vgprscope.{worse[0].metric if len(worse) == 1 else rule.metric}"
            texts[rid] = metric_text(worse[0].metric if len(worse) == 1 else rule.metric)
            changes = "; ".join(f"{m.metric} {m.baseline} -> {m.current} ({m.delta:+d})" for m in worse)
            verdict = "fails the rule" if fails else "within the rule"
            results.append(result(rid, "error" if fails else "warning", f"{head}: {changes}, {verdict} "
                                   f"{rule.text()}", where, f"{d.key}/{rule.text()}",
                                   {m.metric: {"baseline": m.baseline, "current": m.current, "delta": m.delta}
                                    for m in worse}))
    invocation = {"executionSuccessful": exit_code in (0, 1)} if exit_code is not None else None
    return log(results, texts, version, invocation)
