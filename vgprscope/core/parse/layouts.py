"""TTGIR layout attributes -> the 32-bit registers each lane holds of a tensor. Pure text in, numbers out.

How a lane's share is counted (Triton's linear-layout view of each encoding, re-derived here; the tests
hold every count against Triton's own ``to_linear_layout`` of the same TTGIR):
- every register-like encoding here (blocked, MFMA, WMMA, NVIDIA MMA and their dot operands) is a product
  of one-dimensional layouts: along each tensor dim a lane holds a few register "bases" (offsets that are
  powers of two, inside one tile of the layout) and the lanes and warps cover the rest of the tile;
- along a dim of size S: a register base at an offset >= S points past the tensor, so those elements are
  copies of ones the lane already holds (a broadcast, e.g. a 128x1 tensor in a layout 8 columns wide):
  they are not counted; a tensor larger than the tile repeats it S / tile times, in registers;
- distinct elements per lane = product over dims of 2^(bases below S) * max(1, S / tile);
- a slice drops one dim of its parent (what is left is the parent at size 1 there); a linear layout
  gives its register bases outright: the lane holds 2^rank(bases) distinct elements (rank over GF(2));
- registers = ceil(elements * bits / 32): 16-bit elements pack two to a register, 8-bit four; i1 counts a
  register per element (LLVM keeps each as its own value); 64-bit values (pointers) take two.
A dot operand's copy in another warp (A is needed by every warp along N) costs those warps the same
registers: the count is per lane, so duplication across warps and lanes shows in it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


class LayoutError(ValueError):
    """A layout attribute this module cannot read."""


@dataclass(frozen=True)
class Blocked:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    kind = "blocked"


@dataclass(frozen=True)
class Slice:
    dim: int
    parent: Layout
    kind = "slice"


@dataclass(frozen=True)
class AmdMfma:
    version: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    transposed: bool
    tiles_per_warp: tuple[int, ...] | None = None
    kind = "mfma"


@dataclass(frozen=True)
class AmdWmma:
    version: int
    warps_per_cta: tuple[int, ...]
    transposed: bool
    kind = "wmma"


@dataclass(frozen=True)
class NvidiaMma:
    version_major: int
    version_minor: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    kind = "nvidia_mma"


@dataclass(frozen=True)
class DotOperand:
    op_idx: int
    parent: Layout
    k_width: int
    kind = "dot_op"


@dataclass(frozen=True)
class Linear:
    register: tuple[tuple[int, ...], ...]
    lane: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]
    kind = "linear"


@dataclass(frozen=True)
class Opaque:
    """An encoding without a register count here (shared memory, tensor memory, a newer kind)."""

    text: str
    kind = "other"


Layout = Blocked | Slice | AmdMfma | AmdWmma | NvidiaMma | DotOperand | Linear | Opaque


# ---- reading attribute text ----

_ALIAS_RE = re.compile(r"^(#[\w.$-]+)\s*=\s*(#(?:ttg|ttng|amdg)\.[\w]+<.*>)\s*$", re.M)


def layout_aliases(text: str) -> dict[str, str]:
    """``#mma = #ttg.amd_mfma<{...}>`` lines of a TTGIR module: alias -> attribute text."""
    return {m.group(1): m.group(2) for m in _ALIAS_RE.finditer(text)}


def _ints(body: str, key: str) -> tuple[int, ...] | None:
    m = re.search(rf"\b{key}\s*=\s*\[([^\]]*)\]", body)
    if not m:
        return None
    return tuple(int(x) for x in m.group(1).split(",") if x.strip())


def _int(body: str, key: str) -> int | None:
    m = re.search(rf"\b{key}\s*=\s*(-?\d+)", body)
    return int(m.group(1)) if m else None


def _bases(body: str, key: str) -> tuple[tuple[int, ...], ...]:
    m = re.search(rf"\b{key}\s*=\s*\[((?:\s*\[[^\]]*\]\s*,?)*)\]", body)
    if not m:
        return ()
    return tuple(tuple(int(x) for x in b.split(",") if x.strip()) for b in re.findall(r"\[([^\]]*)\]", m.group(1)))


