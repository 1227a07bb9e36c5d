"""``vgprscope explain`` output: per kernel, the tensors live across each loop with their registers per lane,
the loop's sum against the allocation and seed 001's estimate, and the spill sites by source line.
Table (fits 100 columns: long chains go to lines under the table), markdown and JSON (every field)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..explain import KernelExplanation, LiveTensor, LoopLiveState, seed_row
from .machine import Machine

SCHEMA_VERSION = 1
SHOWN_ROLES = ("carried", "live-in", "index", "mask", "memory")
TEXT_WIDTH = 100  # the lines under the tables read in a 100-column terminal


def chain(location: Sequence[str]) -> str:
    return " <- ".join(location) if location else "?"


def _shape(t: LiveTensor) -> str:
    return "x".join(map(str, t.shape))


def _regs(t: LiveTensor) -> str:
    if t.role == "memory":
        return "0"
    if not t.counted:
        return "-"
    return "?" if t.registers is None else str(t.registers)


def _counted(t: LiveTensor) -> str:
    """In the loop's sum, in the index-vector sum beside it, or in neither."""
    if not t.counted:
        return "no"
    return "index sum" if t.role == "index" else "yes"


def _seed_cell(t: LiveTensor, seed: dict[str, int] | None) -> str:
    row = seed_row(t.name) if t.role != "index" else None
    if seed is None or row is None or row not in seed:
        return ""
    return f"{seed[row]} ({row})" if row == "m_l" else str(seed[row])


def allocation_text(e: KernelExplanation) -> str:
    a = e.allocation
    if a is None:
        return "?"
    if a.arch_vgpr is not None:
        return f"{a.registers} VGPRs ({a.arch_vgpr} arch + {a.agpr} AGPR)"
    return f"{a.registers} registers"


def loop_summary(e: KernelExplanation, lp: LoopLiveState) -> str:
    """``carried 66 + live-in 32 = 98 of 256 allocated; remainder 158: ...; index vectors take 24 more ...``"""
    text = f"carried {lp.carried} + live-in {lp.live_in} = {lp.total}"
    if e.allocation is not None:
        rest = e.allocation.registers - lp.total
        text += (f" of {e.allocation.registers} allocated; remainder {rest}: temporaries (the score tile, "
                 "K/V operands), addresses, pipeline buffers")
    if lp.index_vectors:
        text += f"; index vectors take {lp.index_vectors} more if held whole (the compiler may recompute them)"
    return text


def seed_summary(e: KernelExplanation) -> str | None:
    s = e.seed
    if not s:
        return None
    parts = " + ".join(f"{k} {v}" for k, v in s.items() if k not in ("total", "threads"))
    return (f"seed 001 estimate ({s['threads']} threads share each tile): {parts} = {s['total']} "
            "(s, the score tile, is a temporary inside the loop)")


def spill_summary(e: KernelExplanation) -> str:
    a = e.allocation
    if a is None:
        return ""
    if not (a.spill_stores or a.spill_reloads):
        return "no spills"
    inside = sum(s.stores + s.reloads for s in e.spills if s.in_loop)
    return (f"spills: {a.spill_stores} stores, {a.spill_reloads} reloads ({inside} inside a loop) at "
            f"{len(e.spills)} source sites")


def _header(e: KernelExplanation) -> str:
    head = f"{e.label} / {e.kernel} on {e.arch}"
    if e.config:
        head += f", {e.config}"
    if e.ok:
        head += f": {e.num_warps} warps x {e.lanes} lanes, {allocation_text(e)}"
    return head


