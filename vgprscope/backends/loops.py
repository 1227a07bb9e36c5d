"""The gate's loop metrics, the same for every backend: the gate loop's matrix share (``parse.loops.gate_loop``)
and the scratch traffic per trip of every loop (the worst loop's and all together), read from the kernel's
assembly where a view reads them (``read_loops``).

A usage whose assembly was not read (a cubin no nvdisasm here reads) has neither: the metric is left out of
its values, so the gate does not compare it (a baseline saved before these metrics existed has them for no
entry), never a 0 that would pass for "no spills in the loop".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from subprocess import SubprocessError
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.loop_fields import SPILL_FIELDS, spill_free_loop_fields
from .base import Metric

if TYPE_CHECKING:
    from ..core.parse.loops import LoopMix
    from .base import Backend

LOOP_METRICS = (
    # shown, gated only by a rule (``loop_matrix_share:-N``: may drop N points): a release's few extra address
    # or wait instructions move it a point without costing time the way a spill does
    Metric("loop_matrix_share", "% points", "the hot loop's matrix instructions, percent of its instructions per "
           "trip (a rule -N gates it)", higher_is_better=True, gated=False),
    Metric("loop_spill_bytes", "bytes/lane per trip", "scratch / local bytes loaded and stored by one trip of the "
           "hot loop (AMD per lane, NVIDIA per thread)"),
    Metric("loop_spill_bytes_max", "bytes/lane per trip", "scratch / local bytes of one trip of the loop that moves "
           "the most, any loop (its own body: a nested loop's are its own)"),
    Metric("loop_spill_bytes_sum", "bytes/lane per trip", "scratch / local bytes of one trip of every loop "
           "together"),
)

U = TypeVar("U")


def with_loop(usage: U, mixes: tuple[LoopMix, ...] | None) -> U:
    """The usage with its loop fields read from every loop's mix (None: the assembly was not read)."""
    from ..core.parse.loops import loop_fields

    return replace(usage, **loop_fields(mixes))  # type: ignore[type-var]


def scratch_free(backend: Backend, usage: Any) -> bool:
    """Whether the kernel has no scratch / local memory, stack frame or spill (its backend's
    ``facts.scratch_fields`` all 0): then no loop of it moves a spilled byte, known without its assembly."""
    return not any(getattr(usage, f) for f in backend.facts.scratch_fields)


def loops_unread(backend: Backend, usage: Any, every: bool | None) -> bool:
    """Whether ``read_loops`` leaves the gate loop's matrix share and lines of ``usage`` unread (and with
    ``every`` None, a kernel with scratch its spill figures too)."""
    return every is None or (not every and scratch_free(backend, usage))


def read_loops(backend: Backend, raw: Mapping[str, Any], usage: U, every: bool | None) -> U:
    """The usage with its loop figures (``loops_unread`` says whether the matrix share and lines were read).

    A kernel without scratch / local memory moves no spilled byte in any loop: its spill figures are 0 without
    reading its assembly (an NVIDIA cubin's SASS costs an ``nvdisasm`` run), and unless ``every`` figure is
    asked for (a view that shows the share or lines: explain, frontier, diff, --wide, JSON / CSV, a
    ``loop_matrix_share`` rule) the rest are left unread. Any other kernel's loops are read, every figure;
    with ``every`` None (a view that shows no loop figure: scan's table, whose stored reads compile nothing,
    so that a disassembly would be most of their cost) its figures are left unread too (None)."""
    if loops_unread(backend, usage, every):
        if not scratch_free(backend, usage):
            return usage  # every loop figure unknown until read (the cached result says ``loops_unread``)
        return replace(usage, **spill_free_loop_fields())  # type: ignore[type-var]
    try:  # unknown where there is no assembly, or no disassembler here reads it
        mixes = backend.loop_mixes(raw)
    except (OSError, SubprocessError, ImportError, AttributeError):
        mixes = None
    usage = with_loop(usage, mixes)
    if getattr(usage, "loop_spill_bytes", None) is None and scratch_free(backend, usage):
        usage = replace(usage, **spill_free_loop_fields())  # type: ignore[type-var]
    return usage


def loop_fields_consistent(usage: Mapping[str, Any], unread: bool = False) -> bool:
    """Whether a usage dict's loop fields are what ``read_loops`` writes together: the spill figures all known
    or all unknown, the hot loop's and the worst loop's bytes within every loop's sum; a share only with them; lines only with a
    share. ``unread``: the share and lines were left unread, the spill figures 0 (a kernel without scratch) or
    unknown (one with scratch, for a view that shows no loop figure)."""
    spills = dict(zip(SPILL_FIELDS, (usage.get(f) for f in SPILL_FIELDS)))
    share, lines = usage.get("loop_matrix_share"), usage.get("loop_lines")
    if unread:
        return set(spills.values()) in ({0}, {None}) and share is None and lines is None
    if None in spills.values():
        return set(spills.values()) == {None} and share is None and lines is None
    every = spills["loop_spill_bytes_sum"]
    return spills["loop_spill_bytes"] <= every and spills["loop_spill_bytes_max"] <= every \
        and (lines is None or share is not None)


def loop_values(usage: Any) -> dict[str, int]:
    """The loop metrics a usage knows."""
    values = {m.name: getattr(usage, m.name, None) for m in LOOP_METRICS}
    return {k: v for k, v in values.items() if v is not None}
