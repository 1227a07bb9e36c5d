"""Kernels of the variants that run in more than one pass: split-K, two-phase and both (seed 002 A, B).

Workspaces (all fp32, contiguous, written before they are read, so never initialised):
  M, L   (B*H, S, Nq)     per split s: row max m_s (log2 domain) and row sum l_s = sum exp2(s - m_s)
  Acc    (B*H, S, Nq, D)  per split s: partial output, unnormalised (split-k) or normalised (two-phase)
S = num_splits; without splits S = 1. Rows are addressed by (batch * H + query head, split, position) also
when the attention passes pack a K/V head's query group into one program (PACK, decode): the merge and the
workspaces never see the packing. A split is program_id(2): its share of the query block's key
blocks [0, n_end) is a run of ceil(n_end / S) blocks, so trailing splits of short (causal) rows may be
empty: such a split writes m = -inf, l = 0, acc = 0, which every merge below weighs to exactly zero.
"""

import triton
import triton.language as tl

from ._fa_common import LOG2E, STATS, VALUE, head_base, key_block_bounds, kv_loop, program_rows, row_ptrs, tile_ok
from ._launch import (
    device_compute_units,
    example_args,
    fa_constexprs,
    grid_of,
    launch_args,
    next_pow2_dim,
    num_splits,
    query_blocks,
    run,
    spec,
    tensor_shape,
    workspace_example_args,
    workspaces,
)


@triton.jit
def split_bounds(first, last, seqlen_q, seqlen_k, num_splits, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                 SPLIT: tl.constexpr):
    """This program's key blocks: [lo, mid) need no mask, [mid, hi) do. All of the query block's range
    (rows at positions [first, last)) without SPLIT; with SPLIT, split program_id(2)'s run of it."""
    n_full, n_end = key_block_bounds(first, last, seqlen_q, seqlen_k, BLOCK_N, CAUSAL)
    if SPLIT:
        per = tl.cdiv(n_end, num_splits)
        lo = tl.minimum(tl.program_id(2) * per, n_end)
        hi = tl.minimum(lo + per, n_end)
        mid = tl.minimum(tl.maximum(n_full, lo), hi)
    else:
        lo = 0
        mid = n_full
        hi = n_end
    return lo, mid, hi


@triton.jit
def split_rows(bh, offs_m, seqlen_q, split, num_splits):
    """Row indices of (batch*head bh, split, position offs_m) in the (B*H, S, Nq) workspaces, in int64:
    B*H*S*Nq*D outgrows int32 at long sequences with many splits. bh is a scalar, or one per row (PACK)."""
    return (bh.to(tl.int64) * num_splits + split) * seqlen_q + offs_m


@triton.jit
def query_block(Q, K, V, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_vb, stride_vh, num_heads,
                kv_group, seqlen_q, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr, HEAD_DIM: tl.constexpr,
                PACK: tl.constexpr, CAUSAL: tl.constexpr = False):
    """This program's query block (``program_rows``): row positions, their batch*head (scalar, or per row
    with PACK), the positions [first, last) they span, head-dim offsets, the Q tile (zeros past the last
    row and in the padded head-dim columns) and the K / V head bases."""
    offs_m, head, batch, kv_head, first, last = program_rows(num_heads, kv_group, seqlen_q, BLOCK_M, PACK, CAUSAL)
    offs_d = tl.arange(0, BLOCK_D)
    ptrs = row_ptrs(Q, batch, head, offs_m, stride_qb, stride_qh, stride_qm)[:, None] + offs_d[None, :]
    q = tl.load(ptrs, mask=tile_ok(offs_m, offs_d, seqlen_q, HEAD_DIM), other=0.0)
    k_base = K + batch * stride_kb + kv_head * stride_kh
    v_base = V + batch * stride_vb + kv_head * stride_vh
    return offs_m, batch * num_heads + head, first, last, offs_d, q, k_base, v_base


@triton.jit
def split_max(M, rows, row_ok, num_splits, seqlen_q):
    """max_s m_s of each row over the splits, and the same with -inf (no split saw a key) replaced by 0,
    the value to subtract in exp2 so those rows get weight exp2(-inf) = 0 and never NaN."""
    m = tl.full(rows.shape, float("-inf"), dtype=tl.float32)
    for s in range(num_splits):
        m = tl.maximum(m, tl.load(M + rows + s * seqlen_q, mask=row_ok, other=float("-inf")))
    return m, tl.where(m == float("-inf"), 0.0, m)


