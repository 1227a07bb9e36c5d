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


# the package of the bundled variants, callable as vgprscope.attention(q, k, v, ...) (its __init__ is light)
from . import attention  # noqa: E402
