"""row-stream: the wrong loop order of seed 004, kept as a measured counter-example.

One program per BLOCK_M query rows (the rows per program; default 16), and inside it an outer loop over
those rows, one row at a time; for each row an inner loop streams every K/V block the row sees. The K/V
loop is the inner one, so no K/V tile is shared between rows: K and V are loaded once per query row,
Nq times in all, instead of once per query block (Nq / BLOCK_M times) as in every other variant. A single
row has no matrix shape, so the dots are CUDA-core / VALU multiply-adds (tl.sum of products), not MMA.

Live state per program is tiny (one row's q and acc, scalar m and l: the register saving is real); what it
costs is traffic: the K/V bytes grow by a factor of BLOCK_M over the baseline, which L2 absorbs only
while a head's K/V fits in it. Rows that see no key (causal, Nq > Nk) run no iteration and are zeros.
"""

import triton
import triton.language as tl

from ._fa_common import LOG2E, head_base
from ._launch import check_common, launch_one_kernel, one_kernel_specs

VARIANT = {
    "name": "row-stream",
    "strategy": "seed 004's wrong loop order: rows one at a time, each streaming all of K/V; no K/V reuse across rows",
    "seed": "004",
    "trades": "tiny live state vs K/V read once per query row (BLOCK_M x baseline's K/V bytes), no MMA",
    "kernels": ["attn_fwd_rows"],
    "order": 7,
    "defaults": {"block_m": 16, "block_n": 64, "num_warps": 4, "num_stages": {"amd": 1, "nvidia": 2}},
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "Nq*D*e + 2*P*D*e",
        "written": "Nq*D*e",
        "flops": "2*(2*P*D)",
        "formula": "read = Nq*D*e + 2*P*D*e (every query row streams K and V of each key it sees: no reuse across "
                   "rows, nor across a K/V head's group); written = Nq*D*e; FLOPs = 4*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop (explain): tile -> [rows, columns, bytes per
    # element], spread over the program's threads (vgprscope/flashattn/live.py); one query row at a time: a row
    # of acc and of q (fp32), one key block of scores, scalar m and l
    "live_state": {"acc": [1, "Dp", 4], "q": [1, "Dp", 4], "s": [1, "BLOCK_N", 4], "m_l": [1, 2, 4]},
    # BLOCK_M query rows per program, one at a time: no tile from the shape, never packs a group's rows
    "tiling": "rows",
}


@triton.jit(do_not_specialize=["seqlen_q", "seqlen_k"])
def attn_fwd_rows(Q, K, V, O, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                  stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om, num_heads, kv_group, seqlen_q,
                  seqlen_k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, HEAD_DIM: tl.constexpr,
                  CAUSAL: tl.constexpr):
    q_base = head_base(Q, num_heads, stride_qb, stride_qh)
    # grouped-query attention: query head h reads K/V head h // kv_group
    batch = tl.program_id(1) // num_heads
    kv_head = (tl.program_id(1) % num_heads) // kv_group
    k_base = K + batch * stride_kb + kv_head * stride_kh
    v_base = V + batch * stride_vb + kv_head * stride_vh
    o_base = head_base(O, num_heads, stride_ob, stride_oh)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    qk_scale = sm_scale * LOG2E
    for r in range(0, BLOCK_M):
        row = tl.program_id(0) * BLOCK_M + r
        # keys [0, n_keys) are the ones this row sees (bottom-right causal diagonal); none past the last row
        if CAUSAL:
            n_keys = tl.minimum(tl.maximum(row + seqlen_k - seqlen_q + 1, 0), seqlen_k)
        else:
            n_keys = seqlen_k
        n_keys = tl.where(row < seqlen_q, n_keys, 0)
        # a vector compare: Triton's interpreter turns (bool vector & bool scalar) into an int32 mask
        io_ok = d_ok & (row + tl.zeros([BLOCK_D], dtype=tl.int32) < seqlen_q)
        q = tl.load(q_base + row * stride_qm + offs_d, mask=io_ok, other=0.0).to(tl.float32)
        m_i = float("-inf")
        l_i = 0.0
        acc = tl.zeros([BLOCK_D], dtype=tl.float32)
        for start_n in range(0, n_keys, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            kv_ok = (offs_n[:, None] < n_keys) & d_ok[None, :]
            k = tl.load(k_base + offs_n[:, None] * stride_kn + offs_d[None, :], mask=kv_ok, other=0.0)
            s = tl.sum(k.to(tl.float32) * q[None, :], 1) * qk_scale
            s = tl.where(offs_n < n_keys, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 0))  # finite: every block of the loop holds a key of the row
            alpha = tl.math.exp2(m_i - m_new)
            p = tl.math.exp2(s - m_new)
            l_i = l_i * alpha + tl.sum(p, 0)
            v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :], mask=kv_ok, other=0.0)
            acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), 0)
            m_i = m_new
        o = acc / tl.where(l_i == 0.0, 1.0, l_i)
        tl.store(o_base + row * stride_om + offs_d, o.to(O.dtype.element_ty), mask=io_ok)


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None; BLOCK_M is the rows per program."""
    return check_common(cfg)


def kernel_specs(cfg):
    return one_kernel_specs("attn_fwd_rows", attn_fwd_rows, cfg)


def launch(q, k, v, causal, sm_scale, cfg):
    return launch_one_kernel(attn_fwd_rows, q, k, v, causal, sm_scale, cfg)