@triton.jit
def final_stats(M, L, bh, offs_m, seqlen_q, num_splits, SPLIT: tl.constexpr):
    """Pass 2's view of pass 1: the row max (0 for rows that see no key) and 1 / row sum (0 for them).
    With SPLIT, the splits' (m_s, l_s) are combined here: M = max m_s, L = sum exp2(m_s - M) l_s."""
    row_ok = offs_m < seqlen_q
    rows = split_rows(bh, offs_m, seqlen_q, 0, num_splits)
    if SPLIT:
        _, m = split_max(M, rows, row_ok, num_splits, seqlen_q)
        l = tl.zeros(rows.shape, dtype=tl.float32)
        for s in range(num_splits):
            m_s = tl.load(M + rows + s * seqlen_q, mask=row_ok, other=float("-inf"))
            l += tl.math.exp2(m_s - m) * tl.load(L + rows + s * seqlen_q, mask=row_ok, other=0.0)
    else:
        m = tl.load(M + rows, mask=row_ok, other=0.0)
        m = tl.where(m == float("-inf"), 0.0, m)
        l = tl.load(L + rows, mask=row_ok, other=0.0)
    return m, tl.where(l == 0.0, 0.0, 1.0 / tl.where(l == 0.0, 1.0, l))


@triton.jit(do_not_specialize=["seqlen_q", "seqlen_k", "num_splits"])
def attn_stats(Q, K, M, L, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn, num_heads,
               kv_group, seqlen_q, seqlen_k, num_splits, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_D: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr,
               PACK: tl.constexpr):
    """Two-phase pass 1: each row's max m and sum l = sum exp2(s - m) over its keys (the split's share of
    them with SPLIT). Reads Q and K only; live across the loop: q, m_i, l_i; no output accumulator."""
    # V is never read in this pass: K stands in for it
    offs_m, bh, first, last, offs_d, q, k_base, _ = query_block(Q, K, K, stride_qb, stride_qh, stride_qm,
                                                                stride_kb, stride_kh, stride_kb, stride_kh,
                                                                num_heads, kv_group, seqlen_q, BLOCK_M, BLOCK_D,
                                                                HEAD_DIM, PACK, CAUSAL)
    PAD_D: tl.constexpr = BLOCK_D != HEAD_DIM
    lo, mid, hi = split_bounds(first, last, seqlen_q, seqlen_k, num_splits, BLOCK_N, CAUSAL, SPLIT)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    _, l_i, m_i = kv_loop(0.0, l_i, m_i, q, k_base, k_base, stride_kn, stride_kn, offs_m, offs_d, seqlen_q,
                          seqlen_k, sm_scale * LOG2E, lo, mid, BLOCK_N, HEAD_DIM, PAD_D, False, CAUSAL, STATS)
    _, l_i, m_i = kv_loop(0.0, l_i, m_i, q, k_base, k_base, stride_kn, stride_kn, offs_m, offs_d, seqlen_q,
                          seqlen_k, sm_scale * LOG2E, mid, hi, BLOCK_N, HEAD_DIM, PAD_D, True, CAUSAL, STATS)
    rows = split_rows(bh, offs_m, seqlen_q, tl.program_id(2) if SPLIT else 0, num_splits)
    tl.store(M + rows, m_i, mask=offs_m < seqlen_q)
    tl.store(L + rows, l_i, mask=offs_m < seqlen_q)


@triton.jit(do_not_specialize=["seqlen_q", "seqlen_k", "num_splits"])
def attn_value(Q, K, V, O, M, L, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om, num_heads, kv_group, seqlen_q,
               seqlen_k, num_splits, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
               HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr, PACK: tl.constexpr):
    """Two-phase pass 2: O = sum_j exp2(s_j - m) / l * V_j with pass 1's final m, l: no running max, no
    rescale of acc. Recomputes Q K^T. Without SPLIT it writes O (the output); with SPLIT, the split's
    share of the already normalised sum goes to the fp32 workspace O = Acc, and a plain sum merges."""
    offs_m, bh, first, last, offs_d, q, k_base, v_base = query_block(Q, K, V, stride_qb, stride_qh, stride_qm,
                                                                     stride_kb, stride_kh, stride_vb, stride_vh,
                                                                     num_heads, kv_group, seqlen_q, BLOCK_M,
                                                                     BLOCK_D, HEAD_DIM, PACK, CAUSAL)
    PAD_D: tl.constexpr = BLOCK_D != HEAD_DIM
    m_i, inv_l = final_stats(M, L, bh, offs_m, seqlen_q, num_splits, SPLIT)
    lo, mid, hi = split_bounds(first, last, seqlen_q, seqlen_k, num_splits, BLOCK_N, CAUSAL, SPLIT)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    acc, _, _ = kv_loop(acc, inv_l, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q,
                        seqlen_k, sm_scale * LOG2E, lo, mid, BLOCK_N, HEAD_DIM, PAD_D, False, CAUSAL, VALUE)
    acc, _, _ = kv_loop(acc, inv_l, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q,
                        seqlen_k, sm_scale * LOG2E, mid, hi, BLOCK_N, HEAD_DIM, PAD_D, True, CAUSAL, VALUE)
    if SPLIT:
        rows = split_rows(bh, offs_m, seqlen_q, tl.program_id(2), num_splits)
        o_ptrs = O + rows[:, None] * HEAD_DIM + offs_d[None, :]
    else:
        o_ptrs = row_ptrs(O, bh // num_heads, bh % num_heads, offs_m, stride_ob, stride_oh,
                          stride_om)[:, None] + offs_d[None, :]
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=tile_ok(offs_m, offs_d, seqlen_q, HEAD_DIM))


