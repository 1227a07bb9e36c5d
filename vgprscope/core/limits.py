"""Bounds every layer checks numbers against."""

from __future__ import annotations

# The largest count a compiler writes (a 32-bit field of the ELF note, the kernel descriptor, ptxas's log): a
# usage read back with a larger one is damaged, never a verdict; a launch option's largest value
COUNT_LIMIT = 2**32 - 1
