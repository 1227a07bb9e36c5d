"""The correctness gate of a bench run: the very output being timed, checked on fresh random inputs.

A float64 reference of a whole prefill problem does not fit in memory (B4 H32 N16384 would need
hundreds of GB of scores), so the gate checks sampled rows of sampled heads exactly: for each sampled
(batch, head), a random set of query rows (always the first and the last) against all keys, in float64,
with the causal mask at the rows' real positions. The tolerances are vgprscope's per-dtype table.
"""

from __future__ import annotations

import math


def reference_rows(q_rows, row_idx, k, v, causal: bool, seqlen_q: int, sm_scale: float):
    """softmax(q K^T * scale [+ bottom-right causal]) V for some rows, float64; rows with no key -> 0."""
    import torch

    s = (q_rows.double() @ k.double().T) * sm_scale
    if causal:
        nk = k.shape[0]
        keys = torch.arange(nk, device=k.device)[None, :]
        s = s.masked_fill(keys > row_idx[:, None] + (nk - seqlen_q), float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    denom = p.sum(dim=-1, keepdim=True)
    return (p @ v.double()) / torch.where(denom == 0, torch.ones_like(denom), denom)


def sample_rows(seqlen_q: int, count: int, generator):
    import torch

    if seqlen_q <= count:
        return torch.arange(seqlen_q)
    picks = torch.randperm(seqlen_q, generator=generator)[: count - 2]
    return torch.unique(torch.cat([picks, torch.tensor([0, seqlen_q - 1])]))


def check_sampled(out, q, k, v, causal: bool, variant: str, dtype: str, rows: int = 256, seed: int = 0):
    """The NumericsVerdict of ``out`` against the float64 reference on sampled rows of two heads."""
    import torch

    from ..flashattn.correctness import check_output

    b, h, nq, d = q.shape
    group = h // k.shape[1]  # grouped-query attention: query head hi reads K/V head hi // group
    scale = 1.0 / math.sqrt(d)
    gen = torch.Generator().manual_seed(seed)
    got, want = [], []
    for bi, hi in dict.fromkeys([(0, 0), (b - 1, h - 1), (b // 2, h // 2)]):
        idx = sample_rows(nq, rows, gen).to(q.device)
        want.append(reference_rows(q[bi, hi, idx], idx, k[bi, hi // group], v[bi, hi // group], causal, nq, scale))
        got.append(out[bi, hi, idx])
    return check_output(torch.cat(got)[None, None], torch.cat(want)[None, None], dtype, variant)
