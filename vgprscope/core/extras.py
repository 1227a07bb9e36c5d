"""Optional dependencies: which extra installs each, and the one-line error when one is missing.

The register gate (compile, parse, occupancy, analyze, compare, check, baseline) needs Triton only; torch
is the ``bench`` extra, for what runs kernels on tensors: ``bench``, ``compare --bench`` and
``vgprscope.attention``.
"""

from __future__ import annotations

from .errors import MissingExtraError

# torch is pinned at install time, never by the extra: a bare `torch` from PyPI is the multi-GB CUDA build
# on Linux, right for a GPU machine and wrong for a CPU one.
TORCH_INSTALL = "pip install 'vgprscope[bench]' torch==2.13.0"


def require_torch(what: str) -> None:
    """Raise MissingExtraError naming the extra when torch cannot be imported; ``what`` needs it."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise MissingExtraError(what, "torch", "bench", TORCH_INSTALL) from None
