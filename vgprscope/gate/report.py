"""The gate's results as text: terminal table, markdown (PR comment / step summary), JSON, GitHub
annotations, and github-action-benchmark's ``customSmallerIsBetter`` list. Formatting only: the verdicts
come from ``diff.judge``, the exit code from the CLI.

The terminal table never cuts a word: when the default view does not fit the width with whole words, it
gives way step by step (``_LEVELS``), each step moving what it drops into the row's footnote or a legend,
so every value is still printed somewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.records import SCHEMA_VERSION
from ..report.deltas import STYLE, Delta, Verdict
from ..report.formats import Column, Footnotes, alone, build_table, md_table, render_table
from ..report.sarif import Location
from .baseline import Entry
from .diff import EntryDiff, GateResult, MetricDiff, State
from .metrics import REGISTERS, metric_info
from .rules import Change, Mode

LEGEND = ("result: `worse` fails the gate, `changed` (registers, SGPRs or LDS grew within their occupancy step: "
          "passes), `better`, `same` (unchanged, or changed within the rule), `new` (no "
          "baseline entry), `missing` (a baseline entry this run did not produce: fails unless accepted with "
          "--allow-missing or allow_missing), `n/c` (both sides failed to compile), ✗ after a word: it fails; "
          "a slot is what an entry stands for (a request, an autotune config, a launch), compared whatever its "
          "config; (±N): the change of the value itself against the baseline, ✓ better, ✗ worse, no mark: "
          "within the rule")

HEADERS = ("result", "variant", "kernel", "arch", "slot", "config", "VGPRs / regs", "occupancy", "details")

_CHECK_MISSING = ("`missing` (a baseline entry this run did not produce: fails unless accepted with "
                  "--allow-missing or allow_missing)")


# under a table where an entry's spills changed (``spills 4 -> 64``): what the numbers count
SPILLS_CHANGE_LEGEND = ("spills A -> B: AMD: registers spilled (VGPRs + SGPRs, per lane); NVIDIA: bytes of spill "
                        "stores + loads per thread")


def legend_for(command: str) -> str:
    """The table's legend in the command's own terms: only ``check`` has a baseline file and --allow-missing;
    ``diff`` compares two sides of one run."""
    if command == "check":
        return LEGEND
    return LEGEND.replace(_CHECK_MISSING, "`missing` (an entry the first side produced and the second did not)"
                          ).replace("against the baseline", "against the first side"
                          ).replace("`new` (no baseline entry)", "`new` (no entry on the first side)")


def verdict_word(d: EntryDiff) -> str:
    """The row's result in words (asv's change column, without a sign that could read as a delta)."""
    if d.change is Change.NOT_COMPARABLE:
        return {State.NEW: "new", State.MISSING: "missing"}.get(d.state, "n/c")
    return {Change.WORSE: "worse", Change.BETTER: "better", Change.SAME: "same", Change.CHANGED: "changed"}[d.change]


# a growth within its occupancy step is a change within the rule: no better / worse mark on its delta
_VERDICT = {Change.WORSE: Verdict.WORSE, Change.BETTER: Verdict.BETTER, Change.SAME: Verdict.SAME,
            Change.CHANGED: Verdict.SAME, Change.NOT_COMPARABLE: Verdict.NOT_COMPARABLE}


def metric_delta(m: MetricDiff) -> Delta:
    """The shared delta of one metric: its signed change, judged by the gate's rule (report/deltas.py)."""
    return Delta(m.delta, _VERDICT[m.change])


def _metric(d: EntryDiff, names: tuple[str, ...]) -> MetricDiff | None:
    return next((m for m in d.metrics if m.metric in names), None)


def _side_value(d: EntryDiff, names: tuple[str, ...]) -> Any:
    e = d.entry
    return next((e.metrics[n] for n in names if n in e.metrics), None)


