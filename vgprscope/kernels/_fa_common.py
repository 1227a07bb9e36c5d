"""Pieces every FlashAttention-style variant shares: key ranges, masks, the online-softmax step.

Conventions (all variants): q (B, H, Nq, D), k/v (B, H, Nk, D), last dim contiguous. Causal masks are
aligned bottom-right: query row i sees key j iff j <= i + (Nk - Nq). A row that sees no key yields zeros.
Scores are kept in the log2 domain (scale * log2(e)) so the exponentials are exp2.
"""

import triton
import triton.language as tl

LOG2E = 1.4426950408889634


def next_pow2_dim(head_dim: int) -> int:
    """The padded head dim the kernels use for tiles (a power of two, at least 16)."""
    return max(16, triton.next_power_of_2(head_dim))


@triton.jit
def key_block_bounds(start_m, seqlen_q, seqlen_k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr):
    """Key-block range of the query block at start_m: [0, n_full) needs no mask, [n_full, n_end) does."""
    if CAUSAL:
        diag = seqlen_k - seqlen_q
        # first key any row of the block cannot see, and one past the last key its last row sees
        lo = tl.minimum(tl.maximum(start_m + diag + 1, 0), seqlen_k)
        hi = tl.minimum(tl.maximum(start_m + BLOCK_M + diag, 0), seqlen_k)
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
