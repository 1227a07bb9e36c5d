"""``vgprscope explain`` output: per kernel, the tensors live across each loop with their registers per lane,
the loop's sum against the allocation (and a model's estimate, where the kernel's source gives one), the
shared-memory buffers the loop uses (in bytes, apart from the registers), and the spill sites by source line.
Table (fits the terminal: long chains go to lines under the tables; ``wide``: full layouts, IR values),
markdown and JSON (every field)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...core.parse.diagnostics import short_llvm, short_ptxas
from ...core.parse.loops import LoopMix
from ...report.machine import Machine
from .core import REMAINDER, Estimate, KernelExplanation, LiveTensor, LoopLiveState

# 2: a kernel's model estimate is ``estimate`` ({"name", "registers_per_lane"}), whatever model its source
# gives (1 had the bundled variants' ``seed_001_estimate``)
SCHEMA_VERSION = 2
REGISTER_ROLES = ("carried", "live-in", "mask")  # the data tensors' table; index vectors follow under their title
INDEX_TITLE = ("index vectors (integer offsets, named for the value computed on their line; summed apart: "
               "the compiler may recompute them)")


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


def tensor_name(t: LiveTensor) -> str:
    """``acc``; an index vector is named as one, after the value its line computes (``index for q``), so
    that it never reads as that value itself."""
    return f"index for {t.name}" if t.role == "index" else t.name


def _counted(t: LiveTensor) -> str:
    """In the loop's sum, in the index-vector sum beside it, or in neither."""
    if not t.counted:
        return "no"
    return "index sum" if t.role == "index" else "yes"


def _estimate_cell(t: LiveTensor, est: Estimate | None) -> str:
    """The model's registers for the row a tensor falls under, the row named where it is not the tensor's
    own name (``1 (m_l)`` for ``m_i``)."""
    row = est.row(t.name) if est is not None and t.role != "index" else None
    value = est.value(row) if est is not None and row is not None else None
    if value is None:
        return ""
    return str(value) if row == t.name else f"{value} ({row})"


def _bytes(t: LiveTensor) -> str:
    if t.buffer == "allocation":
        return "?" if t.bytes is None else str(t.bytes)
    return "-"


def _buffer(t: LiveTensor) -> str:
    return {"allocation": "buffer", "view": "view into a buffer",
            "carried view": "view, carried (pipeline stage)"}.get(t.buffer or "", t.buffer or "")


def allocation_text(e: KernelExplanation) -> str:
    a = e.allocation
    if a is None:
        return "?"
    if a.arch_vgpr is not None:
        return f"{a.registers} VGPRs ({a.arch_vgpr} arch + {a.agpr} AGPR)"
    return f"{a.registers} registers"


def _remainder_words(e: KernelExplanation) -> str:
    return e.estimate.remainder if e.estimate is not None else REMAINDER


def loop_summary(e: KernelExplanation, lp: LoopLiveState) -> str:
    """``carried 66 + live-in 32 = 98 of 256 allocated; remainder 158: ...; index vectors take 24 more ...``"""
    text = f"carried {lp.carried} + live-in {lp.live_in} = {lp.total}"
    if e.allocation is not None:
        rest = e.allocation.registers - lp.total
        if rest >= 0:
            text += f" of {e.allocation.registers} allocated; remainder {rest}: {_remainder_words(e)}"
        else:
            text += (f", {-rest} more than the {e.allocation.registers} allocated: the compiler holds some of these "
                     "tensors in fewer registers than their layout spreads them over (a pointer tensor as one "
                     "address per contiguous vector, for example)")
    if lp.index_vectors:
        text += f"; index vectors take {lp.index_vectors} more if held whole (the compiler may recompute them)"
    return text


def memory_summary(e: KernelExplanation, lp: LoopLiveState) -> str | None:
    """``shared memory (bytes, not registers): 2 buffers, 16384 B, of the kernel's 16384 B; 4 views carried``"""
    mem = [t for t in lp.tensors if t.role == "memory"]
    if not mem:
        return None
    kinds = " / ".join(dict.fromkeys(t.memory for t in mem))
    buffers = [t for t in mem if t.buffer == "allocation"]
    views = [t for t in mem if t.buffer != "allocation"]
    parts = [f"{len(buffers)} buffer{'s' * (len(buffers) != 1)}, {lp.memory_bytes} B"] if buffers else []
    if e.shared_bytes is not None:
        parts.append(f"the kernel's {e.shared_bytes} B in all")
    if views:
        carried = sum(t.buffer == "carried view" for t in views)
        parts.append(f"{len(views)} view{'s' * (len(views) != 1)} into buffers"
                     + (f" ({carried} carried by the loop: the software pipeline's stages)" if carried else ""))
    return f"{kinds} memory (bytes, not registers): {'; '.join(parts)}"


