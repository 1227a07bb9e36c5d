"""Records as the analyze table (terminal) and as markdown (every field).

The default view labels rows the way a person scans them: the variant once, on its first row; a variant
with several kernels gets a title row and each kernel's name once; then one row per arch. ``--wide``
spells variant and kernel on every row, with every field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..records import Record
from .formats import Footnotes, build_table, md_table, new_table, render_table
from .machine import Machine
from .rows import COLUMNS, NEXT_LEGEND, RECORD_LEGEND, SPILLS_LEGEND, cells, record_columns


def common_config(labels: Sequence[str]) -> tuple[str, list[str]]:
    """(the words every config label shares, each label without them): ``d128 fp16`` is said once above
    the table instead of on every row. Labels are ``config.short()``: space-separated words."""
    split = [lab.split() for lab in labels]
    if len(split) < 2:
        return "", list(labels)
    shared = [w for w in split[0] if all(w in s for s in split[1:])]

    def names_next(w: str, s: list[str]) -> bool:
        # a bare word before a value that differs ("cfg 2/18") stays with it
        i = s.index(w)
        return not any(c.isdigit() or c == "=" for c in w) and i + 1 < len(s) and s[i + 1] not in shared

    shared = [w for w in shared if not any(names_next(w, s) for s in split)]
    rest = [" ".join(w for w in s if w not in shared) or "-" for s in split]
    return " ".join(shared), rest


def grouped(records: Sequence[Record]) -> list[Record]:
    """Records by variant, then kernel, then arch, each in order of first appearance."""
    first: dict[tuple[str, Any], int] = {}
    for r in records:
        for key in (("v", r.variant), ("k", (r.variant, r.kernel)), ("a", r.arch)):
            first.setdefault(key, len(first))
    return sorted(records, key=lambda r: (first[("v", r.variant)], first[("k", (r.variant, r.kernel))],
                                          first[("a", r.arch)]))


def labelled(items: Sequence[Any], variant: Callable[[Any], str],
             kernel: Callable[[Any], str]) -> list[tuple[str, Any | None]]:
    """(label, item) rows for a grouped table: the variant's name on its first row (a title row, item
    None, when it has several kernels; each kernel's name, indented, on its first row); blank below."""
    out: list[tuple[str, Any | None]] = []
    by_variant: dict[str, list[Any]] = {}
    for it in items:
        by_variant.setdefault(variant(it), []).append(it)
    for name, its in by_variant.items():
        kernels = list(dict.fromkeys(kernel(i) for i in its))
        if len(kernels) == 1:
            out += [(name if j == 0 else "", it) for j, it in enumerate(its)]
            continue
        out.append((name, None))
        for k in kernels:
            out += [(f"  {k}" if j == 0 else "", it) for j, it in enumerate(i for i in its if kernel(i) == k)]
    return out


def label_table(rows: list[tuple[str, Any | None]], columns, *, title: str | None, label_header: str = "variant",
                row_style: Callable[[Any], str | None] | None = None):
    """A table whose first column is the labels of :func:`labelled`, a rule between variants."""
    from rich.text import Text

    table = new_table(title)
    table.add_column(label_header, overflow="fold")
    for c in columns:
        table.add_column(c.header, justify=c.justify, no_wrap=not c.wrap, overflow="fold", min_width=c.min_width)
    for i, (label, item) in enumerate(rows):
        starts_variant = bool(label) and not label.startswith("  ")
        if i and starts_variant:
            table.rows[-1].end_section = True
        if item is None:
            table.add_row(Text(label, style="bold"), *[""] * len(columns))
        else:
            table.add_row(label, *(c.cell(item) for c in columns), style=row_style(item) if row_style else None)
    return table


def table_text(records: Sequence[Record], machine: Machine, *, title: str | None = None, wide: bool = False,
               width: int | None = None) -> str:
    """The machine line, the table, its footnotes and legend: compact columns by default, every field
    with ``wide``."""
    records = grouped(records)
    notes = Footnotes()
    columns = record_columns(notes, with_status=not all(r.ok for r in records))
    style = lambda r: None if r.ok else "red"  # noqa: E731
    if wide:
        table = build_table(records, columns, title=title, wide=True, row_style=style, section=lambda r: r.variant)
        return machine.text(width) + "\n" + render_table(table, wide=True, width=width)
    shared, rest = common_config([r.config.short() for r in records])
    labels = {r.key: lab for r, lab in zip(records, rest)}
    # a column that says the same on every row is said once, in the title
    spill_free = all(not r.usage.spills for r in records if r.usage is not None)  # failed rows spill nothing
    columns = [c if c.header != "config" else type(c)("config", lambda r: labels[r.key], wrap=True)
               for c in columns if not c.wide_only and not (c.header == "config" and set(rest) == {"-"})
               and not (c.header == "spills" and spill_free)]
    said = ([f"every config: {shared}"] if shared else []) + (["no kernel spills"] if spill_free else [])
    heading = f"{title or ''} ({'; '.join(said)})".strip() if said else title
    table = label_table(labelled(records, lambda r: r.variant, lambda r: r.kernel), columns, title=heading,
                        row_style=style)
    legend = RECORD_LEGEND.format(spills="" if spill_free else SPILLS_LEGEND)
    text = render_table(table, footnotes=notes, notes=[NEXT_LEGEND, legend], width=width)
    return machine.text(width) + "\n" + text


def to_markdown(records: Sequence[Record], machine: Machine, title: str | None = None,
                columns=COLUMNS) -> str:
    head = f"## {title}\n\n" if title else ""
    return (head + f"Machine: {machine.line()}\n\n"
            + md_table([h for h, _ in columns], [cells(r, columns) for r in records]))
