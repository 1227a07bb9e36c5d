"""Benchmark cases: problem shapes, the presets, and the FLOP count of each."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from ..core.errors import UsageError


@dataclass(frozen=True)
class Case:
    batch: int
    heads: int
    seqlen_q: int
    seqlen_k: int
    head_dim: int
    causal: bool
    dtype: str
    kv_heads: int | None = None  # K/V heads (grouped-query attention); None: as many as query heads

    @classmethod
    def of(cls, shape: tuple[int, ...], head_dim: int, causal: bool, dtype: str) -> Case:
        """From (B, H, Nq, Nk) or (B, H, Nq, Nk, H_kv)."""
        b, h, nq, nk, *rest = shape
        hkv = rest[0] if rest and rest[0] != h else None
        return cls(b, h, nq, nk, head_dim, causal, dtype, hkv)

    @property
    def kv(self) -> int:
        return self.kv_heads or self.heads

    @property
    def shape(self) -> tuple[int, ...]:
        """(B, H, Nq, Nk), with H_kv appended under grouped-query attention (AttentionConfig.shape)."""
        base = (self.batch, self.heads, self.seqlen_q, self.seqlen_k)
        return base + ((self.kv,) if self.kv != self.heads else ())

    @property
    def flops(self) -> float:
        """4*B*H*Nq*Nk*D (two matmuls), halved for causal with Nq = Nk (anchors.md)."""
        f = 4.0 * self.batch * self.heads * self.seqlen_q * self.seqlen_k * self.head_dim
        if self.causal and self.seqlen_q == self.seqlen_k:
            f /= 2
        return f

    def label(self) -> str:
        c = " causal" if self.causal else ""
        kv = f" Hkv{self.kv}" if self.kv != self.heads else ""
        return (f"B{self.batch} H{self.heads}{kv} Nq{self.seqlen_q} Nk{self.seqlen_k} D{self.head_dim} "
                f"{self.dtype}{c}")

    def input_bytes(self) -> int:
        """q, k, v and o in memory (2 bytes an element): the fewest bytes a launch moves from and to DRAM
        (Q, K, V read once, O written once)."""
        return 2 * self.batch * self.head_dim * (2 * self.heads * self.seqlen_q + 2 * self.kv * self.seqlen_k)


# Rows: (B, H, Nq, Nk, D, causal, H_kv).
# prefill: B4 H32 N{1024,4096,16384} D{64,128}, causal and not (issue 5)
PREFILL = [(4, 32, n, n, d, c, 32) for n, d, c in product((1024, 4096, 16384), (64, 128), (False, True))]
# decode, long K/V, D128 (issue 13): multi-head B1 H32 Nq1; grouped-query H32 over 8 K/V heads (Llama 3, Qwen,
# Mistral) at Nq 1 and 16 (speculative decoding, a few sequences), Nk 8k to 128k; one multi-query case
DECODE = ([(1, 32, 1, nk, 128, False, 32) for nk in (8192, 65536, 131072)]
          + [(1, 32, 1, nk, 128, False, 8) for nk in (8192, 32768, 65536, 131072)]
          + [(8, 32, 16, nk, 128, False, 8) for nk in (8192, 32768)]
          + [(1, 32, 16, 131072, 128, False, 8), (4, 32, 1, 32768, 128, False, 1)])
# grouped-query prefill: B4 H32 over 8 K/V heads, N{1024,4096} D128, causal and not
GQA = [(4, 32, n, n, 128, c, 8) for n, c in product((1024, 4096), (False, True))]
PRESETS = {"prefill": PREFILL, "decode": DECODE, "gqa": GQA}


def parse_shape(text: str) -> tuple[int, ...]:
    """'B,H,Nq,Nk[,Hkv]' -> (B, H, Nq, Nk) or (B, H, Nq, Nk, H_kv). Three numbers are refused, not read as
    Nq = Nk: a shape with a length missing is more often a typo than a shorthand."""
    try:
        parts = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    except ValueError:
        parts = []
    if len(parts) not in (4, 5) or min(parts) < 1:
        raise UsageError(f"shape {text!r} is not allowed; give B,H,Nq,Nk[,Hkv] as positive integers")
    if len(parts) == 5 and parts[1] % parts[4]:
        raise UsageError(f"shape {text!r}: Hkv {parts[4]} does not divide H {parts[1]}; allowed: a divisor of H")
    return tuple(parts)


def build_cases(shapes: list[str] | None, preset: str | None, head_dim: int | None, dtype: str,
                causal: bool | None, kv_heads: int | None = None) -> list[Case]:
    """Cases from --shape (repeatable) or --preset; --head-dim and --causal narrow or set them;
    --kv-heads sets H_kv of the --shape cases that do not give it."""
    if preset is not None and preset not in PRESETS:
        raise UsageError(f"unknown preset {preset!r}; valid: {', '.join(PRESETS)}")
    cases: list[Case] = []
    if preset:
        for b, h, nq, nk, d, c, hkv in PRESETS[preset]:
            if head_dim is not None and d != head_dim:
                continue
            if causal is not None and c != causal:
                continue
            cases.append(Case.of((b, h, nq, nk, hkv), d, c, dtype))
    for s in shapes or []:
        shape = parse_shape(s)
        if len(shape) == 4 and kv_heads is not None:
            if shape[1] % kv_heads:
                raise UsageError(f"--kv-heads {kv_heads} does not divide H {shape[1]} of shape {s!r}; "
                                 "allowed: a divisor of H")
            shape = (*shape, kv_heads)
        cases.append(Case.of(shape, head_dim or 128, bool(causal), dtype))
    if not cases:
        cases.append(Case(4, 32, 4096, 4096, head_dim or 128, bool(causal), dtype))
    return list(dict.fromkeys(cases))
