"""The registers each partition of a warp-specialized kernel runs with, checked against its SASS.

Where every worker of a ``ttg.warp_specialize`` names its registers (Gluon's ``worker_num_regs``), Triton's
AllocateWarpGroups pass (lib/Conversion/TritonGPUToLLVM/AllocateWarpGroups.cpp) packs the workers into warp
groups of 4 warps (largest first, padded with idle warps that ask for 16), sets each group to its largest
request rounded up to 8, and gives the default partition the kernel's register cap (``maxnreg``, what ptxas
reports for the whole kernel) plus what the worker groups surrender, spread over its warps and rounded down
to 8; it emits PTX ``setmaxnreg``, which ptxas writes as ``USETMAXREG.DEALLOC`` / ``USETMAXREG.TRY_ALLOC``.
A count is reported for a partition only where the SASS sets exactly that count (outside the region the
warps run at other counts: the workers parked low, the default partition higher).
"""

from __future__ import annotations

import re
from dataclasses import replace

from .ttgir import WarpPartition

_USETMAXREG_RE = re.compile(r"\bUSETMAXREG\.(?:DEALLOC|TRY_ALLOC)\.CTAPOOL\s+(?:U?P\d+\s*,\s*)?(0x[0-9a-fA-F]+|\d+)")
_WARP_GROUP = 4
_PADDING_REGS = 16  # what the pass asks for the idle warps it pads a worker group with


def setmaxnreg_counts(sass: str) -> tuple[int, ...]:
    """Every distinct register count a ``USETMAXREG`` of the SASS sets, ascending."""
    return tuple(sorted({int(m[1], 0) for m in _USETMAXREG_RE.finditer(sass)}))


def _ceil8(n: int) -> int:
    return -(-n // 8) * 8


def triton_split(partitions: tuple[WarpPartition, ...], maxnreg: int, lanes: int = 32) -> dict[str, int] | None:
    """Registers per thread of each partition inside the region by the AllocateWarpGroups rule, or None
    where a worker names none (no reallocation) or the default partition would be left fewer than 24."""
    default = next((p for p in partitions if p.name == "default"), None)
    workers = sorted((p for p in partitions if p.name != "default"), key=lambda p: -p.num_warps)
    if default is None or not workers or any(p.requested_registers is None for p in workers):
        return None
    groups: list[list[tuple[str | None, int, int]]] = [[]]
    for p in workers:
        for _ in range(p.num_warps):
            if len(groups[-1]) == _WARP_GROUP:
                groups.append([])
            groups[-1].append((p.name, 1, _ceil8(p.requested_registers or 0)))
    while len(groups[-1]) < _WARP_GROUP:
        groups[-1].append((None, 1, _PADDING_REGS))
    out: dict[str, int] = {}
    budget = maxnreg * default.num_warps * lanes
    for g in groups:
        top = max(regs for _, _, regs in g)
        budget += (maxnreg - top) * _WARP_GROUP * lanes
        out |= {name: top for name, _, _ in g if name is not None}
    leftover = budget // (default.num_warps * lanes) // 8 * 8 if budget > 0 else 0
    if leftover < 24:
        return None
    return out | {"default": leftover}


def with_given_registers(partitions: tuple[WarpPartition, ...], sass: str, maxnreg: int | None
                         ) -> tuple[WarpPartition, ...]:
    """``partitions`` with ``given_registers``: each one's count by the rule where the SASS sets it."""
    counts = setmaxnreg_counts(sass)
    split = triton_split(partitions, maxnreg) if maxnreg else None
    if not counts or split is None:
        return partitions
    return tuple(replace(p, given_registers=split[p.name]) if split.get(p.name) in counts else p for p in partitions)