def dropped_by_text(d: EntryDiff) -> str:
    """What dropped the occupancy, in the row: ``LDS 65536 -> 133088 B`` ("" when it did not drop)."""
    parts = []
    for m in d.dropped_by:
        info = metric_info(m.metric)
        unit = " B" if info.unit == "bytes" else ""
        parts.append(f"{info.label or m.metric} {m.baseline} -> {m.current}{unit}")
    return ", ".join(parts)


def spills_change(d: EntryDiff) -> tuple[int, int] | None:
    """(before, after) of the spills (AMD: spilled values; NVIDIA: bytes of spill stores and loads) where
    they changed, else None."""
    if d.baseline is None or d.current is None or d.baseline.usage is None or d.current.usage is None:
        return None
    a, b = d.baseline.usage.spills, d.current.usage.spills
    return (a, b) if a != b else None


def _value_cell(d: EntryDiff, names: tuple[str, ...], plain: bool = False, short: bool = False) -> Any:
    """``274``, or ``274 -> 278 (+4 ✗)`` where it changed (a rich Text, coloured by the verdict);
    ``short``: ``278 (+4 ✗)`` (the baseline value is in the row's footnote). An occupancy that dropped
    names what dropped it: ``2 -> 1 (-1 ✗) by LDS 65536 -> 133088 B``."""
    from rich.text import Text

    m = _metric(d, names)
    if m is None or m.delta == 0:
        v = _side_value(d, names)
        cell = Text("-" if v is None else str(v))
    else:
        delta = metric_delta(m)
        cell = Text(f"{m.current} (" if short else f"{m.baseline} -> {m.current} (")
        cell.append(delta.text(), style=delta.style)
        cell.append(")")
        cause = dropped_by_text(d) if m.metric == "occupancy" else ""
        if cause:
            cell.append(f" by {cause}")
    return cell.plain if plain or not cell.spans else cell


def metric_text(m: MetricDiff) -> str:
    """``vgpr_total 108 -> 112 (+4 ✗, allowed +0)``: the rule is shown where it decided something;
    a cliff rule's growth says the step it crossed, or the headroom it keeps (``+4, same occupancy, 16
    VGPRs of headroom before 3 waves/SIMD``)."""
    tol = m.rule.tolerance()
    cliff = f", {m.cliff.text(metric_info(m.metric).unit)}" if m.cliff else ""
    why = {
        Change.WORSE: cliff or (f", allowed {tol}" if m.rule.mode is Mode.LIMIT else f", {tol}"),
        Change.CHANGED: cliff,
        Change.BETTER: ", exact" if m.rule.mode is Mode.EXACT else "",
        Change.SAME: f", within {tol}" if m.rule.mode is Mode.LIMIT else ", not gated",
    }[m.change]
    if m.rule.metric != m.metric and m.change is not Change.BETTER:
        why += f" by {m.rule.text()}"  # a neutral rule (registers) decided it
    return f"{m.metric} {m.baseline} -> {m.current} ({metric_delta(m).text()}{why})"


def config_text(d: EntryDiff) -> str:
    """The config the row compiled: ``A -> B`` where the slot's config changed."""
    if d.config_changed:
        return f"{d.baseline.config.short()} -> {d.current.config.short()}"  # type: ignore[union-attr]
    return d.entry.config.short()


def details(d: EntryDiff) -> str:
    """What changed in one entry, worst first."""
    if d.state is State.NEW:
        return "new: no baseline entry" + ("" if d.entry.status == "ok" else f"; status: {d.entry.status}")
    if d.state is State.MISSING:
        return "missing: in the baseline, not produced by this run" + (" (accepted)" if d.accepted else "")
    parts = []
    if d.config_changed:
        parts.append(f"config changed: {config_text(d)} (compared with the slot's old config)")
    if d.status:
        parts.append(f"status {d.status.baseline!r} -> {d.status.current!r}")
    if d.diagnostics:
        parts.append(d.diagnostics.text())
    order = {Change.WORSE: 0, Change.CHANGED: 1, Change.BETTER: 2, Change.SAME: 3, Change.NOT_COMPARABLE: 4}
    parts += [metric_text(m) for m in sorted(d.changed_metrics, key=lambda m: order[m.change])]
    if not parts and d.entry.status != "ok":
        parts.append(f"still fails: {d.entry.status}")
    return "; ".join(parts)