def estimate_summary(e: KernelExplanation) -> str | None:
    return e.estimate.summary if e.estimate is not None and e.estimate.summary else None


def partition_summary(e: KernelExplanation) -> str | None:
    """A warp-specialized kernel's partitions: the warps and the registers each is given (worker_num_regs);
    the compiler's register count is the whole kernel's, no partition's own."""
    if not e.partitions:
        return None
    parts = [f"{p.name} {p.num_warps} warps"
             + (f", {p.requested_registers} registers (worker_num_regs)" if p.requested_registers else "")
             for p in e.partitions]
    given = [f"{p.name} {p.given_registers}" for p in e.partitions if p.given_registers is not None]
    return (f"warp_specialize: {'; '.join(parts)}; the compiler reports registers for the whole kernel, not per "
            f"partition" + (f"; setmaxnreg in the machine code gives {', '.join(given)} registers per thread"
                            if given else ""))


def spill_summary(e: KernelExplanation) -> str:
    a = e.allocation
    if a is None:
        return ""
    if not (a.spill_stores or a.spill_reloads):
        return "no spills"
    inside = sum(s.stores + s.reloads for s in e.spills if s.in_loop)
    return (f"spill instructions: {a.spill_stores} stores, {a.spill_reloads} reloads ({inside} inside a loop) at "
            f"{len(e.spills)} source sites")


def compiler_lines(e: KernelExplanation) -> list[str]:
    """Which compilers built the kernel and what they said: ``compiler: ptxas 13.4.59, LLVM 24.0.0git
    b010a18d2b64; it said:`` and one line per diagnostic (``ptxas C7512 info: Potential Performance Loss ...``)."""
    tools = ([f"ptxas {short_ptxas(e.ptxas_version)}"] if e.ptxas_version else []) + \
        ([f"LLVM {short_llvm(e.llvm_version)}"] if e.llvm_version else [])
    head = f"compiler: {', '.join(tools)}" if tools else "compiler"
    said = f"; it said ({len(e.diagnostics)}):" if e.diagnostics else "; no warnings"
    if not tools and not e.diagnostics:
        return []
    return [head + said, *(d.text() for d in e.diagnostics)]


def _header(e: KernelExplanation) -> str:
    head = f"{e.label} / {e.kernel} on {e.arch}"
    if e.config:
        head += f", {e.config}"
    if e.ok:
        head += f": {e.num_warps} warps x {e.lanes} lanes, {allocation_text(e)}"
    return head


def _register_table(e: KernelExplanation, lp: LoopLiveState, wide: bool):
    """The loop's tensors in registers: data first, then the index vectors under a title of their own."""
    from ...report.formats import add_title, new_table

    table = new_table()
    heads = [("tensor", "left"), *([("IR value", "left")] if wide else []), ("role", "left"), ("shape", "right"),
             ("dtype", "left"), ("layout", "left"), ("elems", "right"), ("regs", "right"),
             *([(e.estimate.name, "right")] if e.estimate else [])]
    for header, justify in heads:
        table.add_column(header, justify=justify, no_wrap=wide or header != "layout")

    def row(t: LiveTensor) -> None:
        elems = "" if t.elements is None else str(t.elements)
        table.add_row(tensor_name(t), *([t.ssa] if wide else []), t.role, _shape(t), t.dtype,
                      t.layout_full if wide else t.layout, elems, _regs(t),
                      *([_estimate_cell(t, e.estimate)] if e.estimate else []))

    data = [t for t in lp.tensors if t.role in REGISTER_ROLES]
    index = [t for t in lp.tensors if t.role == "index"]
    for t in data:
        row(t)
    if index:
        add_title(table, INDEX_TITLE, None)
        for t in index:
            row(t)
    return table if data or index else None