def to_table(explanations: Sequence[KernelExplanation], machine: Machine, *, spill_limit: int = 12) -> str:
    from rich.table import Table

    from . import formats

    out = [machine.line(), ""]
    for e in explanations:
        out.append(_wrap(_header(e), ""))
        if not e.ok:
            out += [f"  error: {e.error}", ""]
            continue
        for lp in e.loops:
            out.append(_wrap(f"loop {lp.index + 1}: {chain(lp.location)}", "  "))
            table = Table(show_lines=False, header_style="bold", pad_edge=False, box=None)
            for header, justify in (("tensor", "left"), ("role", "left"), ("shape", "right"), ("dtype", "left"),
                                    ("layout", "left"), ("elems", "right"), ("regs", "right"),
                                    ("seed 001", "right")):
                table.add_column(header, justify=justify, no_wrap=header != "layout")
            for t in lp.tensors:
                if t.role not in SHOWN_ROLES:
                    continue
                elems = "" if t.elements is None or t.role == "memory" else str(t.elements)
                table.add_row(t.name, t.role, _shape(t), t.dtype, t.layout, elems, _regs(t), _seed_cell(t, e.seed))
            out.append(formats.render_table(table).rstrip("\n"))
            uniform = [t.name for t in lp.tensors if t.role == "uniform"]
            if uniform:
                names = ", ".join(dict.fromkeys(uniform))
                out.append(_wrap(f"not counted: {len(uniform)} uniform splats/constants ({names})", "    "))
            out.append(_wrap(loop_summary(e, lp), "    "))
        if not e.loops:
            out.append("  no loops in the TTGIR")
        if (seed := seed_summary(e)) is not None:
            out.append(_wrap(seed, "  "))
        out.append(f"  {spill_summary(e)}")
        if e.spills:
            table = Table(show_lines=False, header_style="bold", pad_edge=False, box=None)
            for header in ("stores", "reloads", "where", "source line <- inlined at"):
                table.add_column(header, justify="right" if header in ("stores", "reloads") else "left",
                                 no_wrap=header != "source line <- inlined at")
            for s in e.spills[:spill_limit]:
                table.add_row(str(s.stores), str(s.reloads), "in loop" if s.in_loop else "outside", chain(s.location))
            out.append(formats.render_table(table).rstrip("\n"))
            if len(e.spills) > spill_limit:
                out.append(f"    ... {len(e.spills) - spill_limit} more sites (--format md or json lists all)")
        out += [f"  note: {n}" for n in e.notes]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _wrap(text: str, pad: str, width: int = TEXT_WIDTH) -> str:
    import textwrap

    return textwrap.fill(text, width=width, initial_indent=pad, subsequent_indent=pad + "  ")


def to_markdown(explanations: Sequence[KernelExplanation], machine: Machine, title: str | None = None,
                command: str | None = None) -> str:
    from .formats import md_table

    out = []
    if title:
        out += [f"## {title}", ""]
    out += [f"Machine: {machine.line()}", ""]
    if command:
        out += [f"Reproduce: `{command}`", ""]
    for e in explanations:
        out += [f"### {_header(e)}", ""]
        if not e.ok:
            out += [f"Error: {e.error}", ""]
            continue
        for lp in e.loops:
            out += [f"Loop {lp.index + 1} at `{chain(lp.location)}`", ""]
            rows = [[t.name, f"`{t.ssa}`", t.role, _shape(t), t.dtype, t.layout,
                     "" if t.elements is None or t.role == "memory" else t.elements, _regs(t),
                     _counted(t), _seed_cell(t, e.seed)] for t in lp.tensors]
            out.append(md_table(["tensor", "IR value", "role", "shape", "dtype", "layout", "elements / lane",
                                 "registers / lane", "counted", "seed 001"], rows))
            out += [f"Sum: {loop_summary(e, lp)}.", ""]
        if (seed := seed_summary(e)) is not None:
            out += [f"{seed[0].upper()}{seed[1:]}.", ""]
        out += [f"{spill_summary(e).capitalize()}.", ""]
        if e.spills:
            out.append(md_table(["stores", "reloads", "where", "source line <- inlined at"],
                                [[s.stores, s.reloads, "in loop" if s.in_loop else "outside",
                                  f"`{chain(s.location)}`"] for s in e.spills]))
        out += [f"Note: {n}" for n in e.notes]
    return "\n".join(out).rstrip("\n") + "\n"


def to_json(explanations: Sequence[KernelExplanation], machine: Machine, command: str) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": command,
           "machine": machine.as_dict(), "kernels": [e.as_dict() for e in explanations]}
    return json.dumps(doc, indent=2) + "\n"
