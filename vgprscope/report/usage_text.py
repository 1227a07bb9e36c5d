"""A usage's cells and phrases in its vendor's words: the numbers from its backend (``Backend.figures``), the
words and templates from its vendor's row (``report.vendor_words``); the occupancy calculator's tables. Nothing
here tells the vendors apart."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..backends import backend_of_usage
from .vendor_words import VendorWords, words_of

if TYPE_CHECKING:
    from ..backends import Calculation, UsageFigures
    from ..core.archs import Arch
    from ..core.occupancy.common import LadderStep
    from ..core.records import ResourceUsage


def count(n: int, noun: str) -> str:
    """'1 spill', '3 spills'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def usage_words(u: ResourceUsage) -> VendorWords:
    """The words of the vendor whose compiler produced ``u``."""
    return words_of(backend_of_usage(u).vendor)


def _parts(u: ResourceUsage) -> tuple[UsageFigures, VendorWords]:
    return backend_of_usage(u).figures(u), usage_words(u)


def _fields(f: UsageFigures) -> dict[str, Any]:
    """The named fields a spill template may use (vendor_words' docstring lists them)."""
    pair = f.spill_pair or (0, 0)
    insts, in_loop = f.spill_insts, f.spill_insts_in_loop
    return {"total": sum(pair), "stores": f.spill_stores, "loads": f.spill_loads, "insts": insts,
            "in_loop": in_loop, "loop": f", {in_loop} in loop" if in_loop else "", "spills": count(sum(pair), "spill"),
            "insts_words": count(insts, "spill instruction") if insts is not None else ""}


def _spilled(template: str, f: UsageFigures) -> str:
    return template.format(*(f.spill_pair or ()), **_fields(f))


def registers_text(u: ResourceUsage) -> str:
    """``264 (256v+8a)``: the registers occupancy sees, and its two parts where the vendor has them and the
    second is not 0; else the count alone."""
    f, w = _parts(u)
    if f.register_parts is not None and f.register_parts[1] and w.registers_parts:
        return w.registers_parts.format(f.registers, *f.register_parts)
    return str(f.registers)


def spills_text(u: ResourceUsage) -> str:
    """The compact spills cell: ``0``, ``1 (0 in loop)``, ``24+24 B``; ``?`` where unknown."""
    f, w = _parts(u)
    if f.spill_pair is None:
        return "?"
    return "0" if not sum(f.spill_pair) else _spilled(w.spills_cell, f)


def spills_full_text(u: ResourceUsage) -> str:
    """The full spills cell (--wide, markdown): ``v3 s1 (5st/7ld, 4 in loop)``, ``8B st / 12B ld``."""
    f, w = _parts(u)
    if f.spill_pair is None:
        return "unknown"
    return "0" if not sum(f.spill_pair) else _spilled(w.spills_full, f)


def _spill_words(u: ResourceUsage, templates: Callable[[VendorWords], Sequence[str]], unknown: str, none: str) -> str:
    """``unknown`` where the spill figures are unknown, ``none`` where nothing spilled, else the vendor's
    template (the first for stores only, the second with reloads too) filled in."""
    f, w = _parts(u)
    if f.spill_pair is None:
        return unknown
    if not sum(f.spill_pair):
        return none
    return _spilled(templates(w)[1 if f.spill_pair[1] else 0], f)


def spills_level_text(u: ResourceUsage) -> str:
    """A frontier level's spills cell: ``3``, ``3+1s``, ``24+24``; ``?`` where unknown."""
    return _spill_words(u, lambda w: w.spills_level, "?", "0")


def spills_next_text(u: ResourceUsage) -> str:
    """The next level's spills in compare's frontier column: ``4 (2 loop)``, ``24+24 B``, ``? B``."""
    f, w = _parts(u)
    return w.spills_next[1] if f.spill_pair is None else _spilled(w.spills_next[0], f)


def spill_price(u: ResourceUsage) -> str:
    """What a compile's spills cost: '233 spills (163 spill instructions, 124 in the loop)'; NVIDIA in bytes."""
    return _spill_words(u, lambda w: w.spills_price, "spills unknown", "no spills")


def calculator_line(arch: Arch, calc: Calculation) -> str:
    """``vgprscope occupancy``'s "occupancy" row: the calculator's answer in the arch's vendor's words."""
    if calc.occupancy is None:  # no register count given: a ladder only, no row
        return ""
    return words_of(arch.vendor).calculator_line.format(**calc.fields, percent=calc.occupancy.percent)


def calculator_tables(target: Arch, result: dict[str, Any], steps: Sequence[LadderStep] | None, calc: Calculation,
                      wide: bool = False) -> str:
    """The result as a key / value table and the ladder, through report.formats.render_table: a value
    longer than two lines of the terminal becomes a footnote (all in line with ``wide``)."""
    from .formats import Footnotes, lines_at, new_table, output_width, render_table

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
