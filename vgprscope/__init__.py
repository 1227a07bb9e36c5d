"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "analyze", "attention", "capture", "check", "compare", "explain", "frontier", "pointer",
           "scan"]

# The library (vgprscope.library): resolved on first use, so that `import vgprscope` stays cheap. The calls
# named like a module of this package (vgprscope/explain.py, the capture package, ...) are those modules,
# made callable as the call (vgprscope._callable): the name is both, however it is imported.
_LIBRARY = {"analyze": "library.api", "check": "library.api", "pointer": "library.kernels"}
_CALLABLE_MODULES = ("capture", "compare", "explain", "frontier", "scan")

def __getattr__(name: str) -> object:
    import importlib

    if name in _CALLABLE_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LIBRARY:
        value = getattr(importlib.import_module(f".{_LIBRARY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def attention(q, k, v, causal: bool = False, variant: str = "baseline", sm_scale: float | None = None, **config):
    """O = softmax(Q K^T * scale [+ causal mask, bottom-right aligned]) V with a bundled variant.

    q: (batch, heads, seqlen_q, head_dim); k, v: (batch, heads, seqlen_k, head_dim); fp16 or bf16.
    ``config`` takes the variant's knobs (block_m, block_n, num_warps, num_stages, ...).
    Rows whose every key is masked (causal with seqlen_q > seqlen_k) come out as zeros.
    """
    from .api import attention as _attention

    return _attention(q, k, v, causal=causal, variant=variant, sm_scale=sm_scale, **config)
