"""The compare tables: one per arch, kernel rows under a variant line, deltas against baseline."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..compare import VariantLine
from ..records import SCHEMA_VERSION
from .formats import md_table, render_table
from .machine import Machine
from .rows import fmt_lds, fmt_regs, fmt_scratch, fmt_sgpr, fmt_spills, occupancy_label


def _with(value: Any, ln: VariantLine, metric: str) -> str:
    d = dict(ln.deltas).get(metric, "x")
    return f"{value} ({d})" if d not in ("=",) else f"{value} (=)"


def _gb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e9:.2f}"


def _traffic(ln: VariantLine) -> list[str]:
    t = ln.traffic
    if t is None:
        return ["-", "-", "-", "-"]
    return [_gb(t.bytes_read), _gb(t.bytes_written), f"{t.flops / 1e9:.0f}", f"{t.intensity:.0f}"]


HEADERS = ["variant", "kernel", "config", "VGPRs / regs (Δ)", "SGPRs", "spills (Δ)", "scratch / stack B (Δ)",
           "LDS / smem B (Δ)", "occupancy (Δ)", "occ %", "limiter", "next step", "read GB", "written GB",
           "GFLOP", "FLOP/B", "status"]


def line_rows(ln: VariantLine, extra: Mapping[str, Mapping[str, str]] | None = None,
              n_extra: int = 0) -> list[list[str]]:
    """Kernel rows (multi-kernel variants only), then the variant line."""
    rows = []
    if len(ln.kernels) > 1:
        for r in ln.kernels:
            occ = r.occupancy
            rows.append([ln.variant, r.kernel, "", fmt_regs(r), fmt_sgpr(r), fmt_spills(r), fmt_scratch(r),
                         fmt_lds(r), occupancy_label(r), f"{occ.percent:.1f}" if occ else "-",
                         ",".join(occ.limiters) if occ else "-", occ.next_step if occ else "-",
                         "", "", "", "", r.status])
    single = ln.kernels[0] if len(ln.kernels) == 1 else None
    occ_label = "-" if ln.occupancy is None else f"{ln.occupancy} {ln.kernels[0].occupancy.unit}"
    rows.append([
        ln.variant, single.kernel if single else "(variant)", ln.config,
        _with(ln.regs if ln.regs is not None else "-", ln, "regs"),
        "-" if ln.sgprs is None else str(ln.sgprs),
        _with(ln.spills if ln.spills is not None else "-", ln, "spills"),
        _with(ln.scratch if ln.scratch is not None else "-", ln, "scratch"),
        _with(ln.lds if ln.lds is not None else "-", ln, "lds"),
        _with(occ_label, ln, "occupancy"),
        "-" if ln.occupancy_pct is None else f"{ln.occupancy_pct:.1f}",
        ln.limiter, single.occupancy.next_step if single and single.occupancy else "-",
        *_traffic(ln), ln.status,
    ])
    if n_extra:
        # timings belong to the whole variant: on its line, not on each of its kernels
        cols = list((extra or {}).get(ln.variant, {}).values()) or ["-"] * n_extra
        for r in rows[:-1]:
            r.extend([""] * n_extra)
        rows[-1].extend(cols)
    return rows


def tables_md(per_arch: Mapping[str, list[VariantLine]], machine: Machine, title: str = "",
              extra_headers: Sequence[str] = (), extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> str:
    out = [f"## {title}\n" if title else "", f"Machine: {machine.line()}\n"]
    for arch, lines in per_arch.items():
        rows = [row for ln in lines for row in line_rows(ln, (extra or {}).get(arch), len(extra_headers))]
        out.append(f"\n### {arch}\n\n" + md_table(HEADERS + list(extra_headers), rows))
    out.append("\nΔ against `baseline`: `+N` worse, `-N` better, `=` same, `x` not comparable.\n")
    return "".join(out)


def tables_text(per_arch: Mapping[str, list[VariantLine]], machine: Machine,
                extra_headers: Sequence[str] = (), extra=None) -> str:
    from rich.table import Table

    parts = [machine.line() + "\n"]
    for arch, lines in per_arch.items():
        table = Table(title=f"vgprscope compare: {arch}", header_style="bold")
        for h in HEADERS + list(extra_headers):
            table.add_column(h, overflow="fold")
        for ln in lines:
            for row in line_rows(ln, (extra or {}).get(arch), len(extra_headers)):
                table.add_row(*row, style=None if row[-1 - len(extra_headers)] == "ok" else "red")
        parts.append(render_table(table))
    parts.append("Δ against baseline: +N worse, -N better, = same, x not comparable\n")
    return "".join(parts)


def to_json(per_arch: Mapping[str, list[VariantLine]], machine: Machine, extra=None) -> str:
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": "compare",
                           "machine": machine.as_dict(), "archs": {}}
    for arch, lines in per_arch.items():
        doc["archs"][arch] = [{
            "variant": ln.variant, "config": ln.config, "status": ln.status, "regs": ln.regs, "sgprs": ln.sgprs,
            "spills": ln.spills, "scratch": ln.scratch, "lds": ln.lds, "occupancy": ln.occupancy,
            "occupancy_pct": ln.occupancy_pct, "limiter": ln.limiter, "deltas": dict(ln.deltas),
            "traffic": None if ln.traffic is None else {
                "bytes_read": ln.traffic.bytes_read, "bytes_written": ln.traffic.bytes_written,
                "flops": ln.traffic.flops, "intensity": ln.traffic.intensity, "formula": ln.traffic.formula},
            "kernels": [r.as_dict() for r in ln.kernels],
            **({"bench": dict(extra[arch][ln.variant])} if extra and ln.variant in extra.get(arch, {}) else {}),
        } for ln in lines]
    return json.dumps(doc, indent=2, default=str) + "\n"


def to_csv(per_arch: Mapping[str, list[VariantLine]]) -> str:
    from .formats import to_csv as records_csv

    return records_csv([r for lines in per_arch.values() for ln in lines for r in ln.kernels])
