"""What ``vgprscope.scan`` returns: the cache's kernels as records, and every entry read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..analyze.result import AnalyzeResult

if TYPE_CHECKING:
    from ...sources.triton_cache import CacheEntry
    from .core import CacheDir


@dataclass(frozen=True, repr=False)
class ScanResult(AnalyzeResult):
    """``vgprscope.scan``: the kernels of a Triton cache, read as stored and retargeted (``records``), with
    every entry read (``entries``: partial or corrupt ones carry their reason), and every cache found below the
    directory (``caches``: its path, its kind, what was read of it)."""

    command: str = "scan"
    directory: Path = Path()
    entries: tuple[CacheEntry, ...] = ()
    summary: str = ""
    caches: tuple[CacheDir, ...] = ()  # every Triton and Inductor cache found below the directory
