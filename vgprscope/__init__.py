"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "attention"]


# the package vgprscope.attention holds the bundled variants; importing its (light) __init__ here binds this
# name to the function for good (a submodule imported later would otherwise rebind it to the package)
from .attention import attention  # noqa: E402
