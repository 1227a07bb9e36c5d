"""The register-split frontier as a terminal table and markdown: one row per setting of the knob."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .core import KernelFrontier, Level
from .split import given, toolchain_words, workers_given
from .summary import summary


def _num(x: Any) -> str:
    return "-" if x is None else str(x)


def _spills(lv: Level) -> str:
    f = lv.figures()
    if not lv.ok or f["spill_store_bytes"] is None:
        return "-"
    return "0" if not lv.spills else f"{f['spill_store_bytes']}+{f['spill_load_bytes']}"


def _scratch(lv: Level) -> str:
    return _num(lv.figures()["scratch_bytes"]) if lv.ok else "-"


def _free(lv: Level) -> str:
    return "-" if not lv.ok else "yes" if lv.spill_free else "no"


def legend(knob: str) -> str:
    return (f"{knob}: the setting compiled; default / workers: the registers per thread each warp_specialize "
            "partition is given (setmaxnreg, by Triton's AllocateWarpGroups rule, checked against the SASS; "
            "default: the kernel's own warps; workers in order); regs: the kernel-wide count ptxas reports; "
            "spill st+ld B: spill store + load bytes per thread; stack B: the stack frame; occupancy: the "
            "blocks/SM reached")


def tables_text(frontiers: Sequence[KernelFrontier], width: int, wide: bool = False) -> list[str]:
    """One table per kernel x arch x config, then its summary line."""
    from ...report.formats import Column, Footnotes, build_table, render_table, wrap

    parts = []
    for kf in frontiers:
        notes = Footnotes()

        def status(lv: Level, notes: Footnotes = notes) -> str:
            return "ok" if lv.ok else f"✗ {notes.ref(lv.record.status)}"

        cols = [
            Column(kf.knob, lambda lv: _num(lv.plan.setting), justify="right"),
            Column("default", lambda lv: _num(given(lv, "default")), justify="right"),
            Column("workers", workers_given, justify="right"),
            Column("regs", lambda lv: _num(lv.allocation), justify="right"),
            Column("spill st+ld B", _spills, justify="right"),
            Column("stack B", _scratch, justify="right"),
            Column("spill-free", _free),
            Column("occupancy", lambda lv: _num(lv.reached), justify="right"),
            Column("status", status),
        ]
        name = kf.variant if kf.kernel == kf.variant else f"{kf.variant} {kf.kernel}"
        cfg = (kf.config.short() if hasattr(kf.config, "short") else str(kf.config)) + toolchain_words(kf)
        title = f"frontier: {kf.arch} {name} ({cfg}): the register split"
        table = build_table(kf.levels, cols, title=title, wide=wide, row_style=lambda lv: None if lv.ok else "red")
        parts.append(render_table(table, footnotes=notes, notes=[legend(kf.knob)], wide=wide, width=width))
        parts.append(wrap(f"{name} {cfg}: {summary(kf)}", width, "    ") + "\n\n")
    return parts


MD_HEADERS = ["default", "workers", "regs", "spill st/ld B", "stack B", "spill-free", "occupancy", "status"]


def tables_md(frontiers: Sequence[KernelFrontier]) -> str:
    from ...report.formats import md_table

    out = []
    for kf in frontiers:
        name = kf.variant if kf.kernel == kf.variant else f"{kf.variant} {kf.kernel}"
        cfg = (kf.config.short() if hasattr(kf.config, "short") else str(kf.config)) + toolchain_words(kf)
        rows = []
        for lv in kf.levels:
            f = lv.figures()
            st_ld = "-" if f["spill_store_bytes"] is None else f"{f['spill_store_bytes']}/{f['spill_load_bytes']}"
            rows.append([_num(lv.plan.setting), _num(given(lv, "default")), workers_given(lv), _num(lv.allocation),
                         st_ld, _scratch(lv), _free(lv), _num(lv.reached), lv.record.status])
        out.append(f"\n### {kf.arch} {name} ({cfg}): the register split ({kf.knob})\n\n"
                   + md_table([kf.knob, *MD_HEADERS], rows) + f"\n- {name} ({cfg}): {summary(kf)}\n")
    return "".join(out)