@triton.jit(do_not_specialize=["seqlen_q", "num_splits"])
def attn_merge(Acc, M, L, O, stride_ob, stride_oh, stride_om, num_heads, seqlen_q, num_splits,
               BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr, HEAD_DIM: tl.constexpr, WEIGHTED: tl.constexpr):
    """O from the splits' partials, one program per (query block, batch*head).

    WEIGHTED (split-k; partials A_s unnormalised with their m_s, l_s):
        M = max_s m_s;  O = sum_s exp2(m_s - M) A_s / sum_s exp2(m_s - M) l_s
    (the design's e^(m_s - M), in the log2 domain). Empty splits weigh exp2(-inf) = 0; a row no split saw
    has denominator 0 and is written as 0. Not WEIGHTED (split-k-two-phase; partials already divided by
    the final sum): O = sum_s A_s.
    """
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    row_ok = offs_m < seqlen_q
    ok = tile_ok(offs_m, offs_d, seqlen_q, HEAD_DIM)
    rows = split_rows(tl.program_id(1), offs_m, seqlen_q, 0, num_splits)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    if WEIGHTED:
        _, m_use = split_max(M, rows, row_ok, num_splits, seqlen_q)
        l = tl.zeros([BLOCK_M], dtype=tl.float32)
    for s in range(num_splits):
        part = tl.load(Acc + (rows + s * seqlen_q)[:, None] * HEAD_DIM + offs_d[None, :], mask=ok, other=0.0)
        if WEIGHTED:
            w = tl.math.exp2(tl.load(M + rows + s * seqlen_q, mask=row_ok, other=float("-inf")) - m_use)
            l += w * tl.load(L + rows + s * seqlen_q, mask=row_ok, other=0.0)
            acc += w[:, None] * part
        else:
            acc += part
    if WEIGHTED:
        acc = acc / tl.where(l == 0.0, 1.0, l)[:, None]
    o_ptrs = head_base(O, num_heads, stride_ob, stride_oh) + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=ok)


# ---- host side: constexprs, compile specs and launches of the multi-pass variants ----

def pass_constexprs(cfg, head_dim, causal, split):
    """The constexprs of attn_stats / attn_value."""
    return fa_constexprs(cfg, head_dim, causal, SPLIT=split)


# Rows per merge program. The merge streams S partial tiles and keeps one fp32 sum: a short tile keeps its
# registers low whatever BLOCK_M the attention kernels use (at 128 x 128 it took 200 registers on sm_90).
MERGE_BLOCK_M = 32


def merge_constexprs(head_dim, weighted):
    return {"BLOCK_M": MERGE_BLOCK_M, "BLOCK_D": next_pow2_dim(head_dim), "HEAD_DIM": head_dim, "WEIGHTED": weighted}


def launch_merge(q, args, cfg, weighted):
    b, h, nq, d = q.shape
    run(attn_merge, (query_blocks(nq, MERGE_BLOCK_M), b * h), args, merge_constexprs(d, weighted), cfg)


def two_phase_specs(cfg, split):
    """Specs of two-phase (stats, value) or, with split, split-k-two-phase (stats, value, merge)."""
    splits = num_splits(cfg) if split else 1
    args = example_args(cfg) | workspace_example_args(splits)
    if split:
        args["O"] = "*fp32"  # the value pass writes its partials to the fp32 workspace
    c = pass_constexprs(cfg, cfg["head_dim"], cfg["causal"], split)
    specs = [spec("attn_stats", attn_stats, args, c), spec("attn_value", attn_value, args, c)]
    if split:
        specs.append(spec("attn_merge", attn_merge, example_args(cfg) | workspace_example_args(splits),
                          merge_constexprs(cfg["head_dim"], False)))
    return specs


def launch_two_phase(q, k, v, causal, sm_scale, cfg, split):
    import torch

    cfg = cfg | {"shape": tensor_shape(q, k)}
    splits = num_splits(cfg, device_compute_units(q)) if split else 1
    o = torch.empty_like(q)
    ws = workspaces(q, splits, partial_o=split)
    args = launch_args(q, k, v, sm_scale, O=o, **ws)
    c = pass_constexprs(cfg, q.shape[3], causal, split)
    grid = grid_of(q, k, cfg["block_m"]) + ((splits,) if split else ())
    run(attn_stats, grid, args, c, cfg)
    run(attn_value, grid, args | ({"O": ws["Acc"]} if split else {}), c, cfg)
    if split:
        launch_merge(q, args, cfg, weighted=False)
    return o
