"""``vgprscope diff`` as text: the gate's table of the second side against the first (regressions first,
signed changes with their better / worse marks), then, for each kernel that regressed, its spill sites on
both sides by source line, the new ones marked; markdown for a PR comment; JSON and CSV for programs."""

from __future__ import annotations

import csv
import io
from typing import Any

from ...gate import report
from ...report.formats import wrap
from .core import SidesDiff, SpillSites

SITES_SHOWN = 8  # spill sites shown per regressed kernel (all of them are in JSON)


def _versions(result: SidesDiff) -> str:
    return f"sides: before {result.before.label}, after {result.after.label} (the gate's rules judge the after side)"


def _sites_text(result: SidesDiff, width: int) -> list[str]:
    out: list[str] = []
    for s in result.spills:
        if not s.sites:
            continue  # nothing spills on either side: the registers alone regressed
        out.append(wrap(f"{s.key}: spill instructions by source line, before -> after", width, "  "))
        for site in s.sites[:SITES_SHOWN]:
            mark = "new " if site.new else "    "
            loop = " (in a loop)" if site.in_loop else ""
            out.append(wrap(f"  {mark}{site.before:>4} -> {site.after:<4} {site.location}{loop}", width, "      "))
        if len(s.sites) > SITES_SHOWN:
            out.append(f"  ... {len(s.sites) - SITES_SHOWN} more (--format json lists every site)")
    return out


def _noted(result: SidesDiff, machine: Any) -> Any:
    """The gate's result with the header's notes (what was compiled) above its own."""
    from dataclasses import replace

    notes = tuple(getattr(machine, "notes", ()))
    return replace(result.gate, notes=(*notes, *result.gate.notes)) if notes else result.gate


def to_table(result: SidesDiff, machine: Any, *, wide: bool = False, width: int | None = None) -> str:
    from ...report.formats import output_width

    width = width or output_width()
    text = report.to_table(_noted(result, machine), machine.fields(), _versions(result), wide=wide, width=width,
                           command="diff")
    sites = _sites_text(result, width if not wide else 10**4)
    sites += [wrap(f"Inductor's spill threshold crossed: {c.text()}", width, "  ") for c in result.crossings]
    sites += [wrap(c.text(), width if not wide else 10**4, "  ") for c in result.loops]
    tail = ("\n".join(sites) + "\n") if sites else ""
    return text + tail + wrap(result.summary(), width, "  ") + "\n"


def _sites_md(s: SpillSites) -> str:
    rows = [f"| {'new' if x.new else ''} | `{x.location}` | {'yes' if x.in_loop else ''} | {x.before} | {x.after} |"
            for x in s.sites[:SITES_SHOWN]]
    head = f"**{s.key}**" + (f": {s.note}" if s.note else "")
    if not rows:
        return head + "\n"
    return "\n".join([head, "", "| | source line | in loop | before | after |", "|---|---|---|---:|---:|", *rows,
                      ""])


def to_markdown(result: SidesDiff, machine: Any) -> str:
    text = report.to_markdown(_noted(result, machine), machine.line(), _versions(result), command="diff")
    parts = [f"**{result.summary()}**", "", text]
    spilling = [s for s in result.spills if s.sites]
    if spilling:
        parts += ["### Where the regressed kernels spill", "", *(_sites_md(s) for s in spilling)]
    if result.loops:
        parts += ["### Hot loops whose scratch traffic per trip changed", "",
                  "| entry | hot loop (source lines) | scratch B/trip before | after | scratch insts before | after "
                  "| matrix % before | after |", "|---|---|---:|---:|---:|---:|---:|---:|",
                  *(f"| {c.key} | `{c.lines}` | {c.spill_before} | {c.spill_after} | {c.insts_before} | {c.insts_after} "
                    f"| {_opt(c.share_before)} | {_opt(c.share_after)} |" for c in result.loops), ""]
    if result.crossings:
        parts += ["### Inductor configs across its spill threshold", "", *(f"- `{c.text()}`" for c in result.crossings),
                  ""]
    return "\n".join(parts) + "\n"


def _opt(value: int | None) -> str:
    return "?" if value is None else str(value)


def _sites_json(s: SpillSites) -> dict[str, Any]:
    return {"key": s.key, "note": s.note, "sites": [
        {"location": x.location, "in_loop": x.in_loop, "before": x.before, "after": x.after, "new": x.new}
        for x in s.sites]}


