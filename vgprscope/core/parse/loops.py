"""What each loop of a compiled kernel executes per trip, statically: its instruction mix from the assembly.

Pure: text in, records out. A loop's counts are over every instruction of its body once (one trip), nested
loops' bodies included; the hot loop is the one whose own body (its nested loops' left out) holds the most
matrix instructions, the deeper one between equals.

AMD: LLVM's AMDGCN text names each loop at its blocks: a header's label carries ``=>This [Inner ]Loop Header:
Depth=D``, a block inside a loop ``in Loop: Header=BB0_2 Depth=1`` and, nested, ``Parent Loop BB0_5 Depth=1``
(AsmPrinter's loop comments), and ``.loc`` directives give each instruction's source line.

NVIDIA: ``nvdisasm -gi`` SASS has no loop comments: a loop is a backward branch, from the ``BRA`` to the label
it targets (the same rule ``lineinfo.sass_spills`` uses for "in a loop"); ``//## File`` comments give lines.

Bytes are per lane (AMD) or per thread (NVIDIA) and per trip: a ``global_load_dwordx4`` is 16 B, a
``buffer_store_dword`` spill 4 B, an ``STL.128`` 16 B. ``s_nop N`` idles N + 1 cycles.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..loop_fields import LOOP_FIELDS, spill_free_loop_fields
from .amdgcn import _function_body, kernel_metadata
from .lineinfo import (
    _SASS_BRA_RE,
    _SASS_LABEL_RE,
    _SASS_LINE_RE,
    NO_LINE,
    _sass_chain,
    amd_loc_chain,
    sass_function_lines,
)

# Triton's own language files: a loop's source line is the innermost frame outside them (``tl.max`` inlines
# standard.py's reduction into the kernel: its line says nothing of the user's loop)
_TRITON_FILES = frozenset({"standard.py", "core.py", "math.py", "random.py", "libdevice.py", "semantic.py"})

# instruction classes, in the order a table shows them
CLASSES = ("matrix", "global_load", "global_store", "lds_load", "lds_store", "scratch_load", "scratch_store",
           "wait", "barrier", "nop", "acc_copy", "convert", "other")


@dataclass(frozen=True)
class LoopMix:
    """One loop's body, one trip: instruction counts by class, bytes moved, its source lines."""

    name: str  # the header block (AMD ``BB0_2``) or the branch target label (NVIDIA ``.L_x_1``)
    depth: int  # 1: outermost
    parent: str | None  # the enclosing loop's name
    instructions: int
    counts: tuple[tuple[str, int], ...]  # class -> instructions (CLASSES' order, zeros left out)
    bytes: tuple[tuple[str, int], ...]  # global_load, global_store, lds_load, lds_store, scratch_load, scratch_store
    nop_cycles: int
    matrix_ops: tuple[tuple[str, int], ...]  # matrix mnemonic -> count (v_mfma_f32_32x32x8_f16: 16)
    lines: tuple[str, ...]  # innermost file:line of its instructions, compacted per file ("baseline.py:45-69")
    hot: bool = False
    span: tuple[int, int] | None = None  # NVIDIA: the first and last SASS address of the body (the branch's)

    def count(self, cls: str) -> int:
        return dict(self.counts).get(cls, 0)

    def moved(self, cls: str) -> int:
        return dict(self.bytes).get(cls, 0)

    @property
    def matrix_share(self) -> float:
        """Matrix instructions as a share of the loop's instructions (0..1)."""
        return self.count("matrix") / self.instructions if self.instructions else 0.0

    @property
    def spill_bytes(self) -> int:
        """Scratch (AMD) / local (NVIDIA) bytes stored and reloaded per trip, per lane / thread."""
        return self.moved("scratch_load") + self.moved("scratch_store")

    def as_dict(self) -> dict[str, object]:
        return {"loop": self.name, "depth": self.depth, "parent": self.parent, "hot": self.hot,
                "instructions": self.instructions, "matrix_share": round(self.matrix_share, 4),
                **{c: self.count(c) for c in CLASSES},
                **{f"{k}_bytes": self.moved(k) for k in _BYTE_CLASSES}, "spill_bytes": self.spill_bytes,
                "nop_cycles": self.nop_cycles, "matrix_ops": dict(self.matrix_ops), "lines": list(self.lines)}