def _memory_table(lp: LoopLiveState, wide: bool):
    from ...report.formats import new_table

    # the buffers first, then the views into them
    mem = sorted((t for t in lp.tensors if t.role == "memory"), key=lambda t: t.buffer != "allocation")
    if not mem:
        return None
    table = new_table()
    for header, justify in (("buffer", "left"), *([("IR value", "left")] if wide else []), ("what", "left"),
                            ("shape", "right"), ("dtype", "left"), ("layout", "left"), ("bytes", "right")):
        table.add_column(header, justify=justify, no_wrap=wide or header not in ("layout", "what"))
    for t in mem:
        table.add_row(t.name, *([t.ssa] if wide else []), _buffer(t), _shape(t), t.dtype,
                      t.layout_full if wide else t.layout, _bytes(t))
    return table


def to_table(explanations: Sequence[KernelExplanation], machine: Machine, *, spill_limit: int = 12,
             wide: bool = False, width: int | None = None) -> str:
    from rich.table import Table

    from ...report import formats

    width = width or formats.output_width()

    def wrap(text: str, pad: str) -> str:
        return _wrap(text, pad, width)

    def render(table) -> str:
        return formats.render_table(table, wide=wide, width=width).rstrip("\n")

    out = [machine.text(width), ""]
    for e in explanations:
        out.append(wrap(_header(e), ""))
        said = compiler_lines(e)
        if not e.ok:  # what else the compiler said than the error itself
            out += [wrap(f"error: {e.error}", "  "), *(wrap(ln, "    ") for ln in said[1:] if ln != e.error), ""]
            continue
        out += [wrap(said[0], "  "), *(wrap(f"  {ln}", "      ") for ln in said[1:])] if said else []
        for lp in e.loops:
            out.append(wrap(f"loop {lp.index + 1}: {chain(lp.location)}", "  "))
            if (table := _register_table(e, lp, wide)) is not None:
                out.append(render(table))
            uniform = [t.name for t in lp.tensors if t.role == "uniform"]
            if uniform:
                names = ", ".join(dict.fromkeys(uniform))
                out.append(wrap(f"not counted: {len(uniform)} uniform splats/constants ({names})", "    "))
            out.append(wrap(loop_summary(e, lp), "    "))
            if (mem := memory_summary(e, lp)) is not None:
                out.append(wrap(mem, "    "))
                out.append(render(_memory_table(lp, wide)))
        if not e.loops:
            out.append("  no loops in the TTGIR")
        if (parts := partition_summary(e)) is not None:
            out.append(wrap(parts, "  "))
        if (summary := estimate_summary(e)) is not None:
            out.append(wrap(summary, "  "))
        out.append(f"  {spill_summary(e)}")
        if e.spills:
            table = Table(show_lines=False, header_style="bold", pad_edge=False, box=None)
            for header in ("stores", "reloads", "where", "source line <- inlined at"):
                table.add_column(header, justify="right" if header in ("stores", "reloads") else "left",
                                 no_wrap=header != "source line <- inlined at")
            for s in e.spills[:spill_limit]:
                table.add_row(str(s.stores), str(s.reloads), "in loop" if s.in_loop else "outside", chain(s.location))
            out.append(render(table))
            if len(e.spills) > spill_limit:
                out.append(f"    ... {len(e.spills) - spill_limit} more sites (--format md or json lists all)")
        if e.mixes:
            out.append(wrap(mix_summary(e), "  "))
            out.append(render(_mix_table(e, wide)))
        out += [f"  note: {n}" for n in e.notes]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---- each machine-code loop's one-trip instruction mix -----------------------------------------------------

# the default view fits 100 columns; --wide adds the rest
MIX_HEADERS = ("loop", "insts", "matrix", "global", "LDS", "spill", "waits", "bar", "acc", "lines")
MIX_WIDE = ("nop cyc", "cvt", "matrix ops")


def _lane_word(arch: str) -> str:
    from ...core.archs import ARCHS
    from ...report.vendor_words import words_of

    return words_of(ARCHS[arch].vendor).lane_word if arch in ARCHS else "lane"


def mix_summary(e: KernelExplanation) -> str:
    hot = next((m for m in e.mixes if m.hot), None)
    unit = _lane_word(e.arch)
    head = (f"machine-code loops: {len(e.mixes)}, one trip each (global / LDS / spill: bytes loaded/stored per "
            f"{unit}; acc: AGPR<->VGPR copies)")
    if hot is None:
        return head + "; none holds a matrix instruction"
    spill = (f", {hot.spill_bytes} B of spill traffic per trip" if hot.spill_bytes else ", no spill traffic")
    return (f"{head}; hot loop {hot.name}: {hot.count('matrix')} matrix of {hot.instructions} instructions "
            f"({hot.matrix_share:.0%}){spill}")


