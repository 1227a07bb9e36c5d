"""TTGIR text -> the loops of a kernel with the tensors live across them. Pure: text in, records out.

What is read (Triton prints every value under the name of the Python variable it came from, made unique
with a ``_N`` suffix: ``%m_i_66`` is ``m_i``):
- each ``scf.for`` with its iteration arguments (the loop-carried values: ``iter_args(%acc = ...)``) and
  their types from the loop's ``-> (...)`` list;
- its live-ins: tensors defined before the loop (outside it) and used inside it, such as the ``q`` tile
  loaded once before the K/V loop. The initial values a loop header consumes are not live-ins: they are
  dead once the loop starts (they became its iteration arguments);
- locations: the ``#locN = loc(...)`` table resolved to ``file:line`` chains, innermost first (Triton
  inlines every ``@triton.jit`` helper, so a loop in a helper carries its call sites).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .layouts import layout_aliases


class TtgirParseError(ValueError):
    pass


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: str
    encoding: str  # the layout attribute as written (an alias like ``#mma`` or inline)
    memory: str = "registers"  # or "shared" / "tensor memory" for a ``!ttg.memdesc``


@dataclass(frozen=True)
class IrValue:
    ssa: str  # ``%m_i_66``
    name: str  # the source name: ``m_i`` (empty for an anonymous ``%0``)
    type: TensorType
    op: str  # the defining operation (``scf.for`` for a loop-carried value)


@dataclass(frozen=True)
class IrLoop:
    index: int  # order in the function, 0-based
    depth: int  # 0 for a loop at function level
    location: tuple[str, ...]  # ``file:line`` innermost first, then the call sites it was inlined at
    carried: tuple[IrValue, ...]
    live_in: tuple[IrValue, ...]


@dataclass(frozen=True)
class TtgirModule:
    function: str
    num_warps: int
    threads_per_warp: int
    target: str
    aliases: dict[str, str]
    loops: tuple[IrLoop, ...]


_LOC_DEF_RE = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$", re.M)
_SSA_RE = re.compile(r"%[\w$.-]+(?:#\d+)?")
_DEF_RE = re.compile(r"^\s*(%[\w$.-]+)(?::(\d+))?\s*=\s*(\"?[\w.]+\"?)")
_BB_RE = re.compile(r"^\s*\^bb\d+\((.*)\):")
_FOR_RE = re.compile(r"scf\.for\s+(%[\w$.-]+)\s*=")
_TRAILING_LOC_RE = re.compile(r"\s+loc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*\{?\s*$")


def source_name(ssa: str) -> str:
    """``%m_i_66`` -> ``m_i``; ``%0`` -> ``""`` (Triton adds ``_N`` to make printed names unique)."""
    base = ssa.lstrip("%").split("#")[0]
    if base.isdigit():
        return ""
    return re.sub(r"_\d+$", "", base)


# ---- locations ----

def _loc_table(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in _LOC_DEF_RE.finditer(text)}


def resolve_loc(expr: str, table: dict[str, str], _depth: int = 0) -> tuple[str, ...]:
    """A location expression (the inside of ``loc(...)`` or an alias) -> ``file:line`` chain."""
    expr = expr.strip()
    if _depth > 64:
        return ()
    if expr.startswith("loc(") and expr.endswith(")"):
        expr = expr[4:-1].strip()
    if expr.startswith("#loc"):
        return resolve_loc(table.get(expr, "unknown"), table, _depth + 1)
    m = re.match(r'^"([^"]*)":(\d+)(?::\d+)?$', expr)
    if m:
        return (f"{os.path.basename(m.group(1))}:{m.group(2)}",)
    m = re.match(r"^callsite\((.*)\s+at\s+(.*)\)$", expr, re.S)
    if m:
        return resolve_loc(m.group(1), table, _depth + 1) + resolve_loc(m.group(2), table, _depth + 1)
    m = re.match(r'^"[^"]*"\((.*)\)$', expr, re.S)  # a name location wraps another
    if m:
        return resolve_loc(m.group(1), table, _depth + 1)
    m = re.match(r"^fused\[(.*)\]$", expr, re.S)
    if m:
        return resolve_loc(m.group(1).split(",")[0], table, _depth + 1)
    return ()


def _trailing_loc(line: str) -> str | None:
    m = re.search(r"loc\((#loc\d*|.*)\)\s*\{?\s*$", line.rstrip())
    return m.group(1) if m else None


# ---- types ----

def _top_level_split(s: str, sep: str = ",") -> list[str]:
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for c in s:
        if c in "<{[(":
            depth += 1
        elif c in ">}])":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_tensor_type(text: str) -> TensorType | None:
    """``tensor<128x64xf32, #mma>`` (or ``!ttg.memdesc<...>``) -> TensorType; None for a scalar."""
    text = text.strip()
    memory = "registers"
    if text.startswith("!ttg.memdesc<") and text.endswith(">"):
        inner = _top_level_split(text[len("!ttg.memdesc<"):-1])
        memory = "tensor memory" if any("tensor_memory" in p for p in inner) else "shared"
    elif text.startswith("tensor<") and text.endswith(">"):
        inner = _top_level_split(text[len("tensor<"):-1])
    else:
        return None
    m = re.match(r"^((?:\d+x)+)(.+)$", inner[0])
    if not m:
        return None
    shape = tuple(int(x) for x in m.group(1).rstrip("x").split("x"))
    return TensorType(shape=shape, dtype=m.group(2), encoding=inner[1] if len(inner) > 1 else "", memory=memory)


