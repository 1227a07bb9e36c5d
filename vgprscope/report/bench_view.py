"""The bench table for a terminal: rows grouped under their case, the default columns compact, long
statuses as footnotes; ``wide`` shows every column of ``bench.output.COLUMNS`` on every row.

It takes the columns as ``(header, cell function)`` pairs, so that a column bench adds shows up here
(in --wide; in the default view too when its header is in ``DEFAULT``) without a change to this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .formats import Column, Footnotes, build_table, new_table, render_table
from .labels import common_config
from .machine import Machine

# the columns of the default view, by header, with a shorter header where the full one would fold
DEFAULT = {"config": "config", "time (ms), median ± IQR/2": "ms ± IQR/2", "TFLOP/s": "TFLOP/s",
           "GB/s (Q,K,V,O once)": "GB/s (Q,K,V,O once)", "GB/s (model)": "GB/s (model)", "regs": "regs",
           "occupancy": "occupancy", "status": "status"}
# may take a second line (the timing last: it folds every row)
_FOLD = {"config", "regs", "occupancy", "GB/s (Q,K,V,O once)", "GB/s (model)", "time (ms), median ± IQR/2"}
_LEFT = {"config", "status", "regs", "occupancy"}


def table_text(rows: Sequence[Any], columns: Sequence[tuple[str, Callable[[Any], Any]]], machine: Machine, *,
               wide: bool = False, legend: Sequence[str] = (), width: int | None = None,
               title: str = "vgprscope bench") -> str:
    """The machine line, one table per case (the case in its title), footnotes and ``legend``.
    ``columns`` must include ``case``, ``name`` and ``status``."""
    fns = dict(columns)
    if wide:
        table = build_table(rows, [Column(h, fn) for h, fn in columns], title=title, wide=True,
                            row_style=lambda r: None if r.ok else "red", section=fns["case"])
        return machine.text(width) + "\n" + render_table(table, notes=legend, wide=True, width=width)
    notes = Footnotes()
    cases: dict[str, list[Any]] = {}
    for r in rows:
        cases.setdefault(str(fns["case"](r)), []).append(r)
    parts = [machine.text(width) + "\n"]
    for i, (case, group) in enumerate(cases.items()):
        last = i == len(cases) - 1
        more = "ms ± IQR/2: the median time and half the interquartile range; --wide adds min-max, max abs err, " \
               "spills and the driver's register count"
        parts.append(render_table(_case_table(f"{title}: {case}", group, columns, notes),
                                  footnotes=notes if last else (), notes=[more, *legend] if last else (),
                                  width=width))
    return "".join(parts)


_UNITS = {"waves/SIMD": "w/SIMD", "wave/SIMD": "w/SIMD", "blocks/SM": "blk/SM", "block/SM": "blk/SM"}


def compact_occupancy(text: str) -> str:
    """``2 blocks/SM / 6 blocks/SM`` (one part per kernel) -> ``2 / 6 blk/SM``; anything else as given."""
    parts = [p.split(" ", 1) for p in text.split(" / ")]
    if not all(len(p) == 2 and p[0].isdigit() for p in parts):
        return text
    units = {_UNITS.get(u, u) for _, u in parts}
    if len(units) != 1:
        return text
    return " / ".join(v for v, _ in parts) + f" {units.pop()}"


def _case_table(title: str, rows: Sequence[Any], columns, notes: Footnotes):
    """One case's rows: the variants' config words they all share go to the title."""
    fns = dict(columns)
    configs = [str(fns["config"](r)) for r in rows] if "config" in fns else []
    variants = [c for r, c in zip(rows, configs) if getattr(r, "kind", "variant") == "variant"]
    shared, _ = common_config(variants)
    words = set(shared.split())
    short = {id(r): " ".join(w for w in c.split() if w not in words) or "-" for r, c in zip(rows, configs)}
    shown = [(h, fn) for h, fn in columns if h in DEFAULT]
    if all(v == "-" for v in short.values()):
        shown = [(h, fn) for h, fn in shown if h != "config"]
    if all(r.ok for r in rows):
        shown = [(h, fn) for h, fn in shown if h != "status"]
    # a column with nothing to say in this case (no model bytes for anchors only, no timings yet) is left out
    shown = [(h, fn) for h, fn in shown if h in ("config", "status") or any(str(fn(r)) not in ("", "-") for r in rows)]
    cell = {"config": lambda r: short[id(r)], "occupancy": lambda r: compact_occupancy(str(fns["occupancy"](r))),
            "status": lambda r: "ok" if r.ok else f"✗ {notes.ref(str(fns['status'](r)))}"}
    table = new_table(f"{title} (every config: {shared})" if shared else title)
    table.add_column("name", overflow="fold")
    for h, _ in shown:
        table.add_column(DEFAULT[h], no_wrap=h not in _FOLD, overflow="fold", justify="left" if h in _LEFT else "right")
    for r in rows:
        table.add_row(str(fns["name"](r)), *((cell.get(h) or fn)(r) for h, fn in shown),
                      style=None if r.ok else "red")
    return table