def _pair(m: LoopMix, kind: str) -> str:
    return f"{m.moved(kind + '_load')}/{m.moved(kind + '_store')}"


def mix_cells(m: LoopMix, wide: bool = True) -> list[str]:
    name = ("* " if m.hot else "") + ("  " * (m.depth - 1)) + m.name
    cells = [name, str(m.instructions), f"{m.count('matrix')} ({m.matrix_share:.0%})", _pair(m, "global"),
             _pair(m, "lds"), _pair(m, "scratch"), str(m.count("wait")), str(m.count("barrier")),
             str(m.count("acc_copy")), ", ".join(m.lines) or "-"]
    if wide:
        cells += [str(m.nop_cycles), str(m.count("convert")), ", ".join(f"{op} x{n}" for op, n in m.matrix_ops)]
    return cells


def _mix_table(e: KernelExplanation, wide: bool):
    from rich.table import Table

    table = Table(show_lines=False, header_style="bold", pad_edge=False, box=None)
    for h in (*MIX_HEADERS, *(MIX_WIDE if wide else ())):
        table.add_column(h, justify="left" if h in ("loop", "lines", "matrix ops") else "right", no_wrap=True)
    for m in e.mixes:
        table.add_row(*mix_cells(m, wide))
    return table


def _wrap(text: str, pad: str, width: int = 100) -> str:
    import textwrap

    return textwrap.fill(text, width=width, initial_indent=pad, subsequent_indent=pad + "  ",
                         break_long_words=False, break_on_hyphens=False)


def to_markdown(explanations: Sequence[KernelExplanation], machine: Machine, title: str | None = None,
                command: str | None = None) -> str:
    from ...report.formats import md_table

    out = []
    if title:
        out += [f"## {title}", ""]
    out += [machine.md(), ""]
    if command:
        out += [f"Reproduce: `{command}`", ""]
    for e in explanations:
        out += [f"### {_header(e)}", ""]
        if not e.ok:
            out += [f"Error: {e.error}", ""]
            more = [d.text() for d in e.diagnostics if d.text() != e.error]
            out += [f"- {t}" for t in more] + ([""] if more else [])
            continue
        if (said := compiler_lines(e)):
            out += [f"{said[0][0].upper()}{said[0][1:]}", ""]
            out += [f"- {ln}" for ln in said[1:]] + ([""] if said[1:] else [])
        for lp in e.loops:
            out += [f"Loop {lp.index + 1} at `{chain(lp.location)}`", ""]
            regs = [t for t in lp.tensors if t.role != "memory"]
            rows = [[tensor_name(t), f"`{t.ssa}`", t.role, _shape(t), t.dtype, t.layout,
                     "" if t.elements is None else t.elements, _regs(t), _counted(t),
                     *([_estimate_cell(t, e.estimate)] if e.estimate else [])] for t in regs]
            out.append(md_table(["tensor", "IR value", "role", "shape", "dtype", "layout", "elements / lane",
                                 "registers / lane", "counted", *([e.estimate.name] if e.estimate else [])], rows))
            out += [f"Sum: {loop_summary(e, lp)}.", ""]
            if (mem := memory_summary(e, lp)) is not None:
                out += [f"{mem[0].upper()}{mem[1:]}.", ""]
                out.append(md_table(["buffer", "IR value", "what", "shape", "dtype", "layout", "bytes"],
                                    [[t.name, f"`{t.ssa}`", _buffer(t), _shape(t), t.dtype, t.layout, _bytes(t)]
                                     for t in lp.tensors if t.role == "memory" and t.buffer == "allocation"]
                                    + [[t.name, f"`{t.ssa}`", _buffer(t), _shape(t), t.dtype, t.layout, _bytes(t)]
                                       for t in lp.tensors if t.role == "memory" and t.buffer != "allocation"]))
        if (parts := partition_summary(e)) is not None:
            out += [f"{parts}.", ""]
        if (summary := estimate_summary(e)) is not None:
            out += [f"{summary[0].upper()}{summary[1:]}.", ""]
        out += [f"{spill_summary(e).capitalize()}.", ""]
        if e.spills:
            out.append(md_table(["stores", "reloads", "where", "source line <- inlined at"],
                                [[s.stores, s.reloads, "in loop" if s.in_loop else "outside",
                                  f"`{chain(s.location)}`"] for s in e.spills]))
        if e.mixes:
            out += [f"{mix_summary(e)[0].upper()}{mix_summary(e)[1:]} (* the hot loop).", ""]
            out.append(md_table([*MIX_HEADERS, *MIX_WIDE], [mix_cells(m) for m in e.mixes]))
        out += [f"Note: {n}" for n in e.notes]
    return "\n".join(out).rstrip("\n") + "\n"


