"""``vgprscope occupancy``: the occupancy calculator, from register / LDS counts typed by hand."""

from __future__ import annotations

import json
from typing import Any

import typer

from ..archs import AmdArch, NvidiaArch, get_arch
from ..errors import UsageError
from .app import app
from .common import emit, err, handles_errors
from .options import (
    AgprsOpt, LadderOpt, LdsOpt, OccFormat, OccFormatOpt, OneArchOpt, RegsOpt, SgprsOpt, SharedOpt, ThreadsOpt,
    VgprsOpt, WideOpt, WorkgroupOpt,
)


_AMD_OPTS = ("--vgprs", "--agprs", "--sgprs", "--lds", "--workgroup")
_NV_OPTS = ("--regs", "--shared", "--threads")


def _verb(names: list[str]) -> str:
    return "applies" if len(names) == 1 else "apply"


def _given(pairs: tuple[tuple[str, Any], ...]) -> list[str]:
    return [name for name, value in pairs if value is not None]


@app.command("occupancy")
@handles_errors
def occupancy_cmd(
    arch: OneArchOpt,
    vgprs: VgprsOpt = None,
    agprs: AgprsOpt = None,
    sgprs: SgprsOpt = None,
    lds: LdsOpt = None,
    workgroup: WorkgroupOpt = None,
    regs: RegsOpt = None,
    shared: SharedOpt = None,
    threads: ThreadsOpt = None,
    show_ladder: LadderOpt = False,
    fmt: OccFormatOpt = OccFormat.table,
    wide: WideOpt = False,
) -> None:
    """Occupancy of one kernel from its counts: the limit, what binds, and the next step.

    Exit 1 (the answer still printed) when the counts cannot launch on the arch: occupancy 0.
    """
    from .. import occupancy as occ

    target = get_arch(arch)
    amd_given = _given((("--vgprs", vgprs), ("--agprs", agprs), ("--sgprs", sgprs), ("--lds", lds),
                        ("--workgroup", workgroup)))
    nv_given = _given((("--regs", regs), ("--shared", shared), ("--threads", threads)))
    result: dict[str, Any] = {"arch": target.name, "vendor": target.vendor.value}
    if isinstance(target, AmdArch):
        if nv_given:
            raise UsageError(f"{', '.join(nv_given)} {_verb(nv_given)} to NVIDIA archs only; {target.name} is AMD: "
                             f"use {', '.join(_AMD_OPTS)}")
        if vgprs is None and not show_ladder:
            raise UsageError(f"--vgprs is required for {target.name} (or --ladder)")
        if vgprs is not None:
            # --vgprs is always the arch VGPRs, so 300 on a CDNA arch (256 + 256 AGPRs) is refused, not
            # read as a unified total; the total follows from rule 1
            o = occ.amd_occupancy(target, 0, sgprs, lds or 0, workgroup, agpr=agprs or 0, arch_vgpr=vgprs)
            total = occ.total_vgprs(target, vgprs, agprs or 0)
            result |= {
                "inputs": {"vgprs": vgprs, "agprs": agprs, "vgpr_total": total, "sgprs": sgprs, "lds": lds or 0,
                           "workgroup": workgroup or target.wave_size},
                "waves_per_simd": o.value, "max_waves_per_simd": target.max_waves_per_simd,
                "waves_per_cu": o.waves_per_cu,
            }
        current = None if vgprs is None else result["inputs"]["vgpr_total"]
        size = workgroup
    else:
        if amd_given:
            raise UsageError(f"{', '.join(amd_given)} {_verb(amd_given)} to AMD archs only; {target.name} is NVIDIA: "
                             f"use {', '.join(_NV_OPTS)}")
        if regs is None and not show_ladder:
            raise UsageError(f"--regs is required for {target.name} (or --ladder)")
        if regs is not None:
            o = occ.nvidia_occupancy(target, regs, shared or 0, occ.DEFAULT_THREADS if threads is None else threads)
            result |= {
                "inputs": {"regs": regs, "shared": shared or 0, "threads": occ.DEFAULT_THREADS if threads is None else threads},
                "blocks_per_sm": o.value, "warps_per_sm": o.warps_per_sm, "max_warps_per_sm": target.max_warps_per_sm,
            }
        current = regs
        size = threads
    if "inputs" in result:
        result |= {"unit": o.unit, "occupancy_pct": o.percent, "limiters": list(o.limiters), "limits": dict(o.limits),
                   "next_step": o.next_step, "headroom": o.headroom, "note": o.note}
    steps = occ.ladder(target, size) if show_ladder else None
    if steps is not None:
        result["ladder"] = [{"lo": s.lo, "hi": s.hi, "value": s.value, "percent": s.percent}
                            | ({"warps_per_sm": s.warps_per_sm} if s.warps_per_sm is not None else {})
                            for s in steps]
    if fmt is OccFormat.json:
        emit(json.dumps(result, indent=1), None)
    else:
        emit(_tables_text(target, result, steps, current, wide), None)
    if "inputs" in result and o.value == 0:  # the answer is printed; the exit code says it cannot run
        err(f"error: {o.note}")
        raise typer.Exit(1)