_BYTE_CLASSES = ("global_load", "global_store", "lds_load", "lds_store", "scratch_load", "scratch_store")


def _user_frame(chain: tuple[str, ...]) -> str:
    """The innermost file:line of an inlined-at chain that is not in Triton's language files."""
    return next((c for c in chain if c.rpartition(":")[0] not in _TRITON_FILES), chain[0] if chain else NO_LINE)


def _compact(lines: Counter[str]) -> tuple[str, ...]:
    per_file: dict[str, list[int]] = {}
    for loc in lines:
        if loc == NO_LINE or ":" not in loc:
            continue
        file, _, num = loc.rpartition(":")
        if num.isdigit():
            per_file.setdefault(file, []).append(int(num))
    out = []
    for file, nums in sorted(per_file.items(), key=lambda kv: -len(kv[1])):
        lo, hi = min(nums), max(nums)
        out.append(f"{file}:{lo}" if lo == hi else f"{file}:{lo}-{hi}")
    return tuple(out)


@dataclass
class _Acc:
    counts: Counter[str]
    bytes: Counter[str]
    matrix: Counter[str]
    lines: Counter[str]
    nop: int = 0
    total: int = 0

    @classmethod
    def new(cls) -> _Acc:
        return cls(Counter(), Counter(), Counter(), Counter())

    def add(self, cls_: str, mnemonic: str, width: int, line: str, nop: int = 0) -> None:
        self.total += 1
        self.counts[cls_] += 1
        if cls_ in _BYTE_CLASSES:
            self.bytes[cls_] += width
        if cls_ == "matrix":
            self.matrix[mnemonic] += 1
        self.nop += nop
        self.lines[line] += 1


def _mixes(accs: dict[str, _Acc], depth: dict[str, int], parent: dict[str, str | None],
           spans: dict[str, tuple[int, int]] | None = None) -> tuple[LoopMix, ...]:
    out = [LoopMix(name=n, depth=depth[n], parent=parent[n], instructions=a.total, span=(spans or {}).get(n),
                   counts=tuple((c, a.counts[c]) for c in CLASSES if a.counts[c]),
                   bytes=tuple((c, a.bytes[c]) for c in _BYTE_CLASSES if a.bytes[c]), nop_cycles=a.nop,
                   matrix_ops=tuple(sorted(a.matrix.items(), key=lambda kv: (-kv[1], kv[0]))),
                   lines=_compact(a.lines)) for n, a in accs.items()]
    if out:
        # most matrix instructions in its own body (a loop's count holds its nested loops' bodies once: a tile
        # loop around a K loop would otherwise always win); between equals the deeper loop, then the denser
        # body (the loop without the tail's mask math)
        nested = Counter[str]()
        for m in out:
            if m.parent is not None:
                nested[m.parent] += m.count("matrix")
        hot = max(out, key=lambda m: (m.count("matrix") - nested[m.name], m.depth, m.matrix_share))
        if hot.count("matrix"):
            out = [m if m is not hot else LoopMix(**{**m.__dict__, "hot": True}) for m in out]
    return tuple(out)


# ---- AMD ----

_AMD_LABEL_RE = re.compile(r"^(?:\.L(BB\d+_\d+):|; %bb\.\d+:)(.*)$")
_AMD_HEADER_RE = re.compile(r"=>\s*This (?:Inner )?Loop Header: Depth=(\d+)")
_AMD_IN_LOOP_RE = re.compile(r"in Loop: Header=(BB\d+_\d+) Depth=(\d+)")
_AMD_PARENT_RE = re.compile(r"Parent Loop (BB\d+_\d+) Depth=(\d+)")
_AMD_INST_RE = re.compile(r"^\s+([a-z][a-z0-9_]*)(?:\s+(.*?))?\s*(?:;(.*))?$")
_AMD_LOC_RE = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s+\d+[^;]*;\s*(.*)$")
_AMD_SPILL_RE = re.compile(r"\d+-byte (?:Folded )?(Spill|Reload)\b")
_AMD_WIDTH_RE = re.compile(r"_(?:dwordx(\d)|dword|b(\d+)|u?byte|s?byte|u?short|s?short|[iu](\d+)|d16)(?:_|$)")
_NOP_RE = re.compile(r"^(?:0x)?([0-9a-fA-F]+)$")