def _last_top_level(s: str, token: str) -> int:
    depth, found = 0, -1
    i = 0
    while i < len(s):
        c = s[i]
        if c in "<{[(":
            depth += 1
        elif c in ">}])":
            depth -= 1
        elif depth == 0 and s.startswith(token, i):
            found = i
        i += 1
    return found


def _strip_loc(line: str) -> str:
    return _TRAILING_LOC_RE.sub("", line.rstrip())


def result_types(line: str, op: str, count: int) -> list[TensorType | None]:
    """The result type(s) of one op from its printed form (only tensors matter here)."""
    body = _strip_loc(line).rstrip("{").rstrip()
    at = _last_top_level(body, " : ")
    if at < 0:
        return [None] * count
    tail = body[at + 3:].strip()
    arrow = _last_top_level(tail, "->")
    if arrow >= 0:
        res = tail[arrow + 2:].strip()
        if res.startswith("(") and res.endswith(")"):
            res = res[1:-1]
        types = [parse_tensor_type(t) for t in _top_level_split(res)]
        return (types + [None] * count)[:count]
    if " to " in tail:
        return [parse_tensor_type(tail.split(" to ")[-1])] + [None] * (count - 1)
    parts = _top_level_split(tail)
    pick = parts[-1] if op == "arith.select" else parts[0]
    t = parse_tensor_type(pick)
    if t is not None and op in ("arith.cmpi", "arith.cmpf"):
        t = TensorType(t.shape, "i1", t.encoding)
    if t is not None and op == "tt.load" and t.dtype.startswith("!tt.ptr<"):
        t = TensorType(t.shape, t.dtype[len("!tt.ptr<"):-1], t.encoding)
    return [t] + [None] * (count - 1)


# ---- the module ----

@dataclass
class _Def:
    ssa: str
    op: str
    line: int
    loops: tuple[int, ...]  # indices of the loops enclosing the definition
    type: TensorType | None = None


@dataclass
class _OpenLoop:
    index: int
    depth: int
    header: int
    carried: list[str]
    types: list[TensorType | None]
    uses: set[str]
    start_depth: int  # brace depth before the header's `{`
    yielded: list[str] | None = None


def _header_parts(line: str) -> tuple[list[str], list[TensorType | None]]:
    """(iteration argument names, their types) of an ``scf.for`` header."""
    m = re.search(r"iter_args\((.*?)\)\s*->\s*\(", line)
    if not m:
        return [], []
    names = [p.split("=")[0].strip() for p in _top_level_split(m.group(1))]
    rest = line[m.end() - 1:]
    depth, end = 0, 0
    for i, c in enumerate(rest):
        depth += c in "<{[("
        depth -= c in ">}])"
        if depth == 0:
            end = i
            break
    types = [parse_tensor_type(t) for t in _top_level_split(rest[1:end])]
    return names, types