def to_json(result: SidesDiff, machine: Any) -> str:
    extra = {"before": {"triton_version": result.before.version, "label": result.before.label,
                        "settings": dict(result.before.settings)},
             "after": {"triton_version": result.after.version, "label": result.after.label,
                       "settings": dict(result.after.settings)},
             "diff_summary": result.summary(), "spill_sites": [_sites_json(s) for s in result.spills],
             # entries a side could not compile from their current source: not judged (exit 2)
             "unloaded": [{"side": side, "key": key, "reason": why} for side, key, why in result.unloaded],
             "loop_changes": [c.as_dict() for c in result.loops],
             "inductor_threshold_crossings": [c.as_dict() for c in result.crossings]}
    return report.to_json(result.gate, machine.as_dict(), _versions(result), command="diff", extra=extra)


CSV_FIELDS = ("key", "variant", "kernel", "arch", "slot", "before", "after", "result", "metric", "value_before",
              "value_after", "delta", "verdict", "fails")


def csv_rows(result: SidesDiff) -> list[dict[str, Any]]:
    """One row per entry and metric (one with no metric for an entry without them): both sides, the change,
    the verdict."""
    out = []
    for d in result.gate.entries:
        e = d.entry
        base = [d.key, e.variant, e.kernel, e.arch, e.slot, result.before.label, result.after.label,
                report.verdict_word(d)]
        if not d.metrics:
            out.append(dict(zip(CSV_FIELDS, base + ["", "", "", "", "", d.fails])))
        for m in d.metrics:
            out.append(dict(zip(CSV_FIELDS, base + [m.metric, m.baseline, m.current, m.delta,
                                                    report.metric_delta(m).verdict.value, m.fails])))
    return out


def to_csv(result: SidesDiff) -> str:
    """One row per entry and metric: both sides, the change, the verdict."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_FIELDS)
    for row in csv_rows(result):
        w.writerow(row.values())
    return buf.getvalue()


def to_html(result: SidesDiff, machine: Any, command: str, locations: Any = None, url_template: str = "",
            commit: str = "") -> str:
    """The HTML report: the gate's verdict first, the entries that moved (a failing one highlighted, linked
    to its kernel's file and line, the after side's compiler diagnostics beside it, each on its occupancy
    staircases), the regressed kernels' spill sites before and after, the hot loops whose spill traffic per
    trip changed."""
    from ...gate import html as gate_html
    from ...gate.baseline import Entry
    from ...report import page

    diags = {Entry.from_record(r).key: r.diagnostics for r in result.records_after if r.diagnostics}
    extra = []
    spilling = [s for s in result.spills if s.sites]
    if spilling:
        body = "".join(f"<h3>{page.esc(s.key)}</h3>" + (f"<p class=\"meta\">{page.esc(s.note)}</p>" if s.note else "")
                       + page.table(["", "source line", "in loop", "before", "after"],
                                    [["new" if x.new else "", x.location, "yes" if x.in_loop else "", str(x.before),
                                      str(x.after)] for x in s.sites], ["worse" if x.new else "" for x in s.sites],
                                    numeric=(3, 4)) for s in spilling)
        extra.append(page.section("Where the regressed kernels spill", body, "spills"))
    if result.loops:
        extra.append(page.section("Hot loops whose scratch traffic per trip changed", page.table(
            ["entry", "hot loop (source lines)", "scratch B/trip before", "after", "scratch insts before", "after",
             "matrix % before", "after"],
            [[c.key, c.lines, str(c.spill_before), str(c.spill_after), str(c.insts_before), str(c.insts_after),
              _opt(c.share_before), _opt(c.share_after)] for c in result.loops],
            ["worse" if (c.spill_after or 0) > (c.spill_before or 0) else "" for c in result.loops],
            numeric=(2, 3, 4, 5, 6, 7)), "loops"))
    if result.crossings:
        extra.append(page.section("Inductor configs across its spill threshold",
                                  "<ul>" + "".join(f"<li><code>{page.esc(c.text())}</code></li>"
                                                   for c in result.crossings) + "</ul>", "crossings"))
    versions = page.versions_of([*result.records_before, *result.records_after])
    return gate_html.to_html(result.gate, machine, _versions(result), command="diff", command_line=command,
                          locations=locations, url_template=url_template, commit=commit, diagnostics=diags,
                          exit_code=None if result.compared else 2, extra_sections=extra, versions=versions)
