"""vgprscope: registers, spills, LDS and occupancy of Triton attention kernels, without the GPUs.

Importing this package is cheap: torch and triton are imported only by the calls that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "attention"]


# the package of the bundled variants, callable as vgprscope.attention(q, k, v, ...) (its __init__ is light)
from . import attention  # noqa: E402
