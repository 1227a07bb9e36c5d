"""baseline: FlashAttention-2 forward as in ROCm's `fwd_prefill.py` (seeds 000, 001).

One program per (query block, batch*head). Q is loaded once; `acc`, `m_i`, `l_i` and `q` stay live across
the whole K/V loop, which is called twice: over the key blocks that need no mask (no mask math at all),
then over the tail / diagonal blocks with the boundary and causal masks.
"""

import triton
import triton.language as tl

from ._fa_common import finalize, key_block_bounds, next_pow2_dim, online_softmax_step, score_mask
from ._launch import backend_options, contiguous_args, check_common

VARIANT = {
    "name": "baseline",
    "strategy": "FA2 online softmax; acc, m_i, l_i and q live across the K/V loop, called for full then masked blocks",
    "seed": "000, 001",
    "trades": "reference point: fewest bytes, longest live ranges",
    "kernels": ["attn_fwd"],
    "order": 0,
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2}},
}


@triton.jit
def _inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q, seqlen_k,
           qk_scale, blk_lo, blk_hi, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, PAD_D: tl.constexpr,
           MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    offs_n0 = tl.arange(0, BLOCK_N)
    for blk in range(blk_lo, blk_hi):
        offs_n = blk * BLOCK_N + offs_n0
        k_ptrs = k_base + offs_n[None, :] * stride_kn + offs_d[:, None]
        v_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :]
        if MASKED:
            k = tl.load(k_ptrs, mask=(offs_n[None, :] < seqlen_k) & (offs_d[:, None] < HEAD_DIM), other=0.0)
        elif PAD_D:
            k = tl.load(k_ptrs, mask=offs_d[:, None] < HEAD_DIM, other=0.0)
        else:
            k = tl.load(k_ptrs)
        qk = tl.dot(q, k) * qk_scale
        if MASKED:
            qk = score_mask(qk, offs_m, offs_n, seqlen_q, seqlen_k, CAUSAL)
        m_i, alpha, p, l_i = online_softmax_step(qk, m_i, l_i, MASKED)
        if MASKED:
            v = tl.load(v_ptrs, mask=(offs_n[:, None] < seqlen_k) & (offs_d[None, :] < HEAD_DIM), other=0.0)
        elif PAD_D:
            v = tl.load(v_ptrs, mask=offs_d[None, :] < HEAD_DIM, other=0.0)
        else:
            v = tl.load(v_ptrs)
        acc = acc * alpha[:, None]
        acc += tl.dot(p.to(v.dtype), v)
    return acc, l_i, m_i


@triton.jit(do_not_specialize=["seqlen_q", "seqlen_k"])
def attn_fwd(Q, K, V, O, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
             stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om, num_heads, seqlen_q, seqlen_k,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, HEAD_DIM: tl.constexpr,
             CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    off_b = bh // num_heads
    off_h = bh % num_heads
    PAD_D: tl.constexpr = BLOCK_D != HEAD_DIM

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q_ptrs = Q + off_b * stride_qb + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    q = tl.load(q_ptrs, mask=(offs_m[:, None] < seqlen_q) & (offs_d[None, :] < HEAD_DIM), other=0.0)
    k_base = K + off_b * stride_kb + off_h * stride_kh
    v_base = V + off_b * stride_vb + off_h * stride_vh

    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # LOG2E: scores in the log2 domain

    n_full, n_end = key_block_bounds(start_m, seqlen_q, seqlen_k, BLOCK_M, BLOCK_N, CAUSAL)
    acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q,
                           seqlen_k, qk_scale, 0, n_full, BLOCK_N, HEAD_DIM, PAD_D, False, CAUSAL)
    acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q,
                           seqlen_k, qk_scale, n_full, n_end, BLOCK_N, HEAD_DIM, PAD_D, True, CAUSAL)

    o = finalize(acc, l_i)
    o_ptrs = O + off_b * stride_ob + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, o.to(O.dtype.element_ty), mask=(offs_m[:, None] < seqlen_q) & (offs_d[None, :] < HEAD_DIM))


def check_config(cfg):
    """Why this variant cannot take ``cfg`` (a KernelConfig as a dict), or None."""
    return check_common(cfg)


def kernel_specs(cfg):
    """What to compile for ``cfg``: one spec per Triton kernel, args given as example launch values."""
    b, h, nq, nk = cfg["shape"]
    d = cfg["head_dim"]
    args = contiguous_args(cfg["dtype"], b, h, nq, nk, d, ("Q", "K", "V", "O"))
    args["sm_scale"] = d ** -0.5
    args["num_heads"] = h
    args["seqlen_q"], args["seqlen_k"] = nq, nk
    constexprs = {"BLOCK_M": cfg["block_m"], "BLOCK_N": cfg["block_n"], "BLOCK_D": next_pow2_dim(d),
                  "HEAD_DIM": d, "CAUSAL": bool(cfg["causal"])}
    return [{"name": "attn_fwd", "fn": attn_fwd, "args": args, "constexprs": constexprs}]


def launch(q, k, v, causal, sm_scale, cfg):
    """Run on real tensors (q, k, v contiguous, (B, H, N, D)); returns o like q."""
    import torch

    b, h, nq, d = q.shape
    nk = k.shape[2]
    o = torch.empty_like(q)
    grid = (triton.cdiv(nq, cfg["block_m"]), b * h)
    attn_fwd[grid](q, k, v, o, sm_scale, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                   h, nq, nk, BLOCK_M=cfg["block_m"], BLOCK_N=cfg["block_n"], BLOCK_D=next_pow2_dim(d),
                   HEAD_DIM=d, CAUSAL=bool(causal), **backend_options(cfg, q.device))
    return o
