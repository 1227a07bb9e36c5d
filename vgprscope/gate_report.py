"""The gate's results as text: terminal table, markdown (PR comment / step summary), JSON, GitHub
annotations, and github-action-benchmark's ``customSmallerIsBetter`` list. Formatting only: the verdicts
come from ``baseline.compare``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .baseline import Change, Entry, EntryDiff, GateResult, MetricDiff, Mode, State, metric_info
from .records import SCHEMA_VERSION
from .report.deltas import STYLE, Delta, Verdict
from .report.formats import Column, Footnotes, build_table, md_table, render_table

LEGEND = ("result: `worse` fails the gate, `better`, `same` (unchanged, or changed within the rule), `new` / "
          "`missing` (no entry on one side), `n/c` (both sides failed to compile); (±N): the change of the value "
          "itself against the baseline, ✓ better, ✗ worse, no mark: within the rule")

HEADERS = ("result", "variant", "kernel", "arch", "config", "VGPRs / regs", "occupancy", "details")

_REGS = ("vgpr_total", "regs")


def verdict_word(d: EntryDiff) -> str:
    """The row's result in words (asv's change column, without a sign that could read as a delta)."""
    if d.change is Change.NOT_COMPARABLE:
        return {State.NEW: "new", State.MISSING: "missing"}.get(d.state, "n/c")
    return {Change.WORSE: "worse", Change.BETTER: "better", Change.SAME: "same"}[d.change]


_VERDICT = {Change.WORSE: Verdict.WORSE, Change.BETTER: Verdict.BETTER, Change.SAME: Verdict.SAME,
            Change.NOT_COMPARABLE: Verdict.NOT_COMPARABLE}


def metric_delta(m: MetricDiff) -> Delta:
    """The shared delta of one metric: its signed change, judged by the gate's rule (report/deltas.py)."""
    return Delta(m.delta, _VERDICT[m.change])


def _metric(d: EntryDiff, names: tuple[str, ...]) -> MetricDiff | None:
    return next((m for m in d.metrics if m.metric in names), None)


def _side_value(d: EntryDiff, names: tuple[str, ...]) -> Any:
    e = d.entry
    return next((e.metrics[n] for n in names if n in e.metrics), None)


def _value_cell(d: EntryDiff, names: tuple[str, ...], plain: bool = False):
    """``274``, or ``274 -> 278 (+4 ✗)`` where it changed (a rich Text, coloured by the verdict)."""
    from rich.text import Text

    m = _metric(d, names)
    if m is None or m.delta == 0:
        v = _side_value(d, names)
        return "-" if v is None else str(v)
    delta = metric_delta(m)
    cell = Text(f"{m.baseline} -> {m.current} (")
    cell.append(delta.text(), style=delta.style)
    cell.append(")")
    return cell.plain if plain else cell


def metric_text(m: MetricDiff) -> str:
    """``vgpr_total 108 -> 112 (+4 ✗, allowed +0)``: the rule is shown where it decided something."""
    tol = m.rule.tolerance()
    why = {
        Change.WORSE: f", allowed {tol}" if m.rule.mode is Mode.LIMIT else f", {tol}",
        Change.BETTER: ", exact" if m.rule.mode is Mode.EXACT else "",
        Change.SAME: f", within {tol}" if m.rule.mode is Mode.LIMIT else ", not gated",
    }[m.change]
    return f"{m.metric} {m.baseline} -> {m.current} ({metric_delta(m).text()}{why})"


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


def short_details(d: EntryDiff, notes: Footnotes) -> str:
    """The default view's details: the other changed metrics as ``sgpr +4 ✗``, and the whole story
    (values, rules, statuses) as a footnote."""
    full = details(d)
    if not full:
        return "-"
    others = [m for m in d.changed_metrics if m.metric not in (*_REGS, "occupancy")]
    head = {State.NEW: "new", State.MISSING: "missing"}.get(d.state)
    if head is None and d.status:
        head = "status"
    words = ([head] if head else []) + [f"{m.metric} {metric_delta(m).text()}" for m in others[:2]]
    if len(others) > 2:
        words.append(f"+{len(others) - 2} more")
    return f"{', '.join(words)} {notes.ref(full)}".strip()


