"""One result model, several formats: rich table, markdown, CSV, JSON (with a schema version)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from ..records import SCHEMA_VERSION, Record
from .machine import Machine
from .rows import COLUMNS, cells, flat


def to_json(records: Sequence[Record], machine: Machine, command: str, **extra: Any) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": command,
           "machine": machine.as_dict(), "triton_version": machine.triton, **extra,
           "rows": [r.as_dict() for r in records]}
    return json.dumps(doc, indent=2, default=str) + "\n"


def to_csv(records: Sequence[Record]) -> str:
    return dicts_to_csv([flat(r) for r in records])


def dicts_to_csv(flats: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV; the header is the union of their keys in first-seen order (rows of both vendors)."""
    header: list[str] = []
    for f in flats:
        header += [k for k in f if k not in header]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=header, lineterminator="\n")
    w.writeheader()
    w.writerows(flats)
    return buf.getvalue()


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(_md_escape(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def to_markdown(records: Sequence[Record], machine: Machine, title: str | None = None,
                columns=COLUMNS) -> str:
    head = f"## {title}\n\n" if title else ""
    return (head + f"Machine: {machine.line()}\n\n"
            + md_table([h for h, _ in columns], [cells(r, columns) for r in records]))


def rich_table(records: Sequence[Record], title: str | None = None, columns=COLUMNS):
    from rich.table import Table

    table = Table(title=title, show_lines=False, header_style="bold")
    for header, _ in columns:
        table.add_column(header, overflow="fold")
    for r in records:
        style = None if r.ok else "red"
        table.add_row(*cells(r, columns), style=style)
    return table


def render_table(renderable) -> str:
    """A rich renderable as text for stdout (colour only on a terminal)."""
    import shutil
    import sys

    from rich.console import Console

    # a pipe or a CI log has no width: wide enough that rows stay one line each
    width = shutil.get_terminal_size((250, 40)).columns if sys.stdout.isatty() else 250
    console = Console(file=io.StringIO(), width=width, force_terminal=sys.stdout.isatty(), color_system="auto")
    console.print(renderable)
    return console.file.getvalue()