def _tables_text(target: AmdArch | NvidiaArch, result: dict[str, Any], steps, current: int | None,
                 wide: bool = False) -> str:
    """The result as a key / value table and the ladder, through report.formats.render_table: a value
    longer than two lines of the terminal becomes a footnote (all in line with ``wide``)."""
    from ..report.formats import Footnotes, lines_at, new_table, output_width, render_table

    parts = []
    if "inputs" in result:
        amd = isinstance(target, AmdArch)
        rows: list[tuple[str, str]] = []
        inputs = ", ".join(f"{k} {v}" for k, v in result["inputs"].items() if v is not None)
        rows.append(("input", inputs))
        if amd:
            rows.append(("occupancy", f"{result['waves_per_simd']} / {result['max_waves_per_simd']} waves/SIMD "
                         f"({result['occupancy_pct']:g} %), {result['waves_per_cu']} waves/CU"))
        else:
            rows.append(("occupancy", f"{result['blocks_per_sm']} blocks/SM, {result['warps_per_sm']} / "
                         f"{result['max_warps_per_sm']} warps/SM ({result['occupancy_pct']:g} %)"))
        rows.append(("limited by", ", ".join(result["limiters"]) or "nothing below the arch's maximum"))
        unit = result["unit"]
        rows += [(f"  {name} limit", f"{value} {unit}") for name, value in result["limits"].items()]
        rows += [("next step", result["next_step"]), ("headroom", result["headroom"])]
        if result["note"]:
            rows.append(("note", result["note"]))
        notes = Footnotes()
        room = output_width() - max(len(k) for k, _ in rows) - 2  # the value column's width
        table = new_table(f"occupancy on {target.name} ({target.description})", show_header=False)
        table.add_column("", style="bold", no_wrap=True)
        table.add_column("", overflow="fold")
        for key, value in rows:
            long = not wide and lines_at(value, room) > 2
            table.add_row(key, notes.ref(value) if long else value)
        parts.append(render_table(table, footnotes=notes, wide=wide))
    if steps is not None:
        nv = isinstance(target, NvidiaArch)
        unit = "VGPRs+AGPRs per wave" if not nv else "registers per thread"
        table = new_table(f"{target.name}: {unit} -> " + ("blocks/SM" if nv else "waves/SIMD"))
        table.add_column(unit, justify="right")
        table.add_column("blocks/SM" if nv else "waves/SIMD", justify="right")
        if nv:
            table.add_column("warps/SM", justify="right")
        table.add_column("% of max", justify="right")
        table.add_column("")
        for s in steps:
            mark = "<- here" if current is not None and s.lo <= current <= s.hi else ""
            row = [f"{s.lo}-{s.hi}" if s.lo != s.hi else str(s.lo), str(s.value)]
            if nv:
                row.append(str(s.warps_per_sm))
            table.add_row(*row, f"{s.percent:g}", mark)
        parts.append(render_table(table, wide=wide))
    return "\n".join(parts)
