"""Records as the analyze table (terminal) and as markdown (every field).

The default view labels rows the way a person scans them: the variant once, on its first row; a variant
with several kernels gets a title row and each kernel's name once; then one row per arch. Names too long
for a label column (a captured kernel's module and name) stand on lines of their own across the table
instead, so that the data columns keep their width. ``--wide`` spells variant and kernel on every row,
with every field. ``scan``'s rows are named by kernel, the file it came from beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...core.records import SCHEMA_VERSION, Record
from ...report.formats import (
    Column,
    Footnotes,
    build_table,
    dicts_to_csv,
    md_table,
    new_table,
    output_width,
    render_table,
    wrap,
)
from ...report.labels import LABEL_MAX, common_config
from ...report.machine import Machine
from ...report.refusals import refusal_notes, refusals
from ...report.rows import (
    COLUMNS,
    NEXT_LEGEND,
    RECORD_LEGEND,
    SPILLS_FULL_LEGEND,
    SPILLS_LEGEND,
    cells,
    flat,
    generated_where,
    record_columns,
    verdict_cell,
    verdict_headers,
)


def grouped(records: Sequence[Record]) -> list[Record]:
    """Records by variant, then kernel (a generated kernel by its module too), then arch, each in order of first
    appearance."""
    first: dict[tuple[str, Any], int] = {}
    kernel = {id(r): (r.variant, r.kernel, generated_where(r)) for r in records}  # a generated one: by module too
    for r in records:
        for key in (("v", r.variant), ("k", kernel[id(r)]), ("a", r.arch)):
            first.setdefault(key, len(first))
    return sorted(records, key=lambda r: (first[("v", r.variant)], first[("k", kernel[id(r)])],
                                          first[("a", r.arch)]))


def labelled(items: Sequence[Any], variant: Callable[[Any], str], kernel: Callable[[Any], str],
             whole: Callable[[Any], str] | None = None) -> list[tuple[str, Any | None]]:
    """(label, item) rows for a grouped table: the variant's name on its first row (a title row, item
    None, when it has several kernels; each kernel's name, indented, on its first row); blank below."""
    out: list[tuple[str, Any | None]] = []
    by_variant: dict[str, list[Any]] = {}
    for it in items:
        by_variant.setdefault(variant(it), []).append(it)
    for name, its in by_variant.items():
        kernels = list(dict.fromkeys(kernel(i) for i in its))
        if len(kernels) == 1:  # ``whole``: the label of a group of one kernel (a captured module's kernel)
            out += [((whole(it) if whole else name) if j == 0 else "", it) for j, it in enumerate(its)]
            continue
        out.append((name, None))
        for k in kernels:
            out += [(f"  {k}" if j == 0 else "", it) for j, it in enumerate(i for i in its if kernel(i) == k)]
    return out


def with_own_words(rows: list[tuple[str, Any | None]], own: dict[str, str]) -> list[tuple[str, Any | None]]:
    """:func:`labelled` rows with each variant of ``own`` named on a title line with its words
    (``remat-q  block_dk=32``), its rows below."""
    out: list[tuple[str, Any | None]] = []
    for label, item in rows:
        if label in own and not label.startswith("  "):
            out.append((f"{label}  {own[label]}", None))
            if item is not None:
                out.append(("", item))
            continue
        out.append((label, item))
    return out


def label_table(rows: list[tuple[str, Any | None]], columns, *, title: str | None, label_header: str = "variant",
                row_style: Callable[[Any], str | None] | None = None):
    """A table whose first column is the labels of :func:`labelled`, a rule between variants."""
    from ...report.formats import add_columns, add_title

    table = new_table(title)
    table.add_column(label_header, overflow="fold")
    add_columns(table, columns)
    for i, (label, item) in enumerate(rows):
        starts_variant = bool(label) and not label.startswith("  ")
        if i and starts_variant:
            table.rows[-1].end_section = True
        if item is None:  # a line of its own across the table: a long variant name takes no column width
            add_title(table, label, "bold")
        else:
            table.add_row(label, *(c.cell(item) for c in columns), style=row_style(item) if row_style else None)
    return table


