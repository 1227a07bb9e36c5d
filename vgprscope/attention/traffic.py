"""Analytic models of the bundled variants: memory traffic and work (seed 004), live state (seed 001).

Traffic counts the bytes each variant's kernels load from and store to global memory for the config's
reference problem (B, H, Nq, Nk[, H_kv]) = ``config.shape``: what the kernels ask for, with no cache model, so
a re-read that L2 serves counts like one from DRAM. It is what the strategies trade registers against.
``min_dram_bytes`` is the other bound: Q, K, V and O each moved once, what any kernel must move.

Notation (every variant's formula uses it):
  e   bytes per element of q, k, v, o (2 for fp16 and bf16); 4 for the fp32 workspaces
  D   head dim; S splits (split-K variants)
  G   = H / H_kv query heads per K/V head (grouped-query attention; 1 for multi-head)
  Tq  K/V passes per (batch, query head): ceil(Nq / BLOCK_M) query blocks, each reading its K/V head; with
      decode packing (G > 1, Nq <= 16: a program holds the G*Nq rows of one K/V head's group),
      ceil(G*Nq / BLOCK_M) / G, the group's packed blocks shared among its G heads (row-stream never packs)
  P   visible (query, key) pairs per (batch, head): Nq*Nk, or with the bottom-right causal mask the area
      under the diagonal, Nq*Nk - Nq^2/2 if Nk >= Nq else Nk^2/2 (exactly half the square at Nq = Nk,
      the usual convention for attention FLOPs)
  rho = P / (Nq*Nk), the share of K/V a query block reads
  Kb  = ceil(Nk / BLOCK_N) key blocks
FLOPs are those of the matrix products, 2 per multiply-add: Q K^T and P V are 2*P*D each, 4*P*D per
(batch, head) in all; the softmax, the merges' weights and masks are not counted. Everything is per
(batch, head), then times B*H. Intensity = FLOPs / (bytes read + bytes written).

Only ``math`` and vgprscope's own light modules are imported; the split count and the packing come from
the kernels' own rules (``kernels/_launch``, plain Python) so the model and the launch never disagree; the
split count depends on the GPU's SM / CU count, given as the arch's (``compute_units``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..archs import Arch, get_arch
from ..errors import UnknownNameError
from .config import AttentionConfig

FP32 = 4
ELEMENT_BYTES = {"fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class Traffic:
    bytes_read: float
    bytes_written: float
    flops: float
    intensity: float  # FLOPs per byte moved
    formula: str  # the variant's formula, in the module's notation

    @property
    def bytes_total(self) -> float:
        return self.bytes_read + self.bytes_written


@dataclass(frozen=True)
class Problem:
    """The reference problem and the tiles of one config, in the module's notation."""

    bh: int  # B * H
    group: int  # G
    nq: int
    nk: int
    d: int
    e: int
    tq: float
    kb: int
    pairs: float  # P
    rho: float
    splits: int

    @classmethod
    def of(cls, config: AttentionConfig, compute_units: int | None = None, can_pack: bool = True) -> Problem:
        from ..kernels._launch import attention_grid, num_splits, problem

        b, h, nq, nk, hkv = problem(config.as_dict())
        blocks, columns = attention_grid(b, h, nq, hkv, config.block_m, can_pack)
        if not config.causal:
            pairs = float(nq * nk)
        elif nk >= nq:
            pairs = nq * nk - nq * nq / 2
        else:
            pairs = nk * nk / 2
        return cls(bh=b * h, group=h // hkv, nq=nq, nk=nk, d=config.head_dim, e=ELEMENT_BYTES[config.dtype],
                   tq=blocks * columns / (b * h), kb=math.ceil(nk / config.block_n), pairs=pairs,
                   rho=pairs / (nq * nk), splits=num_splits(config.as_dict(), compute_units))

    @property
    def q_bytes(self) -> float:  # Q, and O, of one (batch, head)
        return self.nq * self.d * self.e

    @property
    def kv_pass(self) -> float:  # K or V once, as far as the causal mask lets a query block read
        return self.rho * self.nk * self.d * self.e

    @property
    def mm_flops(self) -> float:  # one of the two matrix products
        return 2 * self.pairs * self.d

    @property
    def min_bytes(self) -> float:  # Q and O, and this head's share (1/G) of its K/V head, each once
        return 2 * self.q_bytes + 2 * self.nk * self.d * self.e / self.group


