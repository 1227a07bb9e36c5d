"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "attention"]


def attention(q, k, v, causal: bool = False, variant: str = "baseline", sm_scale: float | None = None, **config):
    """O = softmax(Q K^T * scale [+ causal mask, bottom-right aligned]) V with a bundled variant.

    q: (batch, heads, seqlen_q, head_dim); k, v: (batch, heads, seqlen_k, head_dim); fp16 or bf16.
    ``config`` takes the variant's knobs (block_m, block_n, num_warps, num_stages, ...).
    Rows whose every key is masked (causal with seqlen_q > seqlen_k) come out as zeros.
    """
    from .api import attention as _attention

    return _attention(q, k, v, causal=causal, variant=variant, sm_scale=sm_scale, **config)
