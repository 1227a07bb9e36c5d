"""The gate's verdicts as an HTML report (``check --format html``, ``diff --format html``): the verdict first, the
entries that changed (a failing one highlighted, linked to its kernel's file and line, what the compiler said
beside it), each changed entry on its occupancy staircases with its baseline's point, the unchanged ones folded
away, the legend. Its cells and words are the gate report's (``gate.report``); drawing is ``report.page``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .baseline import Entry
from .diff import EntryDiff, GateResult
from .report import HEADERS, LEGEND, cells, legend_for, summary, verdict_word, versions_line
from .rules import Change


def _changed(d: EntryDiff) -> bool:
    return d.change is not Change.SAME or d.fails or bool(d.changed_metrics) or d.config_changed


def _row_class(d: EntryDiff) -> str:
    """``worse`` for a row that fails (highlighted), else its verdict word."""
    return "worse" if d.fails else verdict_word(d)


def entry_record(e: Entry) -> Any:
    """A baseline entry as the record it was saved from (the same usage and occupancy), for the occupancy chart."""
    from ..core.records import Occupancy, Record

    return Record(variant=e.variant, kernel=e.kernel, arch=e.arch, config=e.config, status=e.status, usage=e.usage,
                  occupancy=Occupancy.from_dict(dict(e.occupancy)) if e.occupancy else None,
                  llvm_version=e.llvm_version)


def to_html(result: GateResult, machine: Any, baseline_path: str, *, command: str = "check", command_line: str = "",
            locations: Mapping[str, Any] | None = None, url_template: str = "", commit: str = "",
            diagnostics: Mapping[str, Sequence[Any]] | None = None, exit_code: int | None = None,
            extra_sections: Sequence[str] = (), versions: Sequence[str] = ()) -> str:
    """The gate's verdict as an HTML report: the verdict first; the entries that changed, a failing one
    highlighted, each linked to its kernel's file and line (``locations``: entry key -> ``Location``;
    ``url_template``: a repository's URL for them) with what the compiler said beside it (``diagnostics``: entry
    key -> the current compile's ``Diagnostic`` records; else the codes the entries recorded); the changed
    entries on their occupancy staircases; the unchanged entries folded away; the legend."""
    from ..report import page

    locations = locations or {}
    text = summary(result, command)
    if exit_code == 2:
        verdict = page.HeadLine(f"vgprscope {command}: could not judge every entry (exit 2)", "none", text)
    else:
        verdict = page.HeadLine(text.split(":", 1)[0], "pass" if result.passed else "fail", text.split(":", 1)[1].strip())

    def said(d: EntryDiff) -> str:
        words = list(diagnostics.get(d.key, ())) if diagnostics else []
        if words:
            return page.diagnostics_html(words)
        codes = [*(d.entry.diagnostics or ())]
        extra = d.diagnostics.text() if d.diagnostics else ""
        return page.esc("; ".join(filter(None, [", ".join(codes), extra])))

    def row(d: EntryDiff) -> list[str]:
        c = [page.esc(x) for x in cells(d)]
        where = locations.get(d.key)
        c[2] = page.source_link(where.uri, where.line, d.entry.kernel, url_template=url_template, commit=commit) \
            if where is not None else page.esc(d.entry.kernel)
        return [*c, said(d)]

    headers = [*HEADERS, "compiler said"]
    raw = tuple(range(len(headers)))
    changed = sorted((d for d in result.entries if _changed(d)), key=lambda d: (not d.fails, verdict_word(d)))
    same = [d for d in result.entries if not _changed(d)]
    body = (page.table(headers, [row(d) for d in changed], [_row_class(d) for d in changed], raw=raw)
            if changed else "<p>No entry changed.</p>")
    shown = [d for d in changed if d.current is not None and d.current.status == "ok"]
    cards = [entry_record(d.current) for d in shown if d.current is not None]
    titles = [f"{_row_class(d)}: {d.entry.variant} / {d.entry.kernel} on {d.entry.arch} ({d.entry.slot})" for d in shown]
    before = [entry_record(d.baseline) if d.baseline is not None and d.baseline.status == "ok" else None for d in shown]
    sections = [
        f'<p class="meta">{page.esc(versions_line(result, baseline_path))}</p>'
        + "".join(f'<p class="meta">{page.esc(n)}</p>' for n in result.notes),
        page.section(f"Entries that changed ({len(changed)})", body, "changed"),
        *extra_sections,
        page.section("Where the changed entries stand (hollow: the baseline's point)",
                     page.occupancy_cards(cards, titles, before), "occupancy"),
        page.section(f"Unchanged ({len(same)})", page.folded(f"{len(same)} entries unchanged", page.table(
            headers, [row(d) for d in same], raw=raw)), "unchanged") if same else "",
        page.section("Legend", f"<p class=\"meta\">{page.esc(LEGEND if command == 'check' else legend_for(command))}</p>",
                     "legend"),
    ]
    return page.document(f"vgprscope {command}", sections, machine=machine, command=command_line or f"vgprscope {command}",
                         versions=versions or [f"Triton {result.current_triton}"], verdict=verdict)