def cells(d: EntryDiff) -> list[str]:
    """Every field of a row, as plain text (markdown)."""
    e = d.entry
    return [verdict_word(d), e.variant, e.kernel, e.arch, e.config.short(), _value_cell(d, _REGS, plain=True),
            _value_cell(d, ("occupancy",), plain=True), details(d)]


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


def _columns(notes: Footnotes, labels: dict[str, str]) -> list[Column]:
    def result(d: EntryDiff):
        from rich.text import Text

        word = verdict_word(d) + (" ✗" if d.fails and d.change is not Change.WORSE else "")
        return Text(word, style=STYLE.get(_VERDICT[d.change]) or None)

    return [
        Column("result", result),
        Column("variant / kernel", lambda d: f"{d.entry.variant} / {d.entry.kernel}", wrap=True, default_only=True),
        Column("variant", lambda d: d.entry.variant, wide_only=True),
        Column("kernel", lambda d: d.entry.kernel, wide_only=True),
        Column("arch", lambda d: d.entry.arch),
        Column("config", lambda d: labels[d.key], wrap=True, default_only=True),
        Column("config", lambda d: d.entry.config.short(), wide_only=True),
        Column("VGPRs / regs", lambda d: _value_cell(d, _REGS), wrap=True, min_width=7),
        Column("occupancy", lambda d: _value_cell(d, ("occupancy",)), wrap=True),
        Column("details", lambda d: short_details(d, notes), wrap=True, default_only=True),
        Column("details", details, wide_only=True),
    ]


def to_table(result: GateResult, machine_line: str | Sequence[str], baseline_path: str, *, wide: bool = False,
             width: int | None = None) -> str:
    """The terminal view: one row per entry, regressions first; details as footnotes unless ``wide``.
    ``machine_line``: the machine line, or its fields (wrapped to the width)."""
    from .report.formats import output_width, wrap, wrap_fields
    from .report.records_view import common_config

    width = width or output_width()
    notes = Footnotes()
    shared, rest = common_config([d.entry.config.short() for d in result.entries])
    labels = dict(zip((d.key for d in result.entries), rest))
    title = "vgprscope check" + (f" (every config: {shared})" if shared and not wide else "")
    columns = _columns(notes, labels)
    if not wide and set(rest) <= {"-"}:
        columns = [c for c in columns if not (c.header == "config" and c.default_only)]
    table = build_table(result.entries, columns, title=title, wide=wide,
                        row_style=lambda d: "red" if d.fails else None)
    head = wrap_fields(machine_line, width) if not isinstance(machine_line, str) else wrap(machine_line, width, "  ")
    lines = [head, wrap(versions_line(result, baseline_path), width, "  "), *(wrap(n, width, "  ") for n in result.notes)]
    text = render_table(table, footnotes=notes, wide=wide, width=width)
    legend = wrap(LEGEND.replace("`", ""), width if not wide else 10**4, "  ")
    return "\n".join(lines) + "\n" + text + summary(result) + "\n" + legend + "\n"


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
            "rule": m.rule.tolerance(), "change": m.change.value, "verdict": metric_delta(m).verdict.value,
            "fails": m.fails}


def to_json(result: GateResult, machine: dict[str, Any], baseline_path: str) -> str:
    rows = []
    for d in result.entries:
        e = d.entry
        rows.append({
            "key": d.key, "variant": e.variant, "kernel": e.kernel, "arch": e.arch, "config_key": e.config_key,
            "config": e.config.as_dict(), "state": d.state.value, "change": d.change.value,
            "result": verdict_word(d), "fails": d.fails,
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