def short_details(d: EntryDiff, notes: Footnotes, marker_only: bool = False, prefix: str = "") -> str:
    """The default view's details: the other changed gated metrics as ``sgpr +4 ✗``, and the whole story
    (values, rules, statuses) as a footnote; ``marker_only``: the footnote's marker, after a change of the
    spills (``spills 4 -> 64``) or the registers' headroom (``16 VGPRs left``) where there is one;
    ``prefix``: what the table moved out of its columns, at the head of the footnote."""
    full = "; ".join(p for p in (prefix, details(d)) if p)
    if not full:
        return "-"
    # a register count that grew within its occupancy step: how much more fits before the next one
    regs = _metric(d, REGISTERS)
    left = ([f"{regs.cliff.headroom} {metric_info(regs.metric).unit} left"]
            if regs is not None and regs.change is Change.CHANGED and regs.cliff and regs.cliff.headroom is not None
            else [])
    said = [f"new {','.join(d.diagnostics.new)}"] if d.diagnostics and d.diagnostics.new else []
    if marker_only:  # a change of the spills, or the headroom left, stays in the row beside the marker
        change = spills_change(d)
        kept = [f"spills {change[0]} -> {change[1]}"] if change else left
        return " ".join([*said, *kept, notes.ref(full)])
    # the gated ones, failures first (what is only shown, like arch_vgpr, is in the footnote)
    others = sorted((m for m in d.changed_metrics if m.metric not in (*REGISTERS, "occupancy") and m.rule.gated),
                    key=lambda m: not m.fails)
    head = {State.NEW: "new", State.MISSING: "missing"}.get(d.state)
    if head is None and d.config_changed:
        head = "config"
    if head is None and d.status:
        head = "status"
    words = ([head] if head else []) + said + left + [f"{m.metric} {metric_delta(m).text()}" for m in others[:2]]
    if len(others) > 2:
        words.append(f"+{len(others) - 2} more")
    return f"{', '.join(words)} {notes.ref(full)}".strip()


def cells(d: EntryDiff) -> list[str]:
    """Every field of a row, as plain text (markdown)."""
    e = d.entry
    return [verdict_word(d), e.variant, e.kernel, e.arch, e.slot, config_text(d),
            _value_cell(d, REGISTERS, plain=True), _value_cell(d, ("occupancy",), plain=True), details(d)]


def summary(result: GateResult, command: str = "check") -> str:
    n_fail = len(result.failures)
    new, missing = result.of_state(State.NEW), result.of_state(State.MISSING)
    counts = [f"{result.count(Change.WORSE)} worse", f"{result.count(Change.BETTER)} better",
              f"{result.count(Change.SAME)} same", f"{len(new)} new", f"{len(missing)} missing"]
    if result.count(Change.CHANGED):  # grew within the occupancy step: passes
        counts.insert(1, f"{result.count(Change.CHANGED)} changed")
    accepted = sum(d.accepted for d in missing)
    if accepted:
        counts[-1] += f" ({accepted} accepted)"
    other_x = result.count(Change.NOT_COMPARABLE) - len(new) - len(missing)
    if other_x:
        counts.append(f"{other_x} not comparable")
    if result.config_changes:
        counts.append(f"{len(result.config_changes)} changed configs")
    verdict = f"FAILED: {n_fail} of {len(result.entries)} entries" if n_fail else "passed"
    if n_fail and result.fail_on_change:
        verdict += " (--fail-on-change)"
    return f"vgprscope {command} {verdict}: " + ", ".join(counts)


def versions_line(result: GateResult, baseline_path: str) -> str:
    """What was compared with what: the baseline file and both Tritons (``diff`` passes its sides instead
    of a path, as ``sides: ...``)."""
    if baseline_path.startswith("sides: "):
        return baseline_path.removeprefix("sides: ")
    same = result.baseline_triton == result.current_triton
    now = "same Triton" if same else f"Triton {result.current_triton} now"
    return f"baseline {baseline_path} (Triton {result.baseline_triton}), {now}"