def to_json(explanations: Sequence[KernelExplanation], machine: Machine, command: str) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": command,
           "machine": machine.as_dict(), "kernels": [e.as_dict() for e in explanations]}
    return json.dumps(doc, indent=2) + "\n"


# ---- rows (the library's DataFrames) -----------------------------------------------------------------------

EXPLAIN_ROWS = ("kernels", "tensors", "spills", "mix")
_HEAD = ("label", "kernel", "arch", "config")
LOOP_MIX_COLUMNS = ("loop", "depth", "parent", "hot", "instructions", "matrix_share", "matrix", "global_load",
                    "global_store", "lds_load", "lds_store", "scratch_load", "scratch_store", "wait", "barrier",
                    "nop", "acc_copy", "convert", "other", "global_load_bytes", "global_store_bytes",
                    "lds_load_bytes", "lds_store_bytes", "scratch_load_bytes", "scratch_store_bytes",
                    "spill_bytes", "nop_cycles", "matrix_ops", "lines")
# each kind of rows' columns that every explanation has (a kernel's loops and estimate add theirs): the
# columns of a frame with no row (no spill site, no kernel that compiled)
ROW_COLUMNS = {
    "kernels": (*_HEAD, "num_warps", "lanes_per_warp", "shared_bytes", "error", "allocation_registers",
                "allocation_arch_vgpr", "allocation_agpr", "allocation_spill_stores", "allocation_spill_reloads"),
    "tensors": (*_HEAD, "loop", "loop_depth", "loop_location", "name", "ssa", "role", "shape", "dtype", "layout",
                "layout_full", "elements_per_lane", "registers_per_lane", "counted", "memory", "buffer", "bytes"),
    "spills": (*_HEAD, "location", "stores", "reloads", "in_loop"),
    "mix": (*_HEAD, *LOOP_MIX_COLUMNS),
}


def flat_rows(explanations: Sequence[KernelExplanation], what: str = "kernels") -> list[dict[str, Any]]:
    """The explanations as flat rows, from the JSON export's fields: one per kernel (``kernels``: the
    allocation, each loop's register sums as ``loop<N>_*``), per tensor live across a loop (``tensors``), or
    per spill site (``spills``)."""
    if what not in EXPLAIN_ROWS:
        from ...core.errors import UsageError

        raise UsageError(f"cannot make rows of {what!r}; allowed: {', '.join(EXPLAIN_ROWS)}")
    out: list[dict[str, Any]] = []
    for e in explanations:
        d = e.as_dict()
        head = {k: d[k] for k in _HEAD}
        if what == "kernels":
            row = head | {k: d[k] for k in ("num_warps", "lanes_per_warp", "shared_bytes", "error")}
            row |= {f"allocation_{k}": v for k, v in (d["allocation"] or {}).items()}
            for lp in d["loops"]:
                row |= {f"loop{lp['index']}_{k}": lp[k] for k in ("depth", "carried_registers", "live_in_registers",
                                                                 "index_registers", "total_registers", "memory_bytes")}
            row |= {"spill_sites": len(d["spill_sites"]), "notes": " ".join(d["notes"]),
                    "diagnostics": ",".join(x["code"] for x in d["diagnostics"])}
            est = d["estimate"] or {}
            row |= {f"estimate_{k}": v for k, v in (est.get("registers_per_lane") or {}).items()}
            out.append(row)
        elif what == "tensors":
            for lp in d["loops"]:
                for t in lp["tensors"]:
                    out.append(head | {"loop": lp["index"], "loop_depth": lp["depth"],
                                       "loop_location": chain(lp["location"]),
                                       **{k: ("x".join(map(str, v)) if k == "shape" else v) for k, v in t.items()}})
        elif what == "mix":
            out += [head | {k: (", ".join(v) if k == "lines" else
                                ", ".join(f"{op} x{n}" for op, n in v.items()) if k == "matrix_ops" else v)
                            for k, v in m.items()} for m in d["loop_mix"]]
        else:
            out += [head | {"location": chain(s["location"]), "stores": s["stores"], "reloads": s["reloads"],
                            "in_loop": s["in_loop"]} for s in d["spill_sites"]]
    return out


