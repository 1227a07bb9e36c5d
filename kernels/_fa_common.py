"""Pieces every FlashAttention-style variant shares: key ranges, masks, tile loads, the K/V loop.

Conventions (all variants): q (B, H, Nq, D), k/v (B, H_kv, Nk, D) with H_kv dividing H (grouped-query
attention: query head h reads K/V head h // G, G = H / H_kv the group; G = 1 is plain multi-head, G = H is
multi-query), last dim contiguous. Causal masks are
aligned bottom-right: query row i sees key j iff j <= i + (Nk - Nq). A row that sees no key yields zeros.
Scores are kept in the log2 domain (scale * log2(e)) so the exponentials are exp2; row maxima that
variants write to memory (split-K, two-phase) are in that domain too.
"""

import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # scores in the log2 domain: exp(x) = exp2(x * LOG2E)

# What one pass of ``kv_loop`` does with each key block (a constexpr, so each pass compiles to its own loop).
ONLINE = tl.constexpr(0)  # FA2: running max and sum, acc rescaled by alpha every block
STATS = tl.constexpr(1)  # two-phase pass 1: running max and sum only; V is never read
VALUE = tl.constexpr(2)  # two-phase pass 2: max and 1/sum are final, p = exp2(s - m) / l, no rescale


@triton.jit
def head_base(P, num_heads, stride_b, stride_h):
    """P advanced to the (batch, head) of this program: program_id(1) is batch * num_heads + head."""
    bh = tl.program_id(1)
    return P + (bh // num_heads) * stride_b + (bh % num_heads) * stride_h


@triton.jit
def program_rows(num_heads, kv_group, seqlen_q, BLOCK_M: tl.constexpr, PACK: tl.constexpr,
                 CAUSAL: tl.constexpr = False):
    """This program's query rows: (pos, head, batch, kv_head, first, last).

    pos: each row's query position, ``seqlen_q`` for a row that does not exist (every ``pos < seqlen_q``
    test then masks it); head: each row's query head (a scalar without PACK); first / last: the positions
    [first, last) the block's rows may hold, which bound its key range under the causal mask.
    Without PACK, program_id(1) is batch * num_heads + head and the block is BLOCK_M consecutive
    positions of one head. With PACK (decode), program_id(1) is batch * (num_heads / kv_group) + kv_head
    and the block's rows are the packed (query head of the group, position) pairs g * seqlen_q + i of one
    K/V head: the whole group shares each K/V tile, so K/V is read once per group, not once per head.
    CAUSAL (without PACK): the GPU starts programs in the order of their linear id (program_id(0) fastest),
    and under the causal mask a query block's work grows with its position: each head's blocks run last
    first, so the programs started last are the light ones and the last wave's tail is short. The blocks
    of a head still run side by side, sharing its K/V in L2. Ordering all heads' heaviest blocks first
    instead (lin = program_id(1) * num_programs(0) + program_id(0); block = last - lin // B*H, bh = lin % B*H;
    never committed) measured 307 against 414 TFLOP/s at 128x128 / 8 warps / 2 stages, B4 H32 N4096 D128
    causal on an H100 (`bash .ci/gpu_prefill.sh`): 132 heads' K/V at once outgrow the L2.
    """
    if PACK:
        num_kv = num_heads // kv_group
        batch = tl.program_id(1) // num_kv
        kv_head = tl.program_id(1) % num_kv
        r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        ok = r < kv_group * seqlen_q
        pos = tl.where(ok, r % seqlen_q, seqlen_q)
        head = kv_head * kv_group + tl.where(ok, r // seqlen_q, 0)
        first = 0
        last = seqlen_q
    else:
        bh = tl.program_id(1)
        if CAUSAL:
            blk = tl.num_programs(0) - 1 - tl.program_id(0)
        else:
            blk = tl.program_id(0)
        batch = bh // num_heads
        head = bh % num_heads
        kv_head = head // kv_group
        first = blk * BLOCK_M
        pos = first + tl.arange(0, BLOCK_M)
        last = first + BLOCK_M
    return pos, head, batch, kv_head, first, last


@triton.jit
def row_ptrs(P, batch, head, pos, stride_b, stride_h, stride_m):
    """Pointers to the first element of each row (batch, head, pos) of a (B, H, N, D) tensor."""
    return P + batch * stride_b + head * stride_h + pos * stride_m


@triton.jit
def tile_ok(offs_m, offs_d, seqlen, HEAD_DIM: tl.constexpr):
    """Which elements of a (rows, head-dim) tile exist: rows before seqlen, columns before HEAD_DIM."""
    return (offs_m[:, None] < seqlen) & (offs_d[None, :] < HEAD_DIM)


@triton.jit
def key_block_bounds(first, last, seqlen_q, seqlen_k, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Key-block range of a query block whose rows lie at positions [first, last): [0, n_full) needs no
    mask, [n_full, n_end) does."""
    if CAUSAL:
        diag = seqlen_k - seqlen_q
        # first key any row of the block cannot see, and one past the last key its last row sees
        lo = tl.minimum(tl.maximum(first + diag + 1, 0), seqlen_k)
        hi = tl.minimum(tl.maximum(last + diag, 0), seqlen_k)
        n_full = lo // BLOCK_N
        n_end = tl.cdiv(hi, BLOCK_N)
    else:
        n_full = seqlen_k // BLOCK_N
        n_end = tl.cdiv(seqlen_k, BLOCK_N)
    return n_full, n_end


@triton.jit
def score_mask(qk, offs_m, offs_n, seqlen_q, seqlen_k, CAUSAL: tl.constexpr):
    """-inf where the key is past the end or (causal) above the bottom-right diagonal."""
    keep = offs_n[None, :] < seqlen_k
    if CAUSAL:
        keep = keep & (offs_n[None, :] <= offs_m[:, None] + (seqlen_k - seqlen_q))
    return tl.where(keep, qk, float("-inf"))


@triton.jit
def online_softmax_step(qk, m_i, l_i, MASKED: tl.constexpr):
    """One FA2 update: new running max, rescale factor alpha, probabilities p and new row sum.

    Unmasked blocks always hold a finite score per row; masked blocks may not, and a row that has seen no
    key yet keeps m = -inf: exponentials are then taken against 0 so nothing becomes NaN.
    Scores arrive scaled (``block_scores``). Folding the scale into each exponent instead (max on raw scores,
    one FMA qk * scale - m per score, as Triton's tutorial does) was measured at commit 85750d7: gfx942
    128x64 -9 VGPRs, but the 16x64 decode tile +10 (3 -> 2 waves/SIMD) and sm_80 +1 to +6 registers, and
    H100 prefill within run-to-run noise (485 vs 479 TFLOP/s); it was not kept.
    """
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    if MASKED:
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
    else:
        m_use = m_new
    alpha = tl.math.exp2(m_i - m_use)
    p = tl.math.exp2(qk - m_use[:, None])
    l_new = l_i * alpha + tl.sum(p, 1)
    return m_new, alpha, p, l_new


@triton.jit
def finalize(acc, l_i):
    """acc / l with rows that saw no key (l == 0) left at zero."""
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    return acc / l_safe[:, None]


@triton.jit
def load_tile(ptrs, in_range, d_ok, MASKED: tl.constexpr, PAD_D: tl.constexpr):
    """A K or V tile, masked only where it can run out: past the last key in masked blocks, and in the
    padded head-dim columns when the head dim is not a power of two. Full blocks of a power-of-two head
    dim load with no mask at all, which is what keeps their loop free of mask math."""
    if MASKED:
        x = tl.load(ptrs, mask=in_range & d_ok, other=0.0)
    elif PAD_D:
        x = tl.load(ptrs, mask=d_ok, other=0.0)
    else:
        x = tl.load(ptrs)
    return x


@triton.jit
def _q_slice_dot(q_rows, q_ok, k_rows, n_ok, d0, acc, HEAD_DIM: tl.constexpr, BLOCK_DK: tl.constexpr,
                 MASKED: tl.constexpr, PAD_D: tl.constexpr):
    """acc + Q[:, d0:d0+BLOCK_DK] K[:, d0:d0+BLOCK_DK]^T with both slices loaded from memory now."""
    dk = d0 + tl.arange(0, BLOCK_DK)
    q = tl.load(q_rows + dk[None, :], mask=q_ok & (dk[None, :] < HEAD_DIM), other=0.0)
    k = load_tile(k_rows + dk[:, None], n_ok, dk[:, None] < HEAD_DIM, MASKED, PAD_D)
    return tl.dot(q, k, acc)


@triton.jit
def block_scores(q, k_base, stride_kn, offs_m, start_n, offs_d, seqlen_q, seqlen_k, qk_scale,
                 BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, PAD_D: tl.constexpr, MASKED: tl.constexpr,
                 CAUSAL: tl.constexpr, QK_FP16: tl.constexpr, BLOCK_DK: tl.constexpr, TMA: tl.constexpr = False):
    """Log2-domain scores s = Q K^T * scale * log2(e) of the query block against keys start_n + [0, BLOCK_N).

    BLOCK_DK == 0: q is the query tile, live in registers. BLOCK_DK > 0 (remat-q): q is the block of Q row
    pointers ([BLOCK_M, 1]) and Q is re-loaded BLOCK_DK head-dim columns at a time, so no Q tile outlives
    one score block; only the slices up to HEAD_DIM are visited, padding costs nothing.
    QK_FP16 (qk-fp16-acc, fp16 inputs only): the dot accumulates in fp16 (`out_dtype`) and the score tile
    stays fp16, scaled in fp16 as in seed 003's HMMA16816 kernel; max, exp2 and sums are fp32 as usual.
    TMA: k_base is a tensor descriptor of this head's K (``kv_sources``), loaded a [BLOCK_N, BLOCK_D] block
    at a time (zero past the last key and the head dim) and transposed for the dot.
    """
    offs_n = start_n + tl.arange(0, BLOCK_N)
    if not TMA:  # (computed here, as before the knob existed, so that tma=0 compiles to the same code)
        k_rows = k_base + offs_n[None, :] * stride_kn
    n_ok = offs_n[None, :] < seqlen_k
    if BLOCK_DK == 0:
        if TMA:
            k = tl.trans(k_base.load([start_n, 0]))
        else:
            k = load_tile(k_rows + offs_d[:, None], n_ok, offs_d[:, None] < HEAD_DIM, MASKED, PAD_D)
        if QK_FP16:
            qk = tl.dot(q, k, out_dtype=tl.float16) * qk_scale.to(tl.float16)
        else:
            qk = tl.dot(q, k) * qk_scale
    else:
        # `start_n < seqlen_k` always holds inside the loop, but it depends on the iteration: it keeps the
        # compiler from hoisting the slice loads out of the loop, which would make all of Q live again.
        # (A [1, 1] tensor, not a scalar: the interpreter turns bool tensor & bool scalar into int32.)
        q_ok = (offs_m[:, None] < seqlen_q) & (start_n + tl.zeros([1, 1], dtype=tl.int32) < seqlen_k)
        # the first slice starts the sum, so no zero tile of the score shape is needed
        qk = _q_slice_dot(q, q_ok, k_rows, n_ok, 0, None, HEAD_DIM, BLOCK_DK, MASKED, PAD_D)
        for d0 in tl.static_range(BLOCK_DK, HEAD_DIM, BLOCK_DK):
            qk = _q_slice_dot(q, q_ok, k_rows, n_ok, d0, qk, HEAD_DIM, BLOCK_DK, MASKED, PAD_D)
        qk = qk * qk_scale
    if MASKED:
        qk = score_mask(qk, offs_m, offs_n, seqlen_q, seqlen_k, CAUSAL)
    return qk


@triton.jit
def kv_loop(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q, seqlen_k,
            qk_scale, blk_lo, blk_hi, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, PAD_D: tl.constexpr,
            MASKED: tl.constexpr, CAUSAL: tl.constexpr, PASS: tl.constexpr = ONLINE,
            QK_FP16: tl.constexpr = False, BLOCK_DK: tl.constexpr = 0, TMA: tl.constexpr = False):
    """The loop over key blocks [blk_lo, blk_hi); MASKED selects the tail / diagonal version.

    PASS ONLINE: FA2, returns the updated (acc, l_i, m_i). PASS STATS: only (l_i, m_i) change; acc is
    passed through untouched and V is never read. PASS VALUE: m_i holds the final row max (0 for rows that
    see no key) and l_i the final 1 / row sum (0 for those rows); only acc changes.
    TMA: k_base and v_base are tensor descriptors (``kv_sources``), not pointers.
    """
    for blk in range(blk_lo, blk_hi):
        offs_n = blk * BLOCK_N + tl.arange(0, BLOCK_N)
        if not TMA:
            v_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :]
        qk = block_scores(q, k_base, stride_kn, offs_m, blk * BLOCK_N, offs_d, seqlen_q, seqlen_k, qk_scale,
                          BLOCK_N, HEAD_DIM, PAD_D, MASKED, CAUSAL, QK_FP16, BLOCK_DK, TMA)
        if PASS == STATS:
            m_i, _, _, l_i = online_softmax_step(qk, m_i, l_i, MASKED)
        else:
            if PASS == VALUE:
                p = tl.math.exp2(qk - m_i[:, None]) * l_i[:, None]
            else:
                m_i, alpha, p, l_i = online_softmax_step(qk, m_i, l_i, MASKED)
            if TMA:
                v = v_base.load([blk * BLOCK_N, 0])
            else:
                v = load_tile(v_ptrs, offs_n[:, None] < seqlen_k, offs_d[None, :] < HEAD_DIM, MASKED, PAD_D)
            if PASS == ONLINE:
                acc = acc * alpha[:, None]
            acc += tl.dot(p.to(v.dtype), v)
    return acc, l_i, m_i


@triton.jit
def kv_sources(k_base, v_base, stride_kn, stride_vn, seqlen_k, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
               HEAD_DIM: tl.constexpr, TMA: tl.constexpr):
    """Where the K/V loop reads this head's keys and values: the pointers themselves, or with TMA tensor
    descriptors over the head's (seqlen_k, HEAD_DIM) rows (TMA on sm_90+, plain loads elsewhere). A
    descriptor zero-fills what lies outside those bounds, so the tail block and the padded head-dim columns
    need no mask, and no load crosses into the next head. It needs 16-byte aligned head bases and row
    strides (the launch checks them: a head dim that is a multiple of 8 in fp16 / bf16)."""
    if TMA:
        k_src = tl.make_tensor_descriptor(k_base, shape=[seqlen_k, HEAD_DIM], strides=[stride_kn, 1],
                                          block_shape=[BLOCK_N, BLOCK_D])
        v_src = tl.make_tensor_descriptor(v_base, shape=[seqlen_k, HEAD_DIM], strides=[stride_vn, 1],
                                          block_shape=[BLOCK_N, BLOCK_D])
    else:
        k_src = k_base
        v_src = v_base
    return k_src, v_src


@triton.jit
def fa2_attend(q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q, seqlen_k, qk_scale, blk_lo,
               blk_full, blk_hi, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
               HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, QK_FP16: tl.constexpr, BLOCK_DK: tl.constexpr,
               TMA: tl.constexpr = False):
    """FA2 over key blocks [blk_lo, blk_hi), as in ``fwd_prefill.py``: the loop is called twice, over
    [blk_lo, blk_full) with no mask math, then over the tail / diagonal blocks [blk_full, blk_hi) with
    masks; ``acc``, ``l_i``, ``m_i`` (and a live ``q``) stay live across both. Returns them unnormalised.
    TMA (with BLOCK_DK == 0): K and V are read through tensor descriptors (``kv_sources``)."""
    PAD_D: tl.constexpr = BLOCK_D != HEAD_DIM
    k_base, v_base = kv_sources(k_base, v_base, stride_kn, stride_vn, seqlen_k, BLOCK_N, BLOCK_D, HEAD_DIM, TMA)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc, l_i, m_i = kv_loop(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q,
                            seqlen_k, qk_scale, blk_lo, blk_full, BLOCK_N, HEAD_DIM, PAD_D, False, CAUSAL, ONLINE,
                            QK_FP16, BLOCK_DK, TMA)
    acc, l_i, m_i = kv_loop(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, seqlen_q,
                            seqlen_k, qk_scale, blk_full, blk_hi, BLOCK_N, HEAD_DIM, PAD_D, True, CAUSAL, ONLINE,
                            QK_FP16, BLOCK_DK, TMA)
    return acc, l_i, m_i
