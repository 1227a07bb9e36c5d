"""Plain torch reference for every variant: O = softmax(Q K^T * scale [+ causal]) V, in float64.

Causal masks are aligned bottom-right (query i sees key j iff j <= i + Nk - Nq); a row that sees no key
is zero, the convention every variant follows. k and v may have fewer heads than q (grouped-query
attention, H_kv dividing H): query head h reads K/V head h // (H / H_kv). Not a variant (no VARIANT), so
the registry skips it.
"""

import math


def attention_reference(q, k, v, causal=False, sm_scale=None, dtype=None):
    import torch

    dtype = dtype or torch.float64
    nq, nk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    if q.dim() == 4 and k.shape[1] != q.shape[1]:
        if q.shape[1] % k.shape[1]:
            raise ValueError(f"k has {k.shape[1]} heads, which does not divide q's {q.shape[1]}")
        group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(d)
    s = torch.matmul(q.to(dtype), k.to(dtype).transpose(-1, -2)) * scale
    if causal:
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        s = s.masked_fill(j > i + (nk - nq), float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    denom = p.sum(dim=-1, keepdim=True)
    o = torch.matmul(p, v.to(dtype)) / torch.where(denom == 0, torch.ones_like(denom), denom)
    return o