def _site_link(e: KernelExplanation, where: str, url_template: str = "", commit: str = "") -> str:
    """A ``file.py:45`` of the compiler's line info, linked to the kernel's file where it is that file."""
    from pathlib import Path

    from ...report import page
    from ...report.sarif import relative_uri

    name, _, line = where.rpartition(":")
    if e.file and name and Path(e.file).name == Path(name).name and line.isdigit():
        return page.source_link(relative_uri(e.file), int(line), where, url_template=url_template, commit=commit)
    return page.esc(where)


def _kernel_html(e: KernelExplanation, url_template: str = "", commit: str = "") -> str:
    from ...core.parse.loops import CLASSES
    from ...report import page, svg

    if not e.ok:
        return f'<div class="card failed"><h3>{page.esc(_header(e))}</h3><p class="bad">{page.esc(e.error)}</p></div>'
    out = [f"<h3>{page.esc(_header(e))}</h3>"]
    if (said := compiler_lines(e)):
        out.append("<p class=\"diag\">" + "<br>".join(page.esc(s) for s in said) + "</p>")
    for lp in e.loops:
        regs = [t for t in lp.tensors if t.role != "memory" and t.registers is not None]
        where = "loop at " + " <- ".join(_site_link(e, w, url_template, commit) for w in lp.location)
        bars = [svg.Bar(tensor_name(t), t.registers or 0, f"{t.registers} ({t.role}, {_shape(t)} {t.dtype})",
                        title=f"{tensor_name(t)} `{t.ssa}`: {t.layout}") for t in sorted(regs, key=lambda t: -(t.registers or 0))]
        out.append(f"<p><b>Loop {lp.index + 1}</b>, {where}: {page.esc(loop_summary(e, lp))}</p>")
        out.append(svg.bars(bars, label=f"registers per live tensor, loop {lp.index + 1}",
                            unit=f"32-bit registers per {_lane_word(e.arch)}"))
    if e.mixes:
        rows = [(("* " if m.hot else "") + m.name, [(c, m.count(c)) for c in CLASSES]) for m in e.mixes]
        out.append(f"<p>{page.esc(mix_summary(e))}</p>")
        out.append(svg.stacked(rows, label="instruction mix per loop trip"))
        hot = next((m for m in e.mixes if m.hot), None)
        if hot is not None:
            lines = ", ".join(_site_link(e, ln, url_template, commit) for ln in hot.lines) or "-"
            out.append(f"<p>hot loop {page.esc(hot.name)}: source lines {lines}</p>")
    out.append(f"<p>{page.esc(spill_summary(e))}</p>")
    if e.spills:
        rows = [[str(s.stores), str(s.reloads), "in loop" if s.in_loop else "outside",
                 " <- ".join(_site_link(e, w, url_template, commit) for w in s.location)] for s in e.spills]
        out.append(page.table(["stores", "reloads", "where", "source line <- inlined at"], rows,
                              ["worse" if s.in_loop else "" for s in e.spills], numeric=(0, 1), raw=(3,)))
    out += [f"<p class=\"meta\">note: {page.esc(n)}</p>" for n in e.notes]
    return f'<div class="card">{"".join(out)}</div>'


def to_html(explanations: Sequence[KernelExplanation], machine: Machine, command: str,
            title: str = "vgprscope explain", url_template: str = "", commit: str = "") -> str:
    """The HTML report: per kernel, each loop's live tensors as bars of registers per lane, the loops'
    instruction mix per trip (the hot loop marked *), the spill sites by source line (in a loop: highlighted),
    what the compiler said; then the markdown export (the same explanations), folded."""
    from ...report import page

    versions = list(dict.fromkeys([*(f"ptxas {e.ptxas_version}" for e in explanations if e.ptxas_version),
                                   *(f"LLVM {e.llvm_version}" for e in explanations if e.llvm_version)]))
    versions.insert(0, f"Triton {machine.triton}")
    sections = [page.section("Where the registers go", "".join(_kernel_html(e, url_template, commit)
                                                               for e in explanations), "kernels"),
                page.section("Every field", page.folded("the markdown export", page.from_markdown(
                    to_markdown(explanations, machine))), "fields")]
    return page.document(title, sections, machine=machine, command=command, versions=versions)