# ---- the terminal table -----------------------------------------------------------------------------

# What the default view gives up, in order, until the table fits the width with whole words: the details'
# summary (the footnote keeps it), the baseline side of the changed values (the delta says it; the footnote
# has both), the slot's name (a short id and a legend line), the config column (into each row's footnote).
_LEVELS = ("full", "details marker", "short values", "slot ids", "knobs in footnote", "short headers",
           "kernel as title", "config in footnote")
# the headers the "short headers" level gives, and the legend line that says what they stand for
_SHORT_HEADERS = {"VGPRs / regs": "regs", "occupancy": "occ"}
_SHORT_HEADERS_LEGEND = ("regs: VGPRs (AMD: arch VGPRs + AGPRs) or registers per thread (NVIDIA); occ: occupancy "
                         "(waves/SIMD on AMD, blocks/SM on NVIDIA)")


def _needs_slots(result: GateResult) -> bool:
    """Whether two rows of one kernel on one arch differ only by slot (then the table must show it)."""
    seen: dict[tuple[str, str, str], str] = {}
    for d in result.entries:
        e = d.entry
        if seen.setdefault((e.variant, e.kernel, e.arch), e.slot) != e.slot:
            return True
    return False


def _kernel_label(d: EntryDiff) -> str:
    return f"{d.entry.variant} / {d.entry.kernel}"


def _columns(notes: Footnotes, labels: dict[str, str], level: int, slot_ids: dict[str, str] | None,
             show_slot: bool, show_config: bool, show_details: bool = True) -> list[Column]:
    from rich.text import Text

    short = level >= _LEVELS.index("short values")
    knobs_out = level >= _LEVELS.index("knobs in footnote")
    header = (lambda h: _SHORT_HEADERS[h]) if level >= _LEVELS.index("short headers") else (lambda h: h)
    config_out = level >= _LEVELS.index("config in footnote")

    def config_cell(d: EntryDiff) -> str:
        # a variant's own knobs (``block_dk=32``) as one footnote per distinct set; the tile, warps and stages stay
        label = labels[d.key]
        if not knobs_out or "=" not in label:
            return label
        sides = [side.split() for side in label.split(" -> ")]  # a changed config: both sides' knobs
        kept = " -> ".join(" ".join(w for w in side if "=" not in w) for side in sides)
        return f"{kept} {notes.ref(' -> '.join(' '.join(w for w in side if '=' in w) for side in sides))}".strip()

    def result_cell(d: EntryDiff) -> Any:
        word = verdict_word(d) + (" ✗" if d.fails and d.change is not Change.WORSE else "")
        return Text(word, style=STYLE.get(_VERDICT[d.change]) or "")

    def detail_cell(d: EntryDiff) -> str:
        # a changed config is in the details already
        moved = f"config {config_text(d)}" if (config_out and show_config and not d.config_changed) else ""
        return short_details(d, notes, marker_only=level >= _LEVELS.index("details marker"), prefix=moved)

    cols = [
        Column("result", result_cell),
        *([] if level >= _LEVELS.index("kernel as title") else
          [Column("variant / kernel", _kernel_label, wrap=True, default_only=True)]),
        Column("variant", lambda d: d.entry.variant, wide_only=True),
        Column("kernel", lambda d: d.entry.kernel, wide_only=True),
        Column("arch", lambda d: d.entry.arch),
    ]
    if show_slot:
        cell = (lambda d: slot_ids[d.entry.slot]) if slot_ids else (lambda d: d.entry.slot)
        cols.append(Column("slot", cell, wrap=True, default_only=True))
    cols.append(Column("slot", lambda d: d.entry.slot, wide_only=True))
    if show_config and not config_out:
        cols.append(Column("config", config_cell, wrap=True, default_only=True))
    cols += [
        Column("config", config_text, wide_only=True),
        Column(header("VGPRs / regs"), lambda d: _value_cell(d, REGISTERS, short=short), wrap=True, min_width=7),
        Column(header("occupancy"), lambda d: _value_cell(d, ("occupancy",), short=short), wrap=True),
        *([Column("details", detail_cell, wrap=True, default_only=True)] if show_details else []),
        Column("details", details, wide_only=True),
    ]
    return cols


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _cut_or_too_wide(text: str, table: Any, width: int) -> bool:
    """Whether a rendered table has a line over ``width`` or a word that is not a whole word of a cell,
    header or title (rich folded it)."""
    from rich.cells import cell_len

    words = set(str(table.title or "").split())
    for title, _ in table.__dict__.get("vgprscope_titles", ()):  # the rows' title lines (kernel as title)
        words.update(title.split())
    for col in table.columns:
        for c in (col.header, *col._cells):
            words.update(str(getattr(c, "plain", c)).split())
    text = _ANSI.sub("", text)  # on a terminal the table is coloured
    rows = [ln.rstrip() for ln in text.splitlines() if set(ln) - {"─", " "}]  # the header's rule is no word
    return any(cell_len(ln) > width or any(w not in words for w in ln.split()) for ln in rows)