# Each model: Problem -> (read, written, flops) per (batch, head). The docstring is the formula shown.

def _baseline(p: Problem) -> tuple[float, float, float]:
    """read = Nq*D*e + Tq * 2*rho*Nk*D*e (Q once, K and V once per query block); written = Nq*D*e;
    FLOPs = 4*P*D"""
    return p.q_bytes + p.tq * 2 * p.kv_pass, p.q_bytes, 2 * p.mm_flops


def _remat_q(p: Problem) -> tuple[float, float, float]:
    """read = Nq*D*e * rho*Kb (Q re-read for every key block) + Tq * 2*rho*Nk*D*e; written = Nq*D*e;
    FLOPs = 4*P*D"""
    return p.q_bytes * p.rho * p.kb + p.tq * 2 * p.kv_pass, p.q_bytes, 2 * p.mm_flops


def _split_k(p: Problem) -> tuple[float, float, float]:
    """read = S*Nq*D*e (each split loads Q) + Tq * 2*rho*Nk*D*e + S*Nq*(D+2)*4 (merge reads the
    partials A_s, m_s, l_s); written = S*Nq*(D+2)*4 (partials) + Nq*D*e; FLOPs = 4*P*D"""
    partials = p.splits * p.nq * (p.d + 2) * FP32
    return p.splits * p.q_bytes + p.tq * 2 * p.kv_pass + partials, partials + p.q_bytes, 2 * p.mm_flops


def _two_phase(p: Problem) -> tuple[float, float, float]:
    """pass 1: read Nq*D*e + Tq*rho*Nk*D*e (Q, K), write 2*Nq*4 (m, l); pass 2: read Nq*D*e + 2*Nq*4 +
    Tq * 2*rho*Nk*D*e, write Nq*D*e. FLOPs = 2*P*D (pass 1 Q K^T) + 4*P*D (pass 2) = 6*P*D"""
    stats = 2 * p.nq * FP32
    read = (p.q_bytes + p.tq * p.kv_pass) + (p.q_bytes + stats + p.tq * 2 * p.kv_pass)
    return read, stats + p.q_bytes, 3 * p.mm_flops


def _split_k_two_phase(p: Problem) -> tuple[float, float, float]:
    """pass 1: read S*Nq*D*e + Tq*rho*Nk*D*e, write S*2*Nq*4; pass 2: read S*Nq*D*e + S*S*2*Nq*4 (every
    split combines all splits' m, l) + Tq * 2*rho*Nk*D*e, write S*Nq*D*4; merge: read S*Nq*D*4, write
    Nq*D*e. FLOPs = 6*P*D"""
    s = p.splits
    stats = s * 2 * p.nq * FP32
    partials = s * p.nq * p.d * FP32
    read = (s * p.q_bytes + p.tq * p.kv_pass) + (s * p.q_bytes + s * stats + p.tq * 2 * p.kv_pass) + partials
    return read, stats + partials + p.q_bytes, 3 * p.mm_flops


def _row_stream(p: Problem) -> tuple[float, float, float]:
    """read = Nq*D*e + 2*P*D*e (every query row streams K and V of each key it sees: no reuse across
    rows, nor across a K/V head's group); written = Nq*D*e; FLOPs = 4*P*D"""
    return p.q_bytes + 2 * p.pairs * p.d * p.e, p.q_bytes, 2 * p.mm_flops


# Variant name -> model. small-tiles and qk-fp16-acc move what baseline moves at their own config.
MODELS: dict[str, Callable[[Problem], tuple[float, float, float]]] = {
    "baseline": _baseline,
    "small-tiles": _baseline,
    "qk-fp16-acc": _baseline,
    "remat-q": _remat_q,
    "split-k": _split_k,
    "two-phase": _two_phase,
    "split-k-two-phase": _split_k_two_phase,
    "row-stream": _row_stream,
}


