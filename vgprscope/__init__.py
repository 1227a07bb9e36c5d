"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "analyze", "attention", "baseline_save", "capture", "check", "compare", "diff", "explain",
           "frontier", "pointer", "scan"]

# The library's calls (vgprscope.library) and ``attention`` (a bundled variant run on torch tensors,
# ``vgprscope.flashattn.run``): plain functions resolved on first use, so that `import vgprscope` stays cheap.
# No subpackage has one of these names: importing a subpackage never replaces a call.
_LIBRARY = {"analyze": "library.api", "baseline_save": "library.api", "check": "library.api",
            "compare": "library.api", "diff": "library.api", "explain": "library.api", "frontier": "library.api",
            "scan": "library.api", "capture": "library.session", "pointer": "library.kernels",
            "attention": "flashattn.run"}


def __getattr__(name: str) -> object:
    import importlib

    if name in _LIBRARY:
        value = getattr(importlib.import_module(f".{_LIBRARY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