@dataclass(frozen=True)
class Naming:
    """How a records table names its rows. analyze: by variant, then kernel (a captured kernel's variant
    is its module); scan: by kernel, its file beside it (a cache entry knows the file it came from)."""

    variant_header: str = "variant"  # the --wide column of ``Record.variant``
    by_kernel: bool = False  # the kernel is the name, the variant (the file) secondary

    def title(self, r: Record) -> str:
        where = generated_where(r)  # a generated kernel: its module and line, where a person opens it
        if self.by_kernel:
            side = where or (r.variant if r.variant and r.variant != r.kernel else "")
            return f"{r.kernel}  ({side})" if side else r.kernel
        name = r.variant if r.kernel == r.variant else f"{r.variant} {r.kernel}"
        return f"{name}  ({where})" if where else name

    def kernel(self, r: Record) -> str:
        """The kernel as rows are grouped: a generated kernel with its module (Inductor names the kernels of
        different modules alike: ``triton_mm``)."""
        where = generated_where(r)
        return f"{r.kernel}  {where}" if where else r.kernel


ANALYZE = Naming()
SCAN = Naming(variant_header="file", by_kernel=True)


def table_text(records: Sequence[Record], machine: Machine, *, title: str | None = None, wide: bool = False,
               width: int | None = None, naming: Naming = ANALYZE, refused: Sequence[Record] = ()) -> str:
    """The machine line, the table, its footnotes and legend: compact columns by default, every field
    with ``wide``. Rows are named in a label column, or, where a name is longer than :data:`LABEL_MAX`,
    by title lines across the table above each kernel's rows. ``refused``: rows the kernels' source does not
    take, one note each variant and reason under the table."""
    records = grouped(records)
    said_refused = refusal_notes(refused)
    if not records:  # nothing to tabulate: the title and why
        return machine.text(width) + "\n" + "".join(wrap(ln, width or output_width(), "  ") + "\n"
                                                    for ln in [title or "", *said_refused] if ln)
    machine = machine.for_rows(r.triton_version for r in records)
    notes = Footnotes()
    columns = record_columns(notes, with_status=not all(r.ok for r in records))
    if naming.by_kernel:  # the kernel first, then its file
        columns = [Column("kernel", lambda r: r.kernel, wide_only=True),
                   Column(naming.variant_header, lambda r: r.variant, wide_only=True),
                   *[c for c in columns if c.header not in ("variant", "kernel")]]
    style = lambda r: None if r.ok else "red"  # noqa: E731
    if wide and (headers := verdict_headers(records)):  # a producer's verdict (Inductor's) beside the spills
        at = next(i for i, c in enumerate(columns) if c.header == "scratch / stack (B/lane)")
        columns = [*columns[:at + 1], *[Column(h, verdict_cell(h), wide_only=True) for h in headers], *columns[at + 1:]]
    if wide:
        table = build_table(records, columns, title=title, wide=True, row_style=style, section=lambda r: r.variant)
        spilled = any(r.usage is not None and (r.usage.spills or not r.usage.spills_known) for r in records)
        return machine.text(width) + "\n" + render_table(
            table, wide=True, width=width, kept=said_refused, notes=[SPILLS_FULL_LEGEND] if spilled else [])
    shared, rest = common_config([r.config.short() for r in records])
    labels = {r.key: lab for r, lab in zip(records, rest)}
    # a column that says the same on every row is said once, in the title
    # failed rows spill nothing; unknown spills (a stored cubin's) are not "no spills"
    spill_free = all(not r.usage.spills and r.usage.spills_known for r in records if r.usage is not None)
    columns = [c if c.header != "config" else replace(c, cell=lambda r: labels[r.key])
               for c in columns if not c.wide_only and not (c.header == "config" and set(rest) == {"-"})
               and not (c.header == "spills" and spill_free)]
    said = ([f"every config: {shared}"] if shared else []) + (["no kernel spills"] if spill_free else [])
    heading = f"{title or ''} ({'; '.join(said)})".strip() if said else title
    # a variant's own knob every row of it shares (remat-q's block_dk=32) is said once, on its name's line
    own: dict[str, str] = {}
    if not naming.by_kernel:
        for v in dict.fromkeys(r.variant for r in records):
            mine = [r for r in records if r.variant == v]
            if any(r.source != "variants" for r in mine):  # a capture's words name its launch: they stay
                continue
            mine_labels = [labels[r.key] for r in mine]
            # one row: its own words are the variant's (a second label of them makes common_config say so)
            words, trimmed = common_config(mine_labels * (2 if len(mine) == 1 else 1))
            knobs = [w for w in words.split() if "=" in w and not w.startswith("cfg")]
            if knobs:
                own[v] = " ".join(knobs)
                labels.update({r.key: " ".join(w for w in labels[r.key].split() if w not in knobs) or "-"
                               for r in mine})
    if naming.by_kernel:
        rows = labelled(records, naming.kernel, naming.kernel)
        # which file each kernel came from: the first column left out where the table cannot fit
        columns = [*columns[:1], Column("file", lambda r: generated_where(r) or r.variant, drop=0), *columns[1:]]
        label_header = "kernel"
    else:
        # a captured kernel's variant is its module: the kernel's name is what a person looks for
        rows = with_own_words(labelled(records, lambda r: r.variant, naming.kernel,
                                           lambda r: r.variant if r.source == "variants" else naming.title(r)), own)
        label_header = "variant"
    if max((len(lab) for lab, _ in rows), default=0) <= LABEL_MAX:
        table = label_table(rows, columns, title=heading, label_header=label_header, row_style=style)
    else:
        table = build_table(records, [c for c in columns if c.header != "file"], title=heading, row_style=style,
                            title_of=lambda r: [(naming.title(r), "bold")])
    legend = RECORD_LEGEND.format(spills="" if spill_free else SPILLS_LEGEND)
    text = render_table(table, footnotes=notes, kept=said_refused, notes=[NEXT_LEGEND, legend], width=width)
    return machine.text(width) + "\n" + text