def _split_parent(body: str) -> tuple[str, str]:
    """The ``parent = ...`` attribute of a slice / dot_op body (nested brackets balanced) and the rest."""
    at = body.find("parent")
    if at < 0:
        raise LayoutError(f"no parent in {body!r}")
    start = body.index("=", at) + 1
    while body[start] == " ":
        start += 1
    depth = 0
    end = start
    while end < len(body):
        c = body[end]
        if c in "<{[(":
            depth += 1
        elif c in ">}])":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        end += 1
    return body[start:end].strip(), body[:at] + body[end:]


def _warps(body: str) -> tuple[int, ...]:
    """``warpsPerCTA = [4, 1]``, or the same read off ``ctaLayout = {warp = [[1, 0], [2, 0]]}`` (Triton
    3.9 prints WMMA warps as linear bases, in tiles: each base doubles the warps along its dim)."""
    given = _ints(body, "warpsPerCTA")
    if given:
        return given
    m = re.search(r"ctaLayout\s*=\s*\{(.*?)\}\s*(?:,|$)", body, re.S)
    bases = _bases(m.group(1), "warp") if m else ()
    rank = max((len(b) for b in bases), default=2)
    warps = [1] * rank
    for b in bases:
        dims = [d for d, c in enumerate(b) if c]
        if len(dims) == 1:
            warps[dims[0]] *= 2
    return tuple(warps)


def _transposed(body: str) -> bool:
    return re.search(r"\bisTransposed?\s*=\s*true", body) is not None


def parse_layout(text: str, aliases: dict[str, str] | None = None) -> Layout:
    """One encoding attribute (``#mma`` through ``aliases``, or inline ``#ttg.slice<{...}>``)."""
    aliases = aliases or {}
    text = text.strip()
    seen = 0
    while text in aliases:
        text = aliases[text].strip()
        seen += 1
        if seen > 16:
            raise LayoutError(f"alias cycle at {text!r}")
    m = re.match(r"^#(\w+)\.(\w+)<\{(.*)\}>$", text, re.S)
    if not m:
        return Opaque(text)
    kind, body = m.group(2), m.group(3)
    if kind == "blocked":
        return Blocked(_ints(body, "sizePerThread") or (), _ints(body, "threadsPerWarp") or (),
                       _ints(body, "warpsPerCTA") or (), _ints(body, "order") or ())
    if kind == "slice":
        parent, rest = _split_parent(body)
        return Slice(dim=_int(rest, "dim") or 0, parent=parse_layout(parent, aliases))
    if kind == "dot_op":
        parent, rest = _split_parent(body)
        return DotOperand(op_idx=_int(rest, "opIdx") or 0, parent=parse_layout(parent, aliases),
                          k_width=_int(rest, "kWidth") or 0)
    if kind == "amd_mfma":
        if _int(body, "elementBitWidth") == 64:  # fp64 MFMA tiles differ; not produced by these kernels
            return Opaque(text)
        return AmdMfma(version=_int(body, "version") or 0, warps_per_cta=_warps(body),
                       instr_shape=_ints(body, "instrShape") or (), transposed=_transposed(body),
                       tiles_per_warp=_ints(body, "tilesPerWarp"))
    if kind == "amd_wmma":
        return AmdWmma(version=_int(body, "version") or 1, warps_per_cta=_warps(body), transposed=_transposed(body))
    if kind == "nvidia_mma":
        return NvidiaMma(version_major=_int(body, "versionMajor") or 0, version_minor=_int(body, "versionMinor") or 0,
                         warps_per_cta=_warps(body), instr_shape=_ints(body, "instrShape") or ())
    if kind == "linear":
        return Linear(register=_bases(body, "register"), lane=_bases(body, "lane"), warp=_bases(body, "warp"))
    return Opaque(text)


# ---- counting ----