def natural_key(text: str) -> tuple[Any, ...]:
    """Sorts "cfg 2" before "cfg 10": the digits of a text as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _slot_id(i: int) -> str:
    """a, b, ..., z, aa, ab, ...: a slot's short name in the table (letters: ``s1`` would read as stages)."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def _body_lines(text: str) -> int:
    """Lines a rendered table's title, header and rows take (more than one a row where a header or cell
    folds); its rule is not counted."""
    lines = _ANSI.sub("", text).splitlines()
    return sum(bool(ln.strip()) and set(ln.strip()) != {"─"} for ln in lines)


def _labels(result: GateResult) -> tuple[str, dict[str, str]]:
    """(the config words every row shares, each row's config without them; ``A -> B`` where it changed)."""
    from ..report.labels import common_config

    sides = [(d.baseline.config.short(), d.current.config.short()) if d.config_changed  # type: ignore[union-attr]
             else (d.entry.config.short(),) for d in result.entries]
    shared, rest = common_config([s for pair in sides for s in pair])
    labels, i = {}, 0
    for d, pair in zip(result.entries, sides):
        labels[d.key] = " -> ".join(rest[i:i + len(pair)])
        i += len(pair)
    return shared, labels


def to_table(result: GateResult, machine_line: str | Sequence[str], baseline_path: str, *, wide: bool = False,
             width: int | None = None, command: str = "check") -> str:
    """The terminal view: one row per entry, regressions first; details as footnotes unless ``wide``.
    ``machine_line``: the machine line, or its fields (wrapped to the width)."""
    from ..report.formats import fits_unfolded, output_width, wrap, wrap_fields

    width = width or output_width()
    shared, labels = _labels(result)
    show_config = wide or not set(labels.values()) <= {"-"}
    show_slot = wide or _needs_slots(result)
    # a column of dashes says nothing the summary line does not (every entry unchanged, no note)
    show_details = wide or any(details(d) for d in result.entries)
    title = f"vgprscope {command}" + (f" (every config: {shared})" if shared and not wide else "")
    # letters by the slots' own names, never by the rows' order (which puts failures first): a slot keeps its
    # letter from one run to the next
    slots = sorted({d.entry.slot for d in result.entries}, key=natural_key)
    def build(level: int) -> Any:
        notes = Footnotes()
        ids = {s: _slot_id(i) for i, s in enumerate(slots)} if level >= _LEVELS.index("slot ids") else None
        titled = not wide and level >= _LEVELS.index("kernel as title")
        table = build_table(result.entries, _columns(notes, labels, level, ids, show_slot, show_config, show_details),
                            title=title, wide=wide, row_style=lambda d: "red" if d.fails else None,
                            title_of=(lambda d: [(_kernel_label(d), "bold")]) if titled else None)
        return notes, ids, table

    def attempt(level: int) -> Any:
        notes, ids, table = build(level)
        text = render_table(table, wide=wide, width=width)
        return notes, ids, table, wide or not _cut_or_too_wide(text, table, width), _body_lines(text)

    # The first level at which nothing folds (each level moves a little more into footnotes and legends),
    # measured without rendering; where none gets there, the level that fits with whole words in the fewest
    # lines (the earliest of equals: it keeps the most in the table); the last if none fits at all.
    chosen = None
    for level in range(len(_LEVELS) if not wide else 1):
        built = build(level)
        if wide or fits_unfolded(built[2], width):
            chosen = built
            break
    if chosen is None:
        tried = [attempt(level) for level in range(len(_LEVELS))]
        fitting = [a for a in tried if a[3]]
        chosen = (min(fitting, key=lambda a: a[4]) if fitting else tried[-1])[:3]
    notes, ids, table = chosen
    legend_lines = [f"slot {i}: {s}" for s, i in ids.items()] if ids and show_slot else []
    if any(str(c.header) in _SHORT_HEADERS.values() for c in table.columns):
        legend_lines.append(_SHORT_HEADERS_LEGEND)
    head = wrap_fields(machine_line, width) if not isinstance(machine_line, str) else wrap(machine_line, width, "  ")
    lines = [head, wrap(versions_line(result, baseline_path), width, "  "), *(wrap(n, width, "  ") for n in result.notes)]
    text = render_table(table, footnotes=notes, notes=legend_lines, wide=wide, width=width)
    legend = wrap(legend_for(command).replace("`", ""), width if not wide else 10**4, "  ")
    if any(spills_change(d) for d in result.entries):
        legend += "\n" + wrap(SPILLS_CHANGE_LEGEND, width if not wide else 10**4, "  ")
    if alone():  # the table alone (a notebook): its notes, the table and the verdict; no machine line, no legend
        return "".join(ln + "\n" for ln in lines[2:]) + text + wrap(summary(result, command), width, "  ") + "\n"
    return "\n".join(lines) + "\n" + text + wrap(summary(result, command), width, "  ") + "\n" + legend + "\n"