def to_markdown(records: Sequence[Record], machine: Machine, title: str | None = None,
                columns=COLUMNS, refused: Sequence[Record] = ()) -> str:
    head = f"## {title}\n\n" if title else ""
    machine = machine.for_rows(r.triton_version for r in records)
    if headers := [h for h in verdict_headers(records) if all(h != c for c, _ in columns)]:
        at = next((i for i, (h, _) in enumerate(columns) if h.startswith("scratch")), len(columns) - 1)
        columns = [*columns[:at + 1], *[(h, verdict_cell(h)) for h in headers], *columns[at + 1:]]
    spilled = any(r.usage is not None and (r.usage.spills or not r.usage.spills_known) for r in records)
    return (head + f"{machine.md()}\n\n"
            + md_table([h for h, _ in columns], [cells(r, columns) for r in records])
            + "".join(f"\n{note}\n" for note in refusal_notes(refused))
            + (f"\n{SPILLS_FULL_LEGEND}\n" if spilled else ""))


def to_json(records: Sequence[Record], machine: Machine, command: str, refused: Sequence[Record] = (),
            **extra: Any) -> str:
    """The command's JSON: its rows, and (``refused``) the rows its kernels' source does not take, with why."""
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": command,
           "machine": machine.as_dict(), "triton_version": machine.triton, **extra,
           "rows": [r.as_dict() for r in records]}
    if refused:
        doc["refused"] = [{"variant": r.variant, "kernel": r.kernel, "arch": r.arch, "config": r.config.as_dict(),
                           "reason": r.refused} for r in refused]
    return json.dumps(doc, indent=2, default=str) + "\n"


def record_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """The rows of the records' CSV export (and of the library's DataFrames): ``report.rows.flat`` of each."""
    return [flat(r) for r in records]


def to_csv(records: Sequence[Record]) -> str:
    return dicts_to_csv(record_rows(records))


def to_html(records: Sequence[Record], machine: Machine, command: str, title: str = "vgprscope analyze",
            refused: Sequence[Record] = ()) -> str:
    """The HTML report: each kernel x arch on its occupancy staircases, then the markdown export's table (the
    same records), what was not compiled and why (``refused``), the compilers and the command."""
    from ...report import page

    ok = sum(r.ok for r in records)
    counts = f"{len(records)} rows: {ok} compiled, {len(records) - ok} did not compile or cannot launch"
    said = [(r, d) for r in records for d in r.diagnostics]
    diags = page.table(["kernel", "arch", "compiler said"],
                       [[f"{r.variant} / {r.kernel}", r.arch, d.text()] for r, d in said]) if said else ""
    sections = [
        f'<p class="meta">{page.esc(counts)}</p>',
        page.section("Occupancy per kernel and arch", page.occupancy_cards(grouped(records)), "occupancy"),
        page.section("Table", page.from_markdown(to_markdown(records, machine)).split("\n", 1)[-1], "table"),
        page.section("What the compiler said", diags, "diagnostics"),
    ]
    if refused:
        sections.insert(2, page.section("Not compiled", "".join(f"<p>{page.esc(n)}</p>" for n in refusals(refused)),
                                        "refused"))
    return page.document(title, sections, machine=machine, command=command, versions=page.versions_of(records))