def _amd_width(mnemonic: str) -> int:
    """Bytes per lane of a memory instruction: ``dwordx4`` 16, ``b128`` 16, ``dword`` 4, ``ubyte`` 1, ``short``
    2; ``ds_read2`` / ``ds_write2`` move two."""
    width = 4
    for m in _AMD_WIDTH_RE.finditer(mnemonic):
        text = m.group(0).strip("_")
        if m.group(1):
            width = 4 * int(m.group(1))
        elif m.group(2):
            width = int(m.group(2)) // 8
        elif m.group(3):
            width = max(int(m.group(3)) // 8, 1)
        elif "byte" in text:
            width = 1
        elif "short" in text or text == "d16":
            width = 2
        elif text == "dword":
            width = 4
    if re.match(r"ds_(read|write|load|store)2", mnemonic):
        width *= 2
    return width


def amd_class(mnemonic: str, comment: str = "") -> str:
    """The class of one AMDGCN instruction (CLASSES)."""
    m = mnemonic
    if m.startswith(("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")):
        return "matrix"
    spill = _AMD_SPILL_RE.search(comment or "")
    if m.startswith("scratch_") or spill:
        store = "store" in m or (spill is not None and spill.group(1) == "Spill")
        return "scratch_store" if store else "scratch_load"
    if m.startswith(("global_load", "buffer_load", "flat_load", "s_load", "s_buffer_load")):
        return "global_load" if not m.startswith("s_") else "other"
    if m.startswith(("global_store", "buffer_store", "flat_store", "global_atomic", "buffer_atomic")):
        return "global_store"
    if m.startswith("ds_"):
        if m.startswith(("ds_read", "ds_load", "ds_bpermute", "ds_permute", "ds_swizzle")):
            return "lds_load"
        return "lds_store"
    if m.startswith("s_waitcnt") or m.startswith("s_wait_"):
        return "wait"
    if m.startswith("s_barrier"):
        return "barrier"
    if m == "s_nop":
        return "nop"
    if m.startswith(("v_accvgpr_read", "v_accvgpr_write", "v_accvgpr_mov")):
        return "acc_copy"
    if m.startswith("v_cvt"):
        return "convert"
    return "other"


def amdgcn_loops(text: str, kernel: str | None = None) -> tuple[LoopMix, ...]:
    """Every loop of the kernel's function body with its one-trip instruction mix."""
    name = kernel_metadata(text, kernel)[".name"]
    body = _function_body(text, name)
    accs: dict[str, _Acc] = {}
    depth: dict[str, int] = {}
    parent: dict[str, str | None] = {}
    chain: list[str] = []  # the loops the current block is in, outermost first
    location = NO_LINE
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        label = _AMD_LABEL_RE.match(line)
        if label:
            comments = [label.group(2)]
            while i + 1 < len(lines) and lines[i + 1].lstrip().startswith(";") and not _AMD_LABEL_RE.match(lines[i + 1]):
                i += 1
                comments.append(lines[i])
            text_c = " ".join(comments)
            nest = sorted({(int(d), h) for h, d in _AMD_PARENT_RE.findall(text_c)})
            inner = _AMD_IN_LOOP_RE.search(text_c)
            header = _AMD_HEADER_RE.search(text_c)
            chain = [h for _, h in nest]
            if header and label.group(1):
                own = label.group(1)
                chain.append(own)
            elif inner:
                if inner.group(1) not in chain:
                    chain.append(inner.group(1))
            else:
                chain = []
            for d, h in enumerate(chain, 1):
                if h not in accs:
                    accs[h], depth[h], parent[h] = _Acc.new(), d, chain[d - 2] if d > 1 else None
            i += 1
            continue
        loc = _AMD_LOC_RE.match(line)
        if loc:
            location = NO_LINE if loc.group(1) == "0" else _user_frame(amd_loc_chain(loc.group(2)))
            i += 1
            continue
        inst = _AMD_INST_RE.match(line)
        i += 1
        if not inst or not chain or line.lstrip().startswith((".", ";")):
            continue
        mnemonic, operands, comment = inst.group(1), inst.group(2) or "", inst.group(3) or ""
        # every instruction of the body counts, the hint instructions too (s_clause on gfx11 / gfx12 as
        # s_delay_alu and s_waitcnt): the share is of what the loop issues
        cls_ = amd_class(mnemonic, comment)
        nop = 0
        if cls_ == "nop":
            n = _NOP_RE.match(operands.strip())
            nop = int(n.group(1), 16 if operands.strip().startswith("0x") else 10) + 1 if n else 1
        width = _amd_width(mnemonic) if cls_ in _BYTE_CLASSES else 0
        for h in chain:
            accs[h].add(cls_, mnemonic, width, location, nop)
    return _mixes(accs, depth, parent)


_AMD_BRANCH_RE = re.compile(r"^\s+s_c?branch\w*\s+\.L(BB\d+_\d+)\b")


def amdgcn_gate_loops(text: str, kernel: str | None = None) -> tuple[LoopMix, ...] | None:
    """``amdgcn_loops`` for the gate: None (unknown) where the listing names no loop but branches back to an
    earlier label, a loop LLVM did not comment (assembly printed without its verbose comments), rather than
    "no loop" and a 0 of spill traffic."""
    mixes = amdgcn_loops(text, kernel)
    if mixes:
        return mixes
    seen: set[str] = set()
    for line in _function_body(text, kernel_metadata(text, kernel)[".name"]).splitlines():
        label = _AMD_LABEL_RE.match(line)
        if label and label.group(1):
            seen.add(label.group(1))
        branch = _AMD_BRANCH_RE.match(line)
        if branch and branch.group(1) in seen:
            return None
    return mixes


# ---- NVIDIA ----

_SASS_INST_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)")
_SASS_MATRIX = ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCIMMA", "UTCQMMA",
                "UTCOMMA", "UTCMMA", "OMMA", "QMMA")