# ---- markdown, json, benchmark json, annotations ----------------------------------------------------

def to_markdown(result: GateResult, machine_line: str, baseline_path: str, command: str = "check") -> str:
    """A PR comment: the verdict, the changed entries, the unchanged ones folded away."""
    def changed(d: EntryDiff) -> bool:
        return d.change is not Change.SAME or d.fails or bool(d.changed_metrics) or d.config_changed

    out = [f"## {summary(result, command)}", "", f"Machine: {machine_line}  ", f"{versions_line(result, baseline_path)}"]
    out += [f"  \n{n}" for n in result.notes]
    out.append("")
    rows = [cells(d) for d in result.entries if changed(d)]
    same = [cells(d) for d in result.entries if not changed(d)]
    out.append(md_table(HEADERS, rows) if rows else "No entry changed.\n")
    if same:
        out += [f"<details><summary>{len(same)} unchanged</summary>", "", md_table(HEADERS, same), "</details>", ""]
    out.append(LEGEND)
    if any(spills_change(d) for d in result.entries):
        out.append(f"\n{SPILLS_CHANGE_LEGEND}")
    return "\n".join(out) + "\n"


def _metric_json(m: MetricDiff) -> dict[str, Any]:
    return {"metric": m.metric, "baseline": m.baseline, "current": m.current, "delta": m.delta,
            "rule": m.rule.tolerance(), "rule_text": m.rule.text(), "change": m.change.value, "verdict": metric_delta(m).verdict.value,
            "fails": m.fails,
            "cliff": {"crossed": m.cliff.crossed or None, "headroom": m.cliff.headroom, "before": m.cliff.after or None}
            if m.cliff else None}