def _carried_name(lp: _OpenLoop, k: int) -> str:
    """The source name of a loop-carried value: its iteration argument's, unless the software pipeliner
    rebuilt the loop and left ``%argN`` or one name on several arguments; then the name of the value
    the body yields for it (``acc``; ``l_new`` for what the source calls ``l_i``)."""
    names = [source_name(n) for n in lp.carried]
    own = names[k]
    if own and not re.fullmatch(r"arg\d+", own) and names.count(own) == 1:
        return own
    if lp.yielded and k < len(lp.yielded):
        return source_name(lp.yielded[k]) or own
    return own


def parse_ttgir(text: str) -> TtgirModule:
    """Loops, loop-carried values and live-ins of the (first public) function of a TTGIR module."""
    locs = _loc_table(text)
    aliases = layout_aliases(text)
    mod = re.search(r"^module attributes \{(.*)\}", text, re.M)
    if not mod:
        raise TtgirParseError("no 'module attributes' line: not a TTGIR module")
    attrs = mod.group(1)
    warps = re.search(r'"ttg\.num-warps"\s*=\s*(\d+)', attrs)
    lanes = re.search(r'"ttg\.threads-per-warp"\s*=\s*(\d+)', attrs)
    target = re.search(r'ttg\.target\s*=\s*"([^"]*)"', attrs)
    func = re.search(r"^\s*tt\.func\s+(?:public\s+)?@([\w$.]+)", text, re.M)
    if not (warps and lanes and func):
        raise TtgirParseError("TTGIR module lacks ttg.num-warps, ttg.threads-per-warp or a tt.func")

    defs: dict[str, _Def] = {}
    open_loops: list[_OpenLoop] = []
    done: list[tuple[_OpenLoop, tuple[str, ...]]] = []
    pending: list[tuple[int, _Def, int]] = []  # region ops whose type is printed on their closing line
    depth = 0
    n_loops = 0
    lines = text.splitlines()
    in_func = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not in_func:
            in_func = stripped.startswith("tt.func")
            if in_func:
                depth = 1
            continue
        if stripped.startswith("#loc") or not stripped:
            continue
        code = _strip_loc(line)
        opens, closes = code.count("{"), code.count("}")
        before = depth
        enclosing = tuple(lp.index for lp in open_loops)
        bb = _BB_RE.match(line)
        d = _DEF_RE.match(line)
        is_for = _FOR_RE.search(line) is not None
        if open_loops and stripped.startswith("scf.yield") and before == open_loops[-1].start_depth + 1:
            ops = stripped[len("scf.yield"):].split(" : ")[0]
            open_loops[-1].yielded = [o.strip() for o in ops.split(",") if o.strip()]
        if bb:
            for arg in _top_level_split(bb.group(1)):
                ssa = arg.split(":")[0].strip()
                defs[ssa] = _Def(ssa, "block-arg", i, enclosing)
        if not is_for:
            uses = set(_SSA_RE.findall(code)) - ({d.group(1)} if d else set())
            for lp in open_loops:
                lp.uses |= uses
        if d:
            ssa, count, op = d.group(1), int(d.group(2) or 1), d.group(3).strip('"')
            names = [ssa] if count == 1 else [f"{ssa}#{k}" for k in range(count)]
            if is_for:
                _, types = _header_parts(line)
            elif opens > closes:
                types = [None] * count
            else:
                types = result_types(line, op, count)
            for k, name in enumerate(names):
                defs[name] = _Def(name, op, i, enclosing, types[k] if k < len(types) else None)
            if opens > closes and not is_for:
                pending.append((before, defs[names[0]], count))
        if is_for:
            names, types = _header_parts(line)
            iv = _FOR_RE.search(line).group(1)  # type: ignore[union-attr]
            for lp in open_loops:  # an inner loop's bounds and initial values are used by the outer loop
                lp.uses |= set(_SSA_RE.findall(code)) - set(names) - {iv} - ({d.group(1)} if d else set())
            lp = _OpenLoop(n_loops, len(open_loops), i, names, types, set(), before)
            n_loops += 1
            for k, name in enumerate(names):
                defs[name] = _Def(name, "scf.for", i, enclosing + (lp.index,), types[k] if k < len(types) else None)
            defs[iv] = _Def(iv, "scf.for", i, enclosing + (lp.index,))
            open_loops.append(lp)
        depth += opens - closes
        while pending and depth <= pending[-1][0]:
            _, dfn, count = pending.pop()
            op = dfn.op
            types = result_types(line, op, count)
            dfn.type = types[0]
        while open_loops and depth <= open_loops[-1].start_depth:
            lp = open_loops.pop()
            loc = _trailing_loc(line)
            done.append((lp, resolve_loc(loc, locs) if loc else ()))
        if depth <= 0:
            break

    loops = []
    for lp, location in sorted(done, key=lambda x: x[0].index):
        carried = tuple(IrValue(ssa=n, name=_carried_name(lp, k), type=t, op="scf.for")
                        for k, (n, t) in enumerate(zip(lp.carried, lp.types)) if t is not None)
        live = []
        for ssa in sorted(lp.uses, key=lambda s: defs[s].line if s in defs else -1):
            used = defs.get(ssa)
            if used is None or used.type is None or lp.index in used.loops or used.line > lp.header:
                continue  # a function argument (scalar), a scalar, or defined inside this loop
            live.append(IrValue(ssa=ssa, name=source_name(ssa), type=used.type, op=used.op))
        loops.append(IrLoop(index=lp.index, depth=lp.depth, location=location, carried=carried,
                            live_in=tuple(live)))
    return TtgirModule(function=func.group(1), num_warps=int(warps.group(1)), threads_per_warp=int(lanes.group(1)),
                       target=target.group(1) if target else "", aliases=aliases, loops=tuple(loops))