def sass_class(op: str) -> str:
    """The class of one SASS instruction (CLASSES)."""
    base = op.split(".")[0]
    if base in _SASS_MATRIX:
        return "matrix"
    if base == "LDL":
        return "scratch_load"
    if base == "STL":
        return "scratch_store"
    if base in ("LDG", "LDGSTS", "UTMALDG", "UBLKCP", "LD"):
        return "global_load"
    if base in ("STG", "UTMASTG", "RED", "REDG", "ATOMG", "ST"):
        return "global_store"
    if base in ("LDS", "LDSM", "LDTM"):
        return "lds_load"
    if base in ("STS", "STSM", "STTM"):
        return "lds_store"
    if base in ("DEPBAR", "LDGDEPBAR", "WARPSYNC", "SYNCS", "WARPGROUP", "ARRIVES", "FENCE"):
        return "wait"
    if base in ("BAR", "BSYNC", "MEMBAR"):
        return "barrier"
    if base == "NOP":
        return "nop"
    if base in ("F2F", "F2FP", "F2I", "I2F", "I2FP", "F2IP"):
        return "convert"
    return "other"


def _sass_width(op: str) -> int:
    parts = op.split(".")[1:]
    for p in parts:
        if p in ("64", "128"):
            return int(p) // 8
        if p in ("U8", "S8"):
            return 1
        if p in ("U16", "S16"):
            return 2
    return 4


