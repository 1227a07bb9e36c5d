"""Benchmark cases: problem shapes, the presets, and the FLOP count of each."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from ..errors import UsageError


@dataclass(frozen=True)
class Case:
    batch: int
    heads: int
    seqlen_q: int
    seqlen_k: int
    head_dim: int
    causal: bool
    dtype: str

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (self.batch, self.heads, self.seqlen_q, self.seqlen_k)

    @property
    def flops(self) -> float:
        """4*B*H*Nq*Nk*D (two matmuls), halved for causal with Nq = Nk (anchors.md)."""
        f = 4.0 * self.batch * self.heads * self.seqlen_q * self.seqlen_k * self.head_dim
        if self.causal and self.seqlen_q == self.seqlen_k:
            f /= 2
        return f

    def label(self) -> str:
        c = " causal" if self.causal else ""
        return f"B{self.batch} H{self.heads} Nq{self.seqlen_q} Nk{self.seqlen_k} D{self.head_dim} {self.dtype}{c}"

    def input_bytes(self) -> int:
        """q, k, v and o in memory (2 bytes an element)."""
        return 2 * self.batch * self.heads * self.head_dim * (2 * self.seqlen_q + 2 * self.seqlen_k)


# prefill: B4 H32 N{1024,4096,16384} D{64,128}, causal and not (issue 5)
PREFILL = [(4, 32, n, n, d, c) for n, d, c in product((1024, 4096, 16384), (64, 128), (False, True))]
# decode-like, long K/V: B1 H32 Nq{1,16,64} Nk{8192,32768,131072} D128, where split-k must show its purpose
DECODE = [(1, 32, nq, nk, 128, False) for nq, nk in product((1, 16, 64), (8192, 32768, 131072))]
PRESETS = {"prefill": PREFILL, "decode": DECODE}


def parse_shape(text: str) -> tuple[int, int, int, int]:
    """'B,H,Nq,Nk' -> (B, H, Nq, Nk). Three numbers are refused, not read as Nq = Nk: a shape with a length
    missing is more often a typo than a shorthand."""
    try:
        parts = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    except ValueError:
        parts = []
    if len(parts) != 4 or min(parts) < 1:
        raise UsageError(f"shape {text!r} is not allowed; give B,H,Nq,Nk as positive integers")
    return tuple(parts)  # type: ignore[return-value]


def build_cases(shapes: list[str] | None, preset: str | None, head_dim: int | None, dtype: str,
                causal: bool | None) -> list[Case]:
    """Cases from --shape (repeatable) or --preset; --head-dim and --causal narrow or set them."""
    if preset is not None and preset not in PRESETS:
        raise UsageError(f"unknown preset {preset!r}; valid: {', '.join(PRESETS)}")
    cases: list[Case] = []
    if preset:
        for b, h, nq, nk, d, c in PRESETS[preset]:
            if head_dim is not None and d != head_dim:
                continue
            if causal is not None and c != causal:
                continue
            cases.append(Case(b, h, nq, nk, d, c, dtype))
    for s in shapes or []:
        b, h, nq, nk = parse_shape(s)
        cases.append(Case(b, h, nq, nk, head_dim or 128, bool(causal), dtype))
    if not cases:
        cases.append(Case(4, 32, 4096, 4096, head_dim or 128, bool(causal), dtype))
    return list(dict.fromkeys(cases))
