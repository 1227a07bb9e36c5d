"""split-k: the K/V range of each query block is split over programs; a merge kernel combines them (seed 002 A).

Kernel 1, ``attn_fwd_split``, grid (query blocks, B*H, S): the FA2 loop (full then masked blocks) over
split s's run of the query block's key blocks, then the partial result is written unnormalised to fp32
workspaces: A_s = sum_j exp2(s_j - m_s) V_j, m_s (log2-domain row max), l_s = sum_j exp2(s_j - m_s).
Kernel 2, ``attn_merge`` (WEIGHTED): M = max_s m_s; O = sum_s exp2(m_s - M) A_s / sum_s exp2(m_s - M) l_s.
A split that saw no key (a short causal row, or a split past the row's last key block) has l_s = 0 and
m_s = -inf: its weight is exp2(-inf) = 0, and a row no split saw is written as zeros, never NaN.

The split count S comes from the shape and the GPU: the most splits whose programs (query blocks x B*H, or
packed blocks x B*H_kv at decode, times S) still fit one per SM / CU: one wave (the device's count when
launching, the arch table's when compiling), never more than the ceil(Nk/BLOCK_N) key blocks;
knob ``num_splits`` (extra) sets it, and more splits than key blocks is refused. Registers: the same
live state as baseline per program, but each program's loop is S times shorter; what it buys is
parallelism for small B*H*Nq (decode, long Nk), paid for in the fp32 partials written and read back.
"""

import triton
import triton.language as tl

from ._fa_common import LOG2E, fa2_attend, tile_ok
from ._launch import (
    check_common,
    check_num_splits,
    device_compute_units,
    example_args,
    fa_constexprs,
    grid_of,
    launch_args,
    num_splits,
    run,
    spec,
    tensor_shape,
    workspace_example_args,
    workspaces,
)
from ._multipass import attn_merge, launch_merge, merge_constexprs, query_block, split_bounds, split_rows

VARIANT = {
    "name": "split-k",
    "strategy": "K/V range split over programs; each writes unnormalised fp32 (acc, m, l); a merge kernel combines them",
    "seed": "002 A",
    "trades": "shorter per-program loops and more programs vs fp32 partials written and read back",
    "kernels": ["attn_fwd_split", "attn_merge"],
    "order": 3,
    "knobs": ["num_splits", "tma"],  # variant-specific knobs (`--knob NAME=VALUE`)
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2}},
    # sm_86 / sm_89 / sm_120 allow 101376 B of shared memory per block; at head dims 129-256 (tiles of 256) the
    # defaults take 147456 B (2 stages) or 114688 B (1 stage); 128 x 32 in 1 stage takes 90112 B
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120"], "head_dim": [129, 256],
                      "set": {"block_n": 32, "num_stages": 1}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "S*(Nq*D*e) + Tq*2*(rho*Nk*D*e) + S*Nq*(D+2)*4",
        "written": "S*Nq*(D+2)*4 + Nq*D*e",
        "flops": "2*(2*P*D)",
        "formula": "read = S*Nq*D*e (each split loads Q) + Tq * 2*rho*Nk*D*e + S*Nq*(D+2)*4 (merge reads the "
                   "partials A_s, m_s, l_s); written = S*Nq*(D+2)*4 (partials) + Nq*D*e; FLOPs = 4*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop (explain): tile -> [rows, columns, bytes per
    # element], spread over the program's threads (vgprscope/flashattn/live.py)
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "q": ["BLOCK_M", "Dp", "e"], "s": ["BLOCK_M", "BLOCK_N", 4],
                   "m_l": [2, "BLOCK_M", 4]},
    # one query tile per program in the FA2 loop: decode tiles, and sm_90's measured prefill tiles
    # (vgprscope/flashattn/tuning.py)
    "tiling": "fa2",
}


@triton.jit(do_not_specialize=["seqlen_q", "seqlen_k", "num_splits"])
def attn_fwd_split(Q, K, V, Acc, M, L, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                   stride_vb, stride_vh, stride_vn, num_heads, kv_group, seqlen_q, seqlen_k, num_splits,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, HEAD_DIM: tl.constexpr,
                   CAUSAL: tl.constexpr, PACK: tl.constexpr, TMA: tl.constexpr):
    offs_m, bh, first, last, offs_d, q, k_base, v_base = query_block(Q, K, V, stride_qb, stride_qh, stride_qm,
                                                                     stride_kb, stride_kh, stride_vb, stride_vh,
                                                                     num_heads, kv_group, seqlen_q, BLOCK_M,
                                                                     BLOCK_D, HEAD_DIM, PACK, CAUSAL)
    lo, mid, hi = split_bounds(first, last, seqlen_q, seqlen_k, num_splits, BLOCK_N, CAUSAL, True)
    acc, l_i, m_i = fa2_attend(q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q, seqlen_k,
                               sm_scale * LOG2E, lo, mid, hi, BLOCK_M, BLOCK_N, BLOCK_D, HEAD_DIM, CAUSAL, False, 0,
                               TMA)
    rows = split_rows(bh, offs_m, seqlen_q, tl.program_id(2), num_splits)
    tl.store(Acc + rows[:, None] * HEAD_DIM + offs_d[None, :], acc, mask=tile_ok(offs_m, offs_d, seqlen_q, HEAD_DIM))
    tl.store(M + rows, m_i, mask=offs_m < seqlen_q)
    tl.store(L + rows, l_i, mask=offs_m < seqlen_q)


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None."""
    return check_common(cfg, knobs=("num_splits", "tma")) or check_num_splits(cfg)


def kernel_specs(cfg):
    args = example_args(cfg) | workspace_example_args(num_splits(cfg))
    return [spec("attn_fwd_split", attn_fwd_split, args, fa_constexprs(cfg, cfg["head_dim"], cfg["causal"])),
            spec("attn_merge", attn_merge, args, merge_constexprs(cfg["head_dim"], True))]




def launch(q, k, v, causal, sm_scale, cfg):
    import torch

    cfg = cfg | {"shape": tensor_shape(q, k)}
    splits = num_splits(cfg, device_compute_units(q))
    o = torch.empty_like(q)
    args = launch_args(q, k, v, sm_scale, O=o, **workspaces(q, splits))
    run(attn_fwd_split, grid_of(q, k, cfg["block_m"]) + (splits,), args, fa_constexprs(cfg, q.shape[3], causal),
        cfg)
    launch_merge(q, args, cfg, weighted=True)
    return o
