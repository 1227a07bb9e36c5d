"""baseline: FlashAttention-2 forward as in ROCm's `fwd_prefill.py` (seeds 000, 001).

One program per (query block, batch*head), or with decode packing (Nq <= 16 under grouped-query attention)
per (block of packed rows, batch*kv_head): the rows of every query head that shares a K/V head, so each
K/V tile serves the whole group. Q is loaded once; `acc`, `m_i`, `l_i` and `q` stay live across
the whole K/V loop, which is called twice (``fa2_attend``): over the key blocks that need no mask (no mask
math at all), then over the tail / diagonal blocks with the boundary and causal masks.

The kernel's two extra constexprs are the knobs other variants turn on the same kernel: QK_FP16
(qk-fp16-acc) and BLOCK_DK (remat-q); both are off here. small-tiles runs it as is at smaller BLOCK_M.
"""

import triton
import triton.language as tl

from ._fa_common import LOG2E, fa2_attend, finalize, key_block_bounds, program_rows, row_ptrs, tile_ok
from ._launch import check_common, launch_one_kernel, one_kernel_specs

VARIANT = {
    "name": "baseline",
    "strategy": "FA2 online softmax; acc, m_i, l_i and q live across the K/V loop, called for full then masked blocks",
    "seed": "000, 001",
    "trades": "reference point: fewest bytes, longest live ranges",
    "kernels": ["attn_fwd"],
    "order": 0,
    "knobs": ["tma"],  # K/V through tensor descriptors (`--knob tma=1`; TMA on sm_90+)
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2}},
    # sm_86 / sm_89 / sm_120 allow 101376 B of shared memory per block; at head dims 129-256 (tiles of 256) the
    # defaults take 147456 B (2 stages) or 114688 B (1 stage); 128 x 32 in 1 stage takes 90112 B
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120"], "head_dim": [129, 256],
                      "set": {"block_n": 32, "num_stages": 1}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "Nq*D*e + Tq*2*(rho*Nk*D*e)",
        "written": "Nq*D*e",
        "flops": "2*(2*P*D)",
        "formula": "read = Nq*D*e + Tq * 2*rho*Nk*D*e (Q once, K and V once per query block); written = Nq*D*e; "
                   "FLOPs = 4*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop (explain): tile -> [rows, columns, bytes per
    # element], spread over the program's threads (vgprscope/flashattn/live.py)
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "q": ["BLOCK_M", "Dp", "e"], "s": ["BLOCK_M", "BLOCK_N", 4],
                   "m_l": [2, "BLOCK_M", 4]},
    # one query tile per program in the FA2 loop: decode tiles, and sm_90's measured prefill tiles
    # (vgprscope/flashattn/tuning.py)
    "tiling": "fa2",
}


@triton.jit(do_not_specialize=["seqlen_q", "seqlen_k"])
def attn_fwd(Q, K, V, O, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
             stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om, num_heads, kv_group, seqlen_q,
             seqlen_k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
             HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, PACK: tl.constexpr, QK_FP16: tl.constexpr,
             BLOCK_DK: tl.constexpr, TMA: tl.constexpr):
    tl.static_assert(not (TMA and BLOCK_DK > 0), "tma reads whole K tiles; remat-q (BLOCK_DK) slices them")
    offs_m, head, batch, kv_head, first, last = program_rows(num_heads, kv_group, seqlen_q, BLOCK_M, PACK, CAUSAL)
    offs_d = tl.arange(0, BLOCK_D)
    q_rows = row_ptrs(Q, batch, head, offs_m, stride_qb, stride_qh, stride_qm)[:, None]
    if BLOCK_DK == 0:
        q = tl.load(q_rows + offs_d[None, :], mask=tile_ok(offs_m, offs_d, seqlen_q, HEAD_DIM), other=0.0)
    else:
        q = q_rows  # remat-q: nothing of Q is held; the loop re-loads it a head-dim slice at a time
    k_base = K + batch * stride_kb + kv_head * stride_kh
    v_base = V + batch * stride_vb + kv_head * stride_vh
    qk_scale = sm_scale * LOG2E

    n_full, n_end = key_block_bounds(first, last, seqlen_q, seqlen_k, BLOCK_N, CAUSAL)
    acc, l_i, m_i = fa2_attend(q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q, seqlen_k,
                               qk_scale, 0, n_full, n_end, BLOCK_M, BLOCK_N, BLOCK_D, HEAD_DIM, CAUSAL, QK_FP16,
                               BLOCK_DK, TMA)

    o = finalize(acc, l_i)
    o_ptrs = row_ptrs(O, batch, head, offs_m, stride_ob, stride_oh, stride_om)[:, None] + offs_d[None, :]
    tl.store(o_ptrs, o.to(O.dtype.element_ty), mask=tile_ok(offs_m, offs_d, seqlen_q, HEAD_DIM))


def check_config(cfg):
    """Why this variant cannot take ``cfg`` (an AttentionConfig as a dict), or None."""
    return check_common(cfg, knobs=("tma",))


def kernel_specs(cfg, QK_FP16=False, BLOCK_DK=0):
    """What to compile for ``cfg``: one spec per Triton kernel, args given as example launch values.
    QK_FP16 / BLOCK_DK are the knobs qk-fp16-acc and remat-q turn on this kernel."""
    return one_kernel_specs("attn_fwd", attn_fwd, cfg, QK_FP16=QK_FP16, BLOCK_DK=BLOCK_DK)


def launch(q, k, v, causal, sm_scale, cfg, QK_FP16=False, BLOCK_DK=0):
    """Run on real tensors (q (B, H, Nq, D), k and v (B, H_kv, Nk, D), contiguous); returns o like q."""
    return launch_one_kernel(attn_fwd, q, k, v, causal, sm_scale, cfg, QK_FP16=QK_FP16, BLOCK_DK=BLOCK_DK)
