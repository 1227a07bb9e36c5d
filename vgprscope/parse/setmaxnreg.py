"""The registers each partition of a warp-specialized kernel is given, read from its SASS.

Where every worker of a ``ttg.warp_specialize`` names its registers (Gluon's ``worker_num_regs``), Triton's
AllocateWarpGroups pass (lib/Conversion/TritonGPUToLLVM/AllocateWarpGroups.cpp) sets each worker warp group to
its largest request rounded up to 8, gives the default partition more out of what the workers surrender,
and emits PTX ``setmaxnreg``; ptxas writes it as ``USETMAXREG.DEALLOC`` / ``USETMAXREG.TRY_ALLOC`` with the
count. These are the counts read here, what the machine code asks for, rather than the pass's arithmetic
(which moves between releases: Triton 3.9 gives ws-regalloc's consumers 240 whether its producer asks for 24
or 56).
"""

from __future__ import annotations

import re
from dataclasses import replace

from .ttgir import WarpPartition

_USETMAXREG_RE = re.compile(r"\bUSETMAXREG\.(?:DEALLOC|TRY_ALLOC)\.CTAPOOL\s+(?:U?P\d+\s*,\s*)?(0x[0-9a-fA-F]+|\d+)")


def setmaxnreg_counts(sass: str) -> tuple[int, ...]:
    """Every distinct register count a ``USETMAXREG`` of the SASS sets, ascending."""
    return tuple(sorted({int(m[1], 0) for m in _USETMAXREG_RE.finditer(sass)}))


def with_given_registers(partitions: tuple[WarpPartition, ...], sass: str) -> tuple[WarpPartition, ...]:
    """``partitions`` with ``given_registers`` from the SASS's setmaxnreg: a worker's request rounded up to 8
    where the machine code sets that count, the default partition the largest count (the surplus the workers
    surrender goes to it); unchanged where the SASS sets none (no worker named its registers, or they leave
    the default partition too few)."""
    counts = setmaxnreg_counts(sass)
    if not counts or not partitions:
        return partitions
    out = []
    for p in partitions:
        if p.name == "default":
            out.append(replace(p, given_registers=counts[-1]))
        elif p.requested_registers is not None and -(-p.requested_registers // 8) * 8 in counts:
            out.append(replace(p, given_registers=-(-p.requested_registers // 8) * 8))
        else:
            out.append(p)
    return tuple(out)