def to_json(result: GateResult, machine: dict[str, Any], baseline_path: str, exit_code: int | None = None,
            command: str = "check", extra: dict[str, Any] | None = None) -> str:
    """Every row with both sides; ``exit_code``: the one the command exits with (the CLI's to say)."""
    rows = []
    for d in result.entries:
        e = d.entry
        rows.append({
            "key": d.key, "variant": e.variant, "kernel": e.kernel, "arch": e.arch, "slot": e.slot,
            "config_key": e.config_key, "config": e.config.as_dict(), "config_changed": d.config_changed,
            "baseline_config": d.baseline.config.as_dict() if d.config_changed else None,  # type: ignore[union-attr]
            "baseline_config_key": d.baseline.config_key if d.baseline else None,
            "state": d.state.value, "change": d.change.value, "result": verdict_word(d), "fails": d.fails,
            "occupancy_dropped_by": [m.metric for m in d.dropped_by],
            "accepted": d.accepted,
            "status": {"baseline": d.baseline.status if d.baseline else None,
                       "current": d.current.status if d.current else None},
            "metrics": [_metric_json(m) for m in d.metrics],
            "diagnostics": d.diagnostics.as_json() if d.diagnostics else None,
            "note": d.current.note or None if d.current else None,  # compiled from a capture's snapshot
            "baseline": d.baseline.metrics if d.baseline and d.state is State.MISSING else None,
            "current": d.current.metrics if d.current and d.state is State.NEW else None,
        })
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": command, "machine": machine,
           "baseline": baseline_path, "baseline_triton_version": result.baseline_triton,
           "triton_version": result.current_triton, "passed": result.passed,
           **({"exit_code": exit_code} if exit_code is not None else {}), "summary": summary(result, command),
           "counts": {c.name.lower(): result.count(c) for c in Change} | {
               "new": len(result.of_state(State.NEW)), "missing": len(result.of_state(State.MISSING)),
               "changed_configs": len(result.config_changes), "failed": len(result.failures)},
           "notes": list(result.notes), "rows": rows, **(extra or {})}
    return json.dumps(doc, indent=2) + "\n"


def benchmark_name(e: Entry, metric: str) -> str:
    """Unique per entry and metric, and stable across runs (github-action-benchmark draws one chart per
    name): the slot, not the config, so a slot's chart goes on when its config changes."""
    return f"{e.variant}/{e.kernel} {e.arch} [{e.slot}] {metric}"


def to_benchmark_json(entries: Sequence[Entry]) -> str:
    """github-action-benchmark's ``customSmallerIsBetter``: one item per entry and metric. Occupancy is
    higher-is-better, so it rides along in ``extra`` instead of being a series of its own."""
    items = []
    for e in entries:
        occ = f"occupancy {e.occupancy['value']} {e.occupancy_unit}; " if e.occupancy else ""
        extra = f"{occ}config {e.config.short()} ({e.config_key}); status {e.status}"
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


def annotation(level: str, title: str, message: str, where: Location | None = None) -> str:
    """A GitHub workflow command; ``where``: the kernel's file and line, given where the file lies in the
    repository (an annotation elsewhere has no file to sit on)."""
    props = [f"title={_escape_property(title)}"]
    if where is not None and not where.uri.startswith("file:"):
        props += [f"file={_escape_property(where.uri)}", f"line={where.line}"]
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def workflow_annotations(result: GateResult, locations: Mapping[str, Location] | None = None) -> list[str]:
    """GitHub workflow commands: an error per failing entry (at its kernel's ``def`` line when its file is in
    the repository: ``locations``, as SARIF's), a warning per new or missing entry that does not fail."""
    locations = locations or {}
    out = []
    for d in result.entries:
        e = d.entry
        where = f"{e.variant}/{e.kernel} on {e.arch} [{e.slot}: {config_text(d)}]"
        if d.fails:
            what = "missing entry" if d.state is State.MISSING else "register regression"
            out.append(annotation("error", f"vgprscope: {what} in {e.variant}", f"{where}: {details(d)}",
                                  locations.get(d.key)))
        elif d.state is not State.COMPARED:
            out.append(annotation("warning", f"vgprscope: {d.state.value} baseline entry", f"{where}: {details(d)}",
                                  locations.get(d.key)))
    return out
