"""``vgprscope occupancy``: the occupancy calculator, from register / LDS counts typed by hand."""

from __future__ import annotations

import json
from typing import Any

import typer

from ..core.archs import Arch, get_arch
from ..core.errors import UsageError
from .common import emit, err, handles_errors
from .options import (
    AgprsOpt, LadderOpt, LdsOpt, OccFormat, OccFormatOpt, OneArchOpt, RegsOpt, SgprsOpt, SharedOpt, ThreadsOpt,
    VgprsOpt, WideOpt, WorkgroupOpt,
)
from .exit_codes import FAILURE


def _verb(names: list[str]) -> str:
    return "applies" if len(names) == 1 else "apply"


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
    from ..backends import BACKENDS, backend_of

    target = get_arch(arch)
    backend = backend_of(target)
    values = {"--vgprs": vgprs, "--agprs": agprs, "--sgprs": sgprs, "--lds": lds, "--workgroup": workgroup,
              "--regs": regs, "--shared": shared, "--threads": threads}
    # options of another vendor are refused, named with that vendor's own
    for other in BACKENDS:
        given = [o for o in other.facts.calculator_options if values.get(o) is not None]
        if other is not backend and given:
            raise UsageError(f"{', '.join(given)} {_verb(given)} to {other.vendor.name} archs only; {target.name} is "
                             f"{backend.vendor.name}: use {', '.join(backend.facts.calculator_options)}")
    calc = backend.calculate(target, values, show_ladder)
    o = calc.occupancy
    result: dict[str, Any] = {"arch": target.name, "vendor": target.vendor.value} | calc.fields
    if o is not None:
        result |= {"unit": o.unit, "occupancy_pct": o.percent, "limiters": list(o.limiters), "limits": dict(o.limits),
                   "next_step": o.next_step, "headroom": o.headroom, "note": o.note}
    steps = backend.ladder(target, calc.size) if show_ladder else None
    if steps is not None:
        result["ladder"] = [{"lo": s.lo, "hi": s.hi, "value": s.value, "percent": s.percent}
                            | ({"warps_per_sm": s.warps_per_sm} if s.warps_per_sm is not None else {})
                            for s in steps]
    if fmt is OccFormat.json:
        emit(json.dumps(result, indent=1), None)
    else:
        emit(_tables_text(target, result, steps, calc, wide), None)
    if o is not None and o.value == 0:  # the answer is printed; the exit code says it cannot run
        err(f"error: {o.note}")
        raise typer.Exit(FAILURE)


def _tables_text(target: Arch, result: dict[str, Any], steps, calc, wide: bool = False) -> str:
    """The result as a key / value table and the ladder, through report.formats.render_table: a value
    longer than two lines of the terminal becomes a footnote (all in line with ``wide``)."""
    from ..report.formats import Footnotes, lines_at, new_table, output_width, render_table
    from ..report.usage_text import calculator_line
    from ..report.vendor_words import words_of

    parts = []
    if "inputs" in result:
        rows: list[tuple[str, str]] = []
        inputs = ", ".join(f"{k} {v}" for k, v in result["inputs"].items() if v is not None)
        rows.append(("input", inputs))
        rows.append(("occupancy", calculator_line(target, calc)))
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
        vw = words_of(target.vendor)
        words, current = vw.ladder_words, calc.current
        warps = any(s.warps_per_sm is not None for s in steps)  # NVIDIA's ladder gives warps/SM beside blocks
        table = new_table(f"{target.name}: {words} -> {vw.unit}")
        table.add_column(words, justify="right")
        table.add_column(vw.unit, justify="right")
        if warps:
            table.add_column("warps/SM", justify="right")
        table.add_column("% of max", justify="right")
        table.add_column("")
        for s in steps:
            mark = "<- here" if current is not None and s.lo <= current <= s.hi else ""
            row = [f"{s.lo}-{s.hi}" if s.lo != s.hi else str(s.lo), str(s.value)]
            if warps:
                row.append(str(s.warps_per_sm))
            table.add_row(*row, f"{s.percent:g}", mark)
        parts.append(render_table(table, wide=wide))
    return "\n".join(parts)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command("occupancy")(occupancy_cmd)
