"""The gate's verdicts (``check``, ``diff``) as SARIF 2.1.0 for code scanning (``report.sarif`` writes the log).

One result per failing metric of an entry (``vgprscope.<metric>``: ``vgprscope.vgpr_total``,
``vgprscope.core.occupancy``, ...), per entry that went missing (``vgprscope.missing``) or stopped compiling
(``vgprscope.status``), at the line of the kernel's ``def`` in its file; a growth the rules let pass is a
``warning``, a failure an ``error``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..report.sarif import RULE_TEXT, Location, log, result
from .diff import GateResult, State
from .metrics import metric_info
from .rules import Change


def metric_text(metric: str) -> str:
    m = metric_info(metric)
    verb = "drop" if m.higher_is_better else "grow"
    return RULE_TEXT.get(metric) or f"{m.what} ({m.unit}) may not {verb} past the gate's rule"


def gate_sarif(gate: GateResult, locations: Mapping[str, Location], version: str,
               exit_code: int | None = None) -> dict[str, Any]:
    """A ``gate.diff.GateResult`` (check or diff) as a SARIF log: a result per failing metric, per missing or
    broken entry, and a warning per growth the rules let pass. ``locations``: entry key -> the kernel's line
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
        for m in d.metrics:
            if m.delta == 0 or not m.worse:
                continue
            if not m.fails and m.change is Change.BETTER:
                continue
            level = "error" if m.fails else "warning"
            rid = f"vgprscope.{m.metric}"
            texts[rid] = metric_text(m.metric)
            verdict = "fails the rule" if m.fails else "within the rule"
            results.append(result(rid, level, f"{head}: {m.metric} {m.baseline} -> {m.current} "
                                   f"({m.delta:+d}), {verdict} {m.rule.text()}", where, f"{d.key}/{m.metric}",
                                   {"baseline": m.baseline, "current": m.current, "delta": m.delta}))
    invocation = {"executionSuccessful": exit_code in (0, 1)} if exit_code is not None else None
    return log(results, texts, version, invocation)
