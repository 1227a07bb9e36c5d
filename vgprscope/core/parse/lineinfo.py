"""Spill instructions -> their source lines, from the compiler's own line info. Pure: text in, records out.

AMD: the AMDGCN text LLVM prints carries a ``.loc`` directive before the instructions of each source line,
with a comment giving the whole inlined-at chain (``; _fa_common.py:182:9 @[ baseline.py:50:9 ]``). A spill
is a memory instruction LLVM annotates ``; N-byte [Folded ]Spill`` / ``Reload`` (an annotated ``s_clause``
covers the clause's next instructions, as in ``parse.amdgcn``); it is in a loop when its basic block's
comment gives a loop ``Depth=``.

NVIDIA: ``nvdisasm -gi`` on the cubin (Triton compiles with ``-lineinfo``) prints, before the instructions
of each source line, one ``//## File "...", line N inlined at "...", line M`` comment per inlining level.
Spills are the local-memory instructions: ``STL`` stores, ``LDL`` reloads (Triton kernels use local memory
for nothing else; ptxas's spill byte counts are the cross-check). An instruction is in a loop when a
backward branch jumps over it: some ``BRA`` at or after it targets a label at or before it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .amdgcn import _function_body, kernel_metadata, spill_marks

NO_LINE = "<no line>"  # an instruction the compiler placed without a source line (line 0)


@dataclass(frozen=True)
class SpillInstruction:
    kind: str  # "store" or "reload"
    location: tuple[str, ...]  # file:line innermost first, then the inlined-at chain
    in_loop: bool
    instruction: str  # the mnemonic: buffer_store_dword, scratch_load_dwordx4, STL.128, ...


# ---- AMD ----

_LOC_COMMENT_RE = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s+\d+[^;]*;\s*(.*)$")


def amd_loc_chain(comment: str) -> tuple[str, ...]:
    """``_fa_common.py:91:13 @[ _fa_common.py:168:17 @[ baseline.py:46:21 ] ]`` -> file:line chain."""
    parts = [p.strip(" ]") for p in comment.split("@[")]
    chain = []
    for p in parts:
        m = re.match(r"^(.*?):(\d+)(?::\d+)?$", p.strip())
        if not m:
            continue
        chain.append(NO_LINE if m.group(2) == "0" else f"{os.path.basename(m.group(1))}:{m.group(2)}")
    return tuple(chain) or (NO_LINE,)


def amdgcn_spills(text: str, kernel: str | None = None) -> list[SpillInstruction]:
    """Every spill store and reload of the kernel's function body with its source line chain."""
    name = kernel_metadata(text, kernel)[".name"]
    body = _function_body(text, name)
    marks = {i: (store, loop, mnemonic) for i, store, loop, mnemonic in spill_marks(body)}
    out: list[SpillInstruction] = []
    location: tuple[str, ...] = (NO_LINE,)
    for i, line in enumerate(body.splitlines() if marks else ()):
        loc = _LOC_COMMENT_RE.match(line)
        if loc:
            location = (NO_LINE,) if loc.group(1) == "0" else amd_loc_chain(loc.group(2))
        elif i in marks:
            store, loop, mnemonic = marks[i]
            out.append(SpillInstruction(kind="store" if store else "reload", location=location, in_loop=loop,
                                        instruction=mnemonic))
    return out


# ---- NVIDIA ----

_SASS_LINE_RE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')
_SASS_INST_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
_SASS_LABEL_RE = re.compile(r"^(\.L_x_\d+):")
_SASS_BRA_RE = re.compile(r"\bBRA\b[^`]*`\((\.L_x_\d+)\)")


def _sass_chain(group: list[re.Match[str]]) -> tuple[str, ...]:
    if not group:
        return (NO_LINE,)
    first = group[0]
    chain = [f"{os.path.basename(first.group(1))}:{first.group(2)}"]
    for m in group:
        if m.group(3):
            chain.append(f"{os.path.basename(m.group(3))}:{m.group(4)}")
    return tuple(NO_LINE if c.endswith(":0") else c for c in chain)


def sass_function_lines(sass: str, function: str | None = None) -> list[str]:
    """The lines of ``nvdisasm`` output, of ``function``'s section only when given (and found)."""
    lines = sass.splitlines()
    if function:
        start = next((i for i, ln in enumerate(lines) if re.match(rf"^{re.escape(function)}:", ln.strip())), None)
        if start is not None:
            end = next((i for i in range(start + 1, len(lines)) if lines[i].strip().startswith(".section")), len(lines))
            lines = lines[start:end]
    return lines


def sass_spills(sass: str, function: str | None = None) -> list[SpillInstruction]:
    """Every STL / LDL of ``nvdisasm -gi -c`` output (of ``function`` only, when given)."""
    lines = sass_function_lines(sass, function)
    labels: dict[str, int] = {}
    branches: list[tuple[int, str]] = []
    insts: list[tuple[int, str, tuple[str, ...]]] = []
    group: list[re.Match[str]] = []
    location: tuple[str, ...] = (NO_LINE,)
    pending_label: str | None = None
    for line in lines:
        m = _SASS_LINE_RE.match(line)
        if m:
            group.append(m)
            continue
        if group:
            location, group = _sass_chain(group), []
        lab = _SASS_LABEL_RE.match(line.strip())
        if lab:
            pending_label = lab.group(1)
            continue
        inst = _SASS_INST_RE.match(line)
        if not inst:
            continue
        addr = int(inst.group(1), 16)
        if pending_label:
            labels[pending_label] = addr
            pending_label = None
        bra = _SASS_BRA_RE.search(line)
        if bra:
            branches.append((addr, bra.group(1)))
        insts.append((addr, inst.group(2), location))
    loops = [(labels[t], a) for a, t in branches if t in labels and labels[t] <= a]
    out = []
    for addr, op, loc in insts:
        base = op.split(".")[0]
        if base not in ("STL", "LDL"):
            continue
        out.append(SpillInstruction(kind="store" if base == "STL" else "reload", location=loc,
                                    in_loop=any(lo <= addr <= hi for lo, hi in loops), instruction=op))
    return out
