"""What users would run instead: torch's scaled_dot_product_attention, one backend at a time.

Each anchor is timed on the same inputs as the variants and passes the same correctness gate. A backend
the installed torch lacks, or that refuses the case, is a row that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Anchor:
    name: str
    backend: str  # attribute of torch.nn.attention.SDPBackend


ANCHORS = (
    Anchor("sdpa-flash", "FLASH_ATTENTION"),
    Anchor("sdpa-cudnn", "CUDNN_ATTENTION"),
    Anchor("sdpa-efficient", "EFFICIENT_ATTENTION"),
)


def sdpa_runner(anchor: Anchor, causal: bool, seqlen_q: int, seqlen_k: int, gqa: bool = False) -> Callable:
    """fn(q, k, v) -> o through one SDPA backend; causal is bottom-right aligned like the variants.

    ``is_causal=True`` aligns top-left, which equals bottom-right only when Nq == Nk; otherwise the
    lower-right causal bias is passed. ``gqa``: k and v have fewer heads than q, passed with
    ``enable_gqa=True`` (each backend reads them as it does; one that refuses is a row saying so).
    """
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = getattr(SDPBackend, anchor.backend, None)
    if backend is None:
        raise RuntimeError(f"torch {torch.__version__} has no SDPA backend {anchor.backend}")

    extra = {"enable_gqa": True} if gqa else {}
    if causal and seqlen_q != seqlen_k:
        from torch.nn.attention.bias import causal_lower_right

        bias = causal_lower_right(seqlen_q, seqlen_k)

        def run(q, k, v):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, **extra)
    else:

        def run(q, k, v):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)

    return run
