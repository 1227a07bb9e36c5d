"""The gate's results as text: terminal table, markdown (PR comment / step summary), JSON, GitHub
annotations, and github-action-benchmark's ``customSmallerIsBetter`` list. Formatting only: the verdicts
come from ``baseline.compare``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .baseline import Change, Entry, EntryDiff, GateResult, MetricDiff, Mode, State, metric_info
from .records import SCHEMA_VERSION
from .report.formats import md_table, render_table

LEGEND = ("change: `+` worse (fails), `-` better, `=` same or within the rule, `x` not comparable "
          "(new, missing, or both sides failed to compile)")

HEADERS = ("change", "variant", "kernel", "arch", "config", "VGPRs / regs", "occupancy", "details")


def _before_after(d: EntryDiff, value) -> str:
    b = value(d.baseline) if d.baseline else None
    c = value(d.current) if d.current else None
    if b == c:
        return "-" if b is None else str(b)
    return f"{'-' if b is None else b} -> {'-' if c is None else c}"


def _regs(e: Entry) -> Any:
    return next((e.metrics[m] for m in ("vgpr_total", "regs") if m in e.metrics), None)


def _occ(e: Entry) -> Any:
    return f"{e.occupancy['value']} {e.occupancy_unit}" if e.occupancy else None


def metric_text(m: MetricDiff) -> str:
    """``vgpr_total 108 -> 112 (+4, allowed +0)``: the rule is shown where it decided something."""
    tol = m.rule.tolerance()
    why = {
        Change.WORSE: f", allowed {tol}" if m.rule.mode is Mode.LIMIT else f", {tol}",
        Change.BETTER: ", exact" if m.rule.mode is Mode.EXACT else "",
        Change.SAME: f", within {tol}" if m.rule.mode is Mode.LIMIT else ", not gated",
    }[m.change]
    return f"{m.metric} {m.baseline} -> {m.current} ({m.delta:+d}{why})"


def details(d: EntryDiff) -> str:
    """What changed in one entry, worst first."""
    if d.state is State.NEW:
        return "new: no baseline entry" + ("" if d.current.status == "ok" else f"; status: {d.current.status}")
    if d.state is State.MISSING:
        return "missing: in the baseline, not compiled now"
    parts = []
    if d.status:
        parts.append(f"status {d.status.baseline!r} -> {d.status.current!r}")
    order = {Change.WORSE: 0, Change.BETTER: 1, Change.SAME: 2, Change.NOT_COMPARABLE: 3}
    parts += [metric_text(m) for m in sorted(d.changed_metrics, key=lambda m: order[m.change])]
    if not parts and d.current.status != "ok":
        parts.append(f"still fails: {d.current.status}")
    return "; ".join(parts)


def cells(d: EntryDiff) -> list[str]:
    e = d.entry
    return [d.change.value, e.variant, e.kernel, e.arch, e.config.short(), _before_after(d, _regs),
            _before_after(d, _occ), details(d)]


def summary(result: GateResult) -> str:
    n_fail = len(result.failures)
    counts = [f"{result.count(Change.WORSE)} worse", f"{result.count(Change.BETTER)} better",
              f"{result.count(Change.SAME)} same", f"{len(result.of_state(State.NEW))} new",
              f"{len(result.of_state(State.MISSING))} missing"]
    other_x = result.count(Change.NOT_COMPARABLE) - len(result.of_state(State.NEW)) - len(result.of_state(State.MISSING))
    if other_x:
        counts.append(f"{other_x} not comparable")
    verdict = f"FAILED: {n_fail} of {len(result.entries)} entries" if n_fail else "passed"
    if n_fail and result.fail_on_change:
        verdict += " (--fail-on-change)"
    return f"vgprscope check {verdict}: " + ", ".join(counts)


def versions_line(result: GateResult, baseline_path: str) -> str:
    same = result.baseline_triton == result.current_triton
    now = "same Triton" if same else f"Triton {result.current_triton} now"
    return f"baseline {baseline_path} (Triton {result.baseline_triton}), {now}"


def to_table(result: GateResult, machine_line: str, baseline_path: str) -> str:
    from rich.table import Table

    table = Table(title="vgprscope check", header_style="bold")
    for h in HEADERS:
        table.add_column(h, overflow="fold")
    styles = {Change.WORSE: "red", Change.BETTER: "green", Change.NOT_COMPARABLE: "yellow", Change.SAME: None}
    for d in result.entries:
        table.add_row(*cells(d), style="red" if d.fails else styles[d.change])
    lines = [machine_line, versions_line(result, baseline_path), *result.notes]
    return "\n".join(lines) + "\n" + render_table(table) + summary(result) + "\n" + LEGEND.replace("`", "") + "\n"


def to_markdown(result: GateResult, machine_line: str, baseline_path: str) -> str:
    """A PR comment: the verdict, the changed entries, the unchanged ones folded away."""
    changed = [cells(d) for d in result.entries if d.change is not Change.SAME or d.fails or d.changed_metrics]
    same = [cells(d) for d in result.entries if not (d.change is not Change.SAME or d.fails or d.changed_metrics)]
    out = [f"## {summary(result)}", "", f"Machine: {machine_line}  ", f"{versions_line(result, baseline_path)}"]
    out += [f"  \n{n}" for n in result.notes]
    out.append("")
    out.append(md_table(HEADERS, changed) if changed else "No entry changed.\n")
    if same:
        out += [f"<details><summary>{len(same)} unchanged</summary>", "", md_table(HEADERS, same), "</details>", ""]
    out.append(LEGEND)
    return "\n".join(out) + "\n"


def _metric_json(m: MetricDiff) -> dict[str, Any]:
    return {"metric": m.metric, "baseline": m.baseline, "current": m.current, "delta": m.delta,
            "rule": m.rule.tolerance(), "change": m.change.value, "fails": m.fails}


def to_json(result: GateResult, machine: dict[str, Any], baseline_path: str) -> str:
    rows = []
    for d in result.entries:
        e = d.entry
        rows.append({
            "key": d.key, "variant": e.variant, "kernel": e.kernel, "arch": e.arch, "config_key": e.config_key,
            "config": e.config.as_dict(), "state": d.state.value, "change": d.change.value, "fails": d.fails,
            "status": {"baseline": d.baseline.status if d.baseline else None,
                       "current": d.current.status if d.current else None},
            "metrics": [_metric_json(m) for m in d.metrics],
            "baseline": d.baseline.metrics if d.baseline and d.state is State.MISSING else None,
            "current": d.current.metrics if d.current and d.state is State.NEW else None,
        })
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": "check", "machine": machine,
           "baseline": baseline_path, "baseline_triton_version": result.baseline_triton,
           "triton_version": result.current_triton, "exit_code": result.exit_code, "summary": summary(result),
           "counts": {c.name.lower(): result.count(c) for c in Change} | {
               "new": len(result.of_state(State.NEW)), "missing": len(result.of_state(State.MISSING)),
               "failed": len(result.failures)},
           "notes": list(result.notes), "rows": rows}
    return json.dumps(doc, indent=2) + "\n"


def benchmark_name(e: Entry, metric: str) -> str:
    """Stable across runs (github-action-benchmark draws one chart per name)."""
    return f"{e.variant}/{e.kernel} {e.arch} [{e.config.short()}] {metric}"


def to_benchmark_json(entries: Sequence[Entry]) -> str:
    """github-action-benchmark's ``customSmallerIsBetter``: one item per entry and metric. Occupancy is
    higher-is-better, so it rides along in ``extra`` instead of being a series of its own."""
    items = []
    for e in entries:
        occ = f"occupancy {e.occupancy['value']} {e.occupancy_unit}; " if e.occupancy else ""
        extra = f"{occ}config {e.config_key}; status {e.status}"
        for name, value in e.metrics.items():
            metric = metric_info(name)
            if metric.higher_is_better:
                continue
            items.append({"name": benchmark_name(e, name), "unit": metric.unit, "value": value, "extra": extra})
    return json.dumps(items, indent=2) + "\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, title: str, message: str, file: str | None = None) -> str:
    props = [f"title={_escape_property(title)}"] + ([f"file={_escape_property(file)}"] if file else [])
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def annotations(result: GateResult, files: dict[str, str] | None = None) -> list[str]:
    """GitHub workflow commands: an error per failing entry (on its kernel file when it is in the
    repository), a warning per new or missing entry that does not fail."""
    files = files or {}
    out = []
    for d in result.entries:
        e = d.entry
        where = f"{e.variant}/{e.kernel} on {e.arch} [{e.config.short()}]"
        if d.fails:
            out.append(annotation("error", f"vgprscope: register regression in {e.variant}",
                                  f"{where}: {details(d)}", files.get(e.variant)))
        elif d.state is not State.COMPARED:
            out.append(annotation("warning", f"vgprscope: {d.state.value} baseline entry", f"{where}: {details(d)}",
                                  files.get(e.variant)))
    return out
