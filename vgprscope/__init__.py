"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

import sys
import types

__version__ = "0.1.0"

__all__ = ["__version__", "analyze", "attention", "baseline_save", "capture", "check", "compare", "diff", "explain",
           "frontier", "pointer", "scan"]

# The library's calls (vgprscope.library), plain functions resolved on first use, so that `import vgprscope`
# stays cheap.
_LIBRARY = {"analyze": "library.api", "baseline_save": "library.api", "check": "library.api",
            "compare": "library.api", "diff": "library.api", "explain": "library.api", "frontier": "library.api",
            "scan": "library.api", "capture": "library.session", "pointer": "library.kernels"}


def __getattr__(name: str) -> object:
    import importlib

    if name in _LIBRARY:
        value = getattr(importlib.import_module(f".{_LIBRARY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name == "attention":  # the package of the bundled variants, callable as vgprscope.attention(q, k, v, ...)
        return importlib.import_module(".attention", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Facade(types.ModuleType):
    """The package's module: importing the ``capture`` package (``vgprscope.capture.model``) sets the package as
    ``vgprscope.capture``; a library call's name stays the call."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _LIBRARY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Facade