@dataclass(frozen=True)
class _Dim:
    """One tensor dim of a product layout: register base offsets inside a tile, and the tile's size."""

    reg: tuple[int, ...]
    tile: int

    def held(self, size: int) -> int:
        inside = sum(1 for r in self.reg if r < size)
        return int(2 ** inside) * max(1, size // self.tile)


def _pow2s(n: int, start: int = 1) -> tuple[int, ...]:
    """start, 2*start, ... below start * n (the register bases of n consecutive elements)."""
    return tuple(start << i for i in range(int(math.log2(n)))) if n > 1 else ()


def _mfma_dims(lay: AmdMfma, rank: int) -> list[_Dim]:
    m_dim = lay.instr_shape[0] if lay.instr_shape else 32
    # 32x32: a lane holds 4 consecutive rows, skips 4 (another lane group), 4 more, ...: bases 1, 2, 8, 16
    reg_tile = (1, 2, 8, 16) if m_dim == 32 else (1, 2) if m_dim == 16 else None
    if reg_tile is None:
        raise LayoutError(f"MFMA {m_dim}x{m_dim} tiles are not counted here")
    reg_axis = rank - 1 if lay.transposed else rank - 2
    tiles = lay.tiles_per_warp or (1,) * rank
    dims = []
    for d in range(rank):
        if d < rank - 2:  # batch: one per warp along it
            dims.append(_Dim((), lay.warps_per_cta[d]))
            continue
        own = reg_tile if d == reg_axis else ()
        t = tiles[d] if d < len(tiles) else 1
        dims.append(_Dim(own + _pow2s(t, m_dim), m_dim * t * lay.warps_per_cta[d]))
    return dims


def _wmma_dims(lay: AmdWmma, rank: int) -> list[_Dim]:
    # a 16x16 tile per warp; version 1 (RDNA3): 8 rows per lane two apart (lanes 16-31 take the odd rows);
    # version 2+: 8 consecutive rows, lanes 16-31 take the next 8
    reg_tile = (2, 4, 8) if lay.version == 1 else (1, 2, 4)
    reg_axis = rank - 1 if lay.transposed else rank - 2
    return [_Dim((), lay.warps_per_cta[d]) if d < rank - 2 else
            _Dim(reg_tile if d == reg_axis else (), 16 * lay.warps_per_cta[d]) for d in range(rank)]


def _nvidia_mma_dims(lay: NvidiaMma, rank: int) -> list[_Dim]:
    # v2 (mma.sync m16n8): rows r and r+8, columns 2c and 2c+1 per lane; v3 (wgmma m64nN): the same
    # 16x8 pattern repeated N/8 times along N inside one instruction
    n = lay.instr_shape[1] if len(lay.instr_shape) > 1 else 8
    dims = [_Dim((), lay.warps_per_cta[d]) for d in range(rank - 2)]
    dims.append(_Dim((8,), 16 * lay.warps_per_cta[rank - 2]))
    dims.append(_Dim((1,) + _pow2s(n // 8, 8), n * lay.warps_per_cta[rank - 1]))
    return dims


def _dot_dims(lay: DotOperand, rank: int) -> list[_Dim]:
    parent = lay.parent
    k_axis = rank - 1 if lay.op_idx == 0 else rank - 2
    nonk_axis = rank - 2 if lay.op_idx == 0 else rank - 1
    kw = lay.k_width
    dims: list[_Dim] = [_Dim((), 1)] * rank
    if isinstance(parent, AmdMfma):
        nonk = parent.instr_shape[lay.op_idx] if parent.instr_shape else 32
        groups = 64 // nonk  # lane groups along K: 2 for 32-wide tiles, 4 for 16-wide
        dims[nonk_axis] = _Dim((), nonk * parent.warps_per_cta[nonk_axis])
        dims[k_axis] = _Dim(_pow2s(kw), kw * groups)
    elif isinstance(parent, AmdWmma):
        groups = 1 if parent.version == 1 else 2  # RDNA3: lanes 16-31 repeat lanes 0-15
        dims[nonk_axis] = _Dim((), 16 * parent.warps_per_cta[nonk_axis])
        dims[k_axis] = _Dim(_pow2s(kw), kw * groups)
    elif isinstance(parent, NvidiaMma):
        # A (16 x 4*2*kWidth): rows r, r+8; per row kWidth consecutive k at 4 lane columns, twice
        if lay.op_idx == 0:
            dims[nonk_axis] = _Dim((8,), 16 * parent.warps_per_cta[nonk_axis])
        else:
            dims[nonk_axis] = _Dim((), 8 * parent.warps_per_cta[nonk_axis])
        dims[k_axis] = _Dim(_pow2s(kw) + (4 * kw,), 8 * kw)
    else:
        raise LayoutError(f"dot operand of a {parent.kind} layout is not counted here")
    for d in range(rank - 2):
        dims[d] = _Dim((), parent.warps_per_cta[d])
    return dims


def _product_dims(lay: Layout, rank: int) -> list[_Dim]:
    if isinstance(lay, Blocked):
        return [_Dim(_pow2s(lay.size_per_thread[d]),
                     lay.size_per_thread[d] * lay.threads_per_warp[d] * lay.warps_per_cta[d]) for d in range(rank)]
    if isinstance(lay, AmdMfma):
        return _mfma_dims(lay, rank)
    if isinstance(lay, AmdWmma):
        return _wmma_dims(lay, rank)
    if isinstance(lay, NvidiaMma):
        return _nvidia_mma_dims(lay, rank)
    if isinstance(lay, DotOperand):
        return _dot_dims(lay, rank)
    raise LayoutError(f"{lay.kind} layout is not a product layout")


def _gf2_rank(vectors: list[tuple[int, ...]]) -> int:
    width = max((max(v) for v in vectors if v), default=1).bit_length() or 1
    basis: list[int] = []
    for v in vectors:
        x = 0
        for c in v:
            x = (x << width) | c
        for b in basis:
            x = min(x, x ^ b)
        if x:
            basis.append(x)
    return len(basis)


def _clip(base: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """A linear layout's basis on a tensor of ``shape``: offsets past a (power-of-two) dim wrap around,
    so the part at or above the dim's size is dropped (a size-1 dim keeps nothing: a broadcast)."""
    return tuple(c & (s - 1) for c, s in zip(base, shape))


def elements_per_lane(layout: Layout, shape: tuple[int, ...]) -> int:
    """Distinct elements of a tensor of ``shape`` one lane holds in ``layout``."""
    if isinstance(layout, Linear):
        return int(2 ** _gf2_rank([_clip(b, shape) for b in layout.register]))
    if isinstance(layout, Slice):
        parent_shape = shape[:layout.dim] + (1,) + shape[layout.dim:]
        if isinstance(layout.parent, Linear):
            kept = [_clip(b[:layout.dim] + b[layout.dim + 1:], shape) for b in layout.parent.register]
            return int(2 ** _gf2_rank(kept))
        if isinstance(layout.parent, Slice):
            return elements_per_lane(layout.parent, parent_shape)
        dims = _product_dims(layout.parent, len(parent_shape))
        return math.prod(d.held(s) for i, (d, s) in enumerate(zip(dims, parent_shape)) if i != layout.dim)
    if isinstance(layout, Opaque):
        raise LayoutError(f"no register count for the layout {layout.text[:60]}")
    dims = _product_dims(layout, len(shape))
    return math.prod(d.held(s) for d, s in zip(dims, shape))


def element_bits(dtype: str) -> int:
    """Bits of one element of an MLIR element type (``f32``, ``bf16``, ``i1``, ``!tt.ptr<f16>``)."""
    if dtype.startswith("!tt.ptr"):
        return 64
    m = re.fullmatch(r"(?:[a-z]*?)(\d+)(?:[A-Za-z0-9]*)", dtype)
    if dtype.startswith(("f8", "f6", "f4")):
        return int(dtype[1])
    if not m:
        raise LayoutError(f"unknown element type {dtype!r}")
    return int(m.group(1))


def registers_per_lane(layout: Layout, shape: tuple[int, ...], dtype: str) -> int:
    """32-bit registers one lane needs for its share of the tensor (module docstring: the rules)."""
    elems = elements_per_lane(layout, shape)
    bits = element_bits(dtype)
    if bits == 1:
        return elems
    return math.ceil(elems * bits / 32)


def describe(layout: Layout) -> str:
    """A short human name: ``mfma 32x32 T``, ``slice(1, mfma 32x32 T)``, ``dot_op(A, mfma 32x32 T, k4)``."""
    if isinstance(layout, Blocked):
        return f"blocked {'x'.join(map(str, layout.size_per_thread))}/thr"
    if isinstance(layout, Slice):
        return f"slice({layout.dim}, {describe(layout.parent)})"
    if isinstance(layout, DotOperand):
        return f"dot_op({'AB'[layout.op_idx]}, {describe(layout.parent)}, k{layout.k_width})"
    if isinstance(layout, AmdMfma):
        shape = "x".join(map(str, layout.instr_shape[:2]))
        return f"mfma {shape}{' T' if layout.transposed else ''}"
    if isinstance(layout, AmdWmma):
        return f"wmma v{layout.version}{' T' if layout.transposed else ''}"
    if isinstance(layout, NvidiaMma):
        shape = "x".join(map(str, layout.instr_shape[:2]))
        return f"mma v{layout.version_major} {shape}"
    if isinstance(layout, Linear):
        return "linear"
    return layout.text[:24]
