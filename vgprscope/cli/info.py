"""``vgprscope archs`` and ``vgprscope variants``: what the tool knows, without compiling anything."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from .app import app
from .common import Format, FormatOpt, KernelDirOpt, OutputOpt, emit, handles_errors

KIB = 1024


def _arch_rows() -> list[dict[str, Any]]:
    from ..archs import ARCHS, AmdArch

    rows = []
    for a in ARCHS.values():
        if isinstance(a, AmdArch):
            rows.append({
                "arch": a.name, "vendor": a.vendor.value, "description": a.description,
                "wave": a.wave_size, "max occupancy": f"{a.max_waves_per_simd} waves/SIMD x {a.simds_per_cu} SIMDs",
                "registers": f"{a.vgprs_per_simd_lane} VGPR/lane/SIMD"
                             + (" (shared with AGPRs)" if a.unified_agprs else ""),
                "per wave/thread": f"{a.max_arch_vgprs} VGPR" + (f" + {a.max_agprs} AGPR" if a.max_agprs else ""),
                "alloc granule": f"{a.vgpr_granule} VGPR",
                "LDS/shared per CU/SM": f"{a.lds_per_cu // KIB} KiB",
                "per workgroup/block": f"{a.lds_per_workgroup // KIB} KiB",
                "LDS/shared granule": f"{a.lds_granule} B",
                "max workgroups/blocks": a.max_workgroups_per_cu,
                "compiles": "yes" if a.triton_target else "no (calculator only)",
            })
        else:
            rows.append({
                "arch": a.name, "vendor": a.vendor.value, "description": a.description,
                "wave": a.wave_size, "max occupancy": f"{a.max_warps_per_sm} warps/SM",
                "registers": f"{a.regs_per_sm} per SM ({a.reg_subpartitions} sub-partitions)",
                "per wave/thread": f"{a.max_regs_per_thread} regs",
                "alloc granule": f"{a.reg_alloc_unit} regs/warp",
                "LDS/shared per CU/SM": f"{a.shared_per_sm // KIB} KiB",
                "per workgroup/block": f"{a.max_shared_per_block // KIB} KiB (opt-in)",
                "LDS/shared granule": f"{a.shared_granule} B (+{a.shared_reserved_per_block} B reserved/block)",
                "max workgroups/blocks": a.max_blocks_per_sm,
                "compiles": "yes",
            })
    return rows


def _arch_json() -> list[dict[str, Any]]:
    from dataclasses import asdict

    from ..archs import ARCHS

    return [{"name": a.name, "vendor": a.vendor.value} | asdict(a) for a in ARCHS.values()]


def _md(rows: list[dict[str, Any]]) -> str:
    cols = list(rows[0]) if rows else []
    cell = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


def _table(rows: list[dict[str, Any]], title: str) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for c in (list(rows[0]) if rows else []):
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*(str(v) for v in r.values()))
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    console.print(table)
    return console.file.getvalue()


def _render(rows: list[dict[str, Any]], fmt: Format, title: str, as_json: Any) -> str:
    if fmt is Format.json:
        return json.dumps(as_json, indent=1)
    if fmt is Format.md:
        return _md(rows)
    if fmt is Format.csv:
        return _csv(rows)
    return _table(rows, title)


@app.command("archs")
@handles_errors
def archs_cmd(format: FormatOpt = Format.table, output: OutputOpt = None) -> None:
    """The arch table every number comes from (shared/reference/occupancy.md)."""
    emit(_render(_arch_rows(), format, "archs (one table of constants; sources in reference/occupancy.md)",
                 _arch_json()), output)


@app.command("variants")
@handles_errors
def variants_cmd(format: FormatOpt = Format.table, output: OutputOpt = None, kernel_dir: KernelDirOpt = None) -> None:
    """The attention variants: strategy, seed, what each trades, and its kernels (nothing is compiled)."""
    from .. import loader
    from ..variants import load_variants

    directory = (kernel_dir.resolve() if kernel_dir else loader.BUNDLED_DIR)
    variants = load_variants(directory)
    rows = [{"name": v.name, "strategy": v.strategy, "seed": v.seed, "trades": v.trades,
             "kernels": ", ".join(v.kernels)} for v in variants.values()]
    as_json = [{"name": v.name, "strategy": v.strategy, "seed": v.seed, "trades": v.trades,
                "kernels": list(v.kernels), "defaults": dict(v.defaults), "file": v.file.name,
                "source_hash": v.source_hash} for v in variants.values()]
    emit(_render(rows, format, f"variants ({directory})", as_json), output)
