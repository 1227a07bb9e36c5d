"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "analyze", "archs", "attention", "baseline_save", "capture", "check", "compare", "diff",
           "explain", "frontier", "installed_toolchains", "occupancy", "pointer", "remove_toolchain", "scan", "variants"]

# The library's calls (vgprscope.library) and ``attention`` (a bundled variant run on torch tensors,
# ``vgprscope.flashattn.run``): plain functions resolved on first use, so that `import vgprscope` stays cheap.
# No subpackage has one of these names: importing a subpackage never replaces a call. ``bench`` (timings on this
# process's GPU) is ``vgprscope.library.bench.bench``: ``vgprscope.bench`` is the GPU-timing package.
_LIBRARY = {"analyze": "library.api", "baseline_save": "library.api", "check": "library.api",
            "compare": "library.api", "diff": "library.api", "explain": "library.api", "frontier": "library.api",
            "scan": "library.api", "capture": "library.session", "pointer": "library.kernels",
            "archs": "library.info", "variants": "library.info", "occupancy": "library.occupancy",
            "installed_toolchains": "library.toolchain_store", "remove_toolchain": "library.toolchain_store",
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