# --------------------------------------------------------------------------------- warp specialization

@dataclass(frozen=True)
class WarpPartition:
    """One partition of a ``ttg.warp_specialize`` (Gluon's ``gl.warp_specialize``): ``default`` runs in the
    kernel's own warps; each worker ``partitionN`` in its ``num_warps(K)``, with the registers the kernel
    asked for it (``worker_num_regs``: the op's ``requestedRegisters``, one per worker) where it asked, and
    the registers the machine code's ``setmaxnreg`` gives it (``parse/setmaxnreg.py``) where it sets some."""

    name: str
    num_warps: int
    requested_registers: int | None
    given_registers: int | None = None


_WS_RE = re.compile(r"\bttg\.warp_specialize\(")
_REQUESTED_RE = re.compile(r"requestedRegisters\s*=\s*array<i32(?::\s*([\d,\s]*))?>")
_DEFAULT_RE = re.compile(r"^\s*default\s*\{")
_PARTITION_RE = re.compile(r"^\s*(partition\d+)\(.*\bnum_warps\((\d+)\)\s*\{")
_NUM_WARPS_RE = re.compile(r'"ttg\.num-warps"\s*=\s*(\d+)')


def warp_partitions(text: str) -> tuple[WarpPartition, ...]:
    """The partitions of every ``ttg.warp_specialize`` in a TTGIR, in order (none without one)."""
    kernel_warps = int(m[1]) if (m := _NUM_WARPS_RE.search(text)) else 0
    out: list[WarpPartition] = []
    requested: list[int] = []
    workers = 0
    for line in text.splitlines():
        if _WS_RE.search(line):
            req = _REQUESTED_RE.search(line)
            requested = [int(x) for x in req[1].split(",") if x.strip()] if req and req[1] else []
            workers = 0
        elif _DEFAULT_RE.match(line):
            out.append(WarpPartition("default", kernel_warps, None))
        elif (p := _PARTITION_RE.match(line)) is not None:
            regs = requested[workers] if workers < len(requested) else None
            out.append(WarpPartition(p[1], int(p[2]), regs))
            workers += 1
    return tuple(out)