def sass_loops(sass: str, function: str | None = None) -> tuple[LoopMix, ...]:
    """Every loop (a backward branch) of ``nvdisasm -gi`` output, of ``function`` only when given."""
    lines = sass_function_lines(sass, function)
    labels: dict[str, int] = {}
    branches: list[tuple[int, str]] = []
    insts: list[tuple[int, str, str]] = []
    group: list[re.Match[str]] = []
    location = NO_LINE
    pending: list[str] = []
    for line in lines:
        m = _SASS_LINE_RE.match(line)
        if m:
            group.append(m)
            continue
        if group:
            location, group = _user_frame(_sass_chain(group)), []
        lab = _SASS_LABEL_RE.match(line.strip())
        if lab:
            pending.append(lab.group(1))
            continue
        inst = _SASS_INST_RE.match(line)
        if not inst:
            continue
        addr = int(inst.group(1), 16)
        for p in pending:
            labels[p] = addr
        pending = []
        bra = _SASS_BRA_RE.search(line)
        if bra:
            branches.append((addr, bra.group(1)))
        insts.append((addr, inst.group(2), location))
    spans: dict[str, tuple[int, int]] = {}
    for addr, target in branches:
        if target in labels and labels[target] <= addr:
            lo, hi = spans.get(target, (labels[target], addr))
            spans[target] = (lo, max(hi, addr))
    # a branch to itself is the trap loop after EXIT, not a loop of the kernel's
    ordered = sorted(((n, sp) for n, sp in spans.items() if sp[1] > sp[0]), key=lambda kv: (kv[1][0], -kv[1][1]))
    depth: dict[str, int] = {}
    parent: dict[str, str | None] = {}
    for name, (lo, hi) in ordered:
        outer = [n for n, (a, b) in ordered if n != name and a <= lo and hi <= b and (a, b) != (lo, hi)]
        depth[name] = len(outer) + 1
        parent[name] = max(outer, key=lambda n: depth.get(n, 0)) if outer else None
    accs = {name: _Acc.new() for name, _ in ordered}
    for addr, op, loc in insts:
        cls_ = sass_class(op)
        width = _sass_width(op) if cls_ in _BYTE_CLASSES else 0
        for name, (lo, hi) in ordered:
            if lo <= addr <= hi:
                accs[name].add(cls_, op.split(".")[0] if cls_ != "matrix" else op, width, loc)
    return _mixes(accs, depth, parent, dict(ordered))



# ---- the gate's loop: one loop per kernel whose figures are part of its usage ----

def gate_loop(mixes: tuple[LoopMix, ...]) -> LoopMix | None:
    """The loop the gate watches: the hot loop (the most matrix instructions of its own); in a kernel none of whose loops
    holds a matrix instruction, the loop with the most scratch traffic per trip, then the most instructions
    (the first such in the listing); None without loops."""
    hot = next((m for m in mixes if m.hot), None)
    if hot is not None or not mixes:
        return hot
    return max(mixes, key=lambda m: (m.spill_bytes, m.instructions))


def loop_fields(mixes: tuple[LoopMix, ...] | None) -> dict[str, int | str | None]:
    """The usage's loop fields (``records.AmdUsage.loop_*``) from every loop's mix: the gate loop's matrix
    share in percent (rounded half up), its scratch bytes and instructions per trip and its source lines; and
    the spill traffic of every loop: the worst loop's scratch bytes per trip of its own body, and those bytes
    of every loop together (each instruction once). ``mixes`` None (no assembly read): every field None,
    unknown. No loop: no spill traffic in a loop (0), no share (None)."""
    if mixes is None:
        return dict.fromkeys(LOOP_FIELDS)
    m = gate_loop(mixes)
    if m is None:
        return {"loop_matrix_share": None, "loop_lines": None, **spill_free_loop_fields()}
    share = (200 * m.count("matrix") + m.instructions) // (2 * m.instructions) if m.instructions else 0
    own = _own_spills(mixes)
    return {"loop_matrix_share": share, "loop_spill_bytes": m.spill_bytes,
            "loop_scratch_insts": m.count("scratch_load") + m.count("scratch_store"),
            "loop_lines": ", ".join(m.lines) or None, "loop_spill_bytes_max": max(own),
            "loop_spill_bytes_sum": sum(own)}


def _own_spills(mixes: tuple[LoopMix, ...]) -> list[int]:
    """Each loop's scratch bytes of one trip of its own body: a nested loop's are its own (an outer loop's trip
    runs the inner loop's many times, not once), so the sum counts each instruction once."""
    return [m.spill_bytes - sum(c.spill_bytes for c in mixes if c.parent == m.name) for m in mixes]
