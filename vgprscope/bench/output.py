"""Bench rows -> table, markdown, CSV, JSON (one row per measurement, stamped with GPU and versions)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..records import SCHEMA_VERSION
from ..report.formats import dicts_to_csv, md_table, render_table
from ..report.machine import Machine
from .runner import BenchRow


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


COLUMNS = [
    ("case", lambda r: r.case.label()),
    ("name", lambda r: r.name),
    ("config", lambda r: r.config),
    ("time (ms), median ± IQR/2", lambda r: r.timing.label() if r.timing else "-"),
    ("min-max (ms)", lambda r: f"{r.timing.min_ms:.3f}-{r.timing.max_ms:.3f}" if r.timing else "-"),
    ("TFLOP/s", lambda r: _f(r.tflops, ".1f")),
    ("GB/s (model)", lambda r: _f(r.gbps, ".0f")),
    ("max abs err", lambda r: _f(r.max_abs_err, ".2e")),
    ("regs", lambda r: r.regs or "-"),
    ("occupancy", lambda r: r.occupancy or "-"),
    ("spills", lambda r: r.spills or "-"),
    ("n_regs loaded/parsed", lambda r: f"{r.n_regs_loaded}/{r.n_regs_parsed}" if r.n_regs_loaded is not None else "-"),
    ("status", lambda r: r.status),
]


def cells(row: BenchRow) -> list[str]:
    return [fn(row) for _, fn in COLUMNS]


def to_table(rows: Sequence[BenchRow], machine: Machine) -> str:
    from rich.table import Table

    table = Table(title="vgprscope bench", header_style="bold")
    for h, _ in COLUMNS:
        table.add_column(h, overflow="fold")
    for r in rows:
        table.add_row(*cells(r), style=None if r.ok else "red")
    return f"{machine.line()}\n" + render_table(table)


def to_markdown(rows: Sequence[BenchRow], machine: Machine) -> str:
    return f"Machine: {machine.line()}\n\n" + md_table([h for h, _ in COLUMNS], [cells(r) for r in rows])


def to_csv(rows: Sequence[BenchRow], machine: Machine) -> str:
    return dicts_to_csv([{"gpu": machine.gpu, "driver": machine.driver, "torch": machine.torch,
                          "triton": machine.triton, "date": machine.date, "git_sha": machine.git_sha, **r.as_dict()}
                         for r in rows])


def to_json(rows: Sequence[BenchRow], machine: Machine) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": "bench",
                       "machine": machine.as_dict(), "rows": [r.as_dict() for r in rows]},
                      indent=2, default=str) + "\n"


RENDERERS = {"table": to_table, "md": to_markdown, "csv": to_csv, "json": to_json}
