"""The gate's loop metrics, the same for every backend: the gate loop's matrix share and its scratch traffic
per trip (``parse.loops.gate_loop``), read from the kernel's assembly when its outputs are parsed.

A usage whose assembly was not read (a cubin no nvdisasm here reads) has neither: the metric is left out of
its values, so the gate does not compare it (a baseline saved before these metrics existed has them for no
entry), never a 0 that would pass for "no spills in the loop".
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from .base import Metric

if TYPE_CHECKING:
    from ..core.parse.loops import LoopMix

LOOP_METRICS = (
    # shown, gated only by a rule (``loop_matrix_share:-N``: may drop N points): a release's few extra address
    # or wait instructions move it a point without costing time the way a spill does
    Metric("loop_matrix_share", "% points", "the hot loop's matrix instructions, percent of its instructions per "
           "trip (a rule -N gates it)", higher_is_better=True, gated=False),
    Metric("loop_spill_bytes", "bytes/lane per trip", "scratch / local bytes loaded and stored by one trip of the "
           "hot loop (AMD per lane, NVIDIA per thread)"),
)

U = TypeVar("U")


def with_loop(usage: U, mixes: tuple[LoopMix, ...] | None) -> U:
    """The usage with its loop fields read from every loop's mix (None: the assembly was not read)."""
    from ..core.parse.loops import loop_fields

    return replace(usage, **loop_fields(mixes))  # type: ignore[type-var]


def loop_values(usage: Any) -> dict[str, int]:
    """The loop metrics a usage knows."""
    values = {m.name: getattr(usage, m.name, None) for m in LOOP_METRICS}
    return {k: v for k, v in values.items() if v is not None}