# Variants whose kernels never pack a group's rows (one query row at a time).
_NO_PACK = ("row-stream",)


def traffic(variant: str, config: AttentionConfig, compute_units: int | None = None) -> Traffic:
    """Bytes read and written, FLOPs and intensity of ``variant`` on config's reference shape.
    ``compute_units``: the GPU's SMs / CUs, which set split-k's split count (see ``kernels/_launch``)."""
    model = MODELS.get(variant)
    if model is None:
        raise UnknownNameError("variant of the traffic model", variant, list(MODELS))
    p = Problem.of(config, compute_units, can_pack=variant not in _NO_PACK)
    read, written, flops = (x * p.bh for x in model(p))
    formula = " ".join((model.__doc__ or "").split()) + " (per batch*head; times B*H)"
    return Traffic(bytes_read=read, bytes_written=written, flops=flops, intensity=flops / (read + written),
                   formula=formula)


def min_dram_bytes(config: AttentionConfig) -> float:
    """The fewest bytes any kernel moves from and to DRAM for config's problem: Q, K, V read once and O
    written once, B*H*Nq*D*e*2 + B*H_kv*Nk*D*e*2."""
    p = Problem.of(config)
    return p.min_bytes * p.bh


# ---- live state (seed 001): 32-bit registers per thread of the tensors that live across the K/V loop ----

def _tile_regs(rows: int, cols: int, bytes_per: int, threads: int) -> int:
    """A rows x cols tile spread over the threads, packed into 32-bit registers, rounded up: a thread
    holds whole registers (seed 001 rounds m_i, l_i's 0.5 register up to 1 the same way)."""
    return math.ceil(rows * cols * bytes_per / 4 / threads)


def live_state(config: AttentionConfig, arch: Arch | str, variant: str = "baseline") -> dict[str, int]:
    """Seed 001's estimate for the main loop of ``variant``: acc (BLOCK_M x Dp fp32), q (BLOCK_M x Dp,
    fp16/bf16 packed two per register; seed 001 counted it at fp32), s (the BLOCK_M x BLOCK_N fp32 score
    tile) and m/l (2 x BLOCK_M fp32), each over num_warps * wave size threads; Dp is the head dim padded
    to a power of two. Pointers, masks and the K/V operands are left out, as in the seed: the compiler's
    count is the truth, this is the model to hold it against."""
    a = get_arch(arch) if isinstance(arch, str) else arch
    threads = config.num_warps * a.wave_size
    from ..kernels._launch import next_pow2_dim

    dp = next_pow2_dim(config.head_dim)
    e = ELEMENT_BYTES[config.dtype]
    m, n = config.block_m, config.block_n
    state = {"acc": _tile_regs(m, dp, FP32, threads), "q": _tile_regs(m, dp, e, threads),
             "s": _tile_regs(m, n, FP32, threads), "m_l": _tile_regs(2, m, FP32, threads)}
    state = _LIVE_ADJUST.get(variant, lambda s, c, t, dp: s)(state, config, threads, dp)
    return state | {"total": sum(state.values()), "threads": threads}


_LIVE_ADJUST: dict[str, Callable[[dict[str, int], AttentionConfig, int, int], dict[str, int]]] = {
    # the score tile comes out of the dot in fp16
    "qk-fp16-acc": lambda s, c, t, dp: s | {"s": _tile_regs(c.block_m, c.block_n, 2, t)},
    # one BLOCK_M x BLOCK_DK slice of Q at a time, and only within a score block
    "remat-q": lambda s, c, t, dp: s | {"q": _tile_regs(c.block_m, min(c.get("block_dk", 32), dp),
                                                        ELEMENT_BYTES[c.dtype], t)},
    # one query row at a time: a row of acc and of q (fp32), one key block of scores, scalar m and l
    "row-stream": lambda s, c, t, dp: {"acc": _tile_regs(1, dp, FP32, t), "q": _tile_regs(1, dp, FP32, t),
                                       "s": _tile_regs(1, c.block_n, FP32, t), "m_l": _tile_regs(1, 2, FP32, t)},
}
