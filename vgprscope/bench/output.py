"""Bench rows -> table, markdown, CSV, JSON (one row per measurement, stamped with GPU and versions)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..core.records import SCHEMA_VERSION
from ..report.formats import dicts_to_csv, md_table
from ..report.machine import Machine
from .runner import BenchRow


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _gbps(x: float | None, row: BenchRow) -> str:
    """GB/s, marked * where it is above the GPU's measured copy bandwidth (see bandwidth_note)."""
    if x is None:
        return "-"
    return f"{x:.0f}*" if row.copy_gbps and x > row.copy_gbps else f"{x:.0f}"


def bandwidth_note(rows: Sequence[BenchRow]) -> str:
    """What the two GB/s columns count, and the footnote of any figure above the GPU's copy bandwidth."""
    copy = next((r.copy_gbps for r in rows if r.copy_gbps), None)
    text = ("GB/s (Q,K,V,O once): the least bytes any kernel moves from and to DRAM (Q, K, V read once, O "
            "written once) over the median time. GB/s (model): the traffic model's bytes (every load and store "
            "the kernels issue, re-reads included, no cache model) over the same time.")
    if copy and any(_gbps(r.gbps, r).endswith("*") or _gbps(r.gbps_min, r).endswith("*") for r in rows):
        text += (f" * above this GPU's device-to-device copy bandwidth measured in this run ({copy:.0f} GB/s, "
                 "read + written): those bytes cannot all have come from DRAM; the rest was served by the L2.")
    return text


def timing_note(rows: Sequence[BenchRow]) -> str:
    """How the times were taken, where any is a CUDA graph replay (``bench --cuda-graph``)."""
    modes = {r.timing.mode for r in rows if r.timing}
    if "graph" not in modes:
        return ""
    return ("Times are CUDA graph replays (--cuda-graph): one graph captured per input set and replayed with the "
            "L2 flushed before each, the GPU's own time without the host's launch cost, as a serving engine runs "
            "decode." + (" Some rows are eager calls: compare like with like." if "eager" in modes else ""))


COLUMNS = [
    ("case", lambda r: r.case.label()),
    ("name", lambda r: r.name),
    ("config", lambda r: r.config),
    ("time (ms), median ± IQR/2", lambda r: r.timing.label() if r.timing else "-"),
    ("min-max (ms)", lambda r: f"{r.timing.min_ms:.3f}-{r.timing.max_ms:.3f}" if r.timing else "-"),
    ("TFLOP/s", lambda r: _f(r.tflops, ".1f")),
    ("GB/s (Q,K,V,O once)", lambda r: _gbps(r.gbps_min, r)),
    ("GB/s (model)", lambda r: _gbps(r.gbps, r)),
    ("max abs err", lambda r: _f(r.max_abs_err, ".2e")),
    ("regs", lambda r: r.regs or "-"),
    ("occupancy", lambda r: r.occupancy or "-"),
    ("spills", lambda r: r.spills or "-"),
    ("n_regs loaded/parsed", lambda r: f"{r.n_regs_loaded}/{r.n_regs_parsed}" if r.n_regs_loaded is not None else "-"),
    ("status", lambda r: r.status),
]


def cells(row: BenchRow) -> list[str]:
    return [fn(row) for _, fn in COLUMNS]


def to_table(rows: Sequence[BenchRow], machine: Machine, wide: bool = False) -> str:
    """Grouped by case, compact unless ``wide`` (report/bench_view.py)."""
    from ..report.bench_view import table_text

    return table_text(rows, COLUMNS, machine, wide=wide, legend=[n for n in (bandwidth_note(rows), timing_note(rows)) if n])


def to_markdown(rows: Sequence[BenchRow], machine: Machine) -> str:
    return (f"Machine: {machine.line()}\n\n" + md_table([h for h, _ in COLUMNS], [cells(r) for r in rows])
            + f"\n{bandwidth_note(rows)}\n" + (f"\n{timing_note(rows)}\n" if timing_note(rows) else ""))


def to_csv(rows: Sequence[BenchRow], machine: Machine) -> str:
    return dicts_to_csv([{"gpu": machine.gpu, "driver": machine.driver, "torch": machine.torch,
                          "triton": machine.triton, "date": machine.date, "git_sha": machine.git_sha, **r.as_dict()}
                         for r in rows])


def to_json(rows: Sequence[BenchRow], machine: Machine) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": "bench",
                       "machine": machine.as_dict(), "rows": [r.as_dict() for r in rows]},
                      indent=2, default=str) + "\n"


RENDERERS = {"table": to_table, "md": to_markdown, "csv": to_csv, "json": to_json}
