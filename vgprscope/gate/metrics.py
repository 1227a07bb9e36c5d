"""The numbers the gate watches, one ``Metric`` each, and how an entry's numbers are read.

``registers`` is vendor-neutral: the unified VGPR count on AMD (``vgpr_total``, what occupancy sees) and
registers per thread on NVIDIA (``regs``). It is not a number of its own: a rule on it governs both
vendor metrics, so ``registers:+4`` gates a kernel on gfx942 and on sm_90 alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownNameError
from ..records import ResourceUsage


@dataclass(frozen=True)
class Metric:
    """One number the gate watches. ``gated`` False: shown when it changes, never a failure by default
    (``arch_vgpr`` and ``agpr`` are the parts of ``vgpr_total``, which is what occupancy sees).
    ``covers``: the vendor metrics a neutral metric stands for (a rule on it applies to each of them)."""

    name: str
    unit: str
    what: str
    higher_is_better: bool = False
    gated: bool = True
    covers: tuple[str, ...] = ()


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("registers", "registers", "AMD vgpr_total or NVIDIA regs: one rule for both vendors",
           covers=("vgpr_total", "regs")),
    Metric("vgpr_total", "VGPRs", "AMD: unified VGPR+AGPR count per wave (what occupancy sees)"),
    Metric("arch_vgpr", "VGPRs", "AMD: architectural VGPRs (part of vgpr_total)", gated=False),
    Metric("agpr", "AGPRs", "AMD: accumulation registers (part of vgpr_total)", gated=False),
    Metric("sgpr", "SGPRs", "AMD: scalar registers, VCC / flat-scratch / XNACK included"),
    Metric("vgpr_spill", "VGPRs", "AMD: VGPRs spilled to scratch"),
    Metric("sgpr_spill", "SGPRs", "AMD: SGPRs spilled to VGPR lanes"),
    Metric("scratch_bytes", "bytes/lane", "AMD: scratch memory per lane"),
    Metric("lds_bytes", "bytes", "AMD: LDS, static and Triton's dynamic"),
    Metric("spill_insts", "instructions", "AMD: spill stores and reloads"),
    Metric("regs", "registers/thread", "NVIDIA: registers per thread"),
    Metric("stack_bytes", "bytes/thread", "NVIDIA: stack frame per thread"),
    Metric("spill_store_bytes", "bytes", "NVIDIA: spill stores"),
    Metric("spill_load_bytes", "bytes", "NVIDIA: spill loads"),
    Metric("shared_bytes", "bytes", "NVIDIA: shared memory, static and Triton's dynamic"),
    Metric("occupancy", "waves/SIMD | blocks/SM", "theoretical occupancy (may not drop)", higher_is_better=True),
)}

# The register count of either vendor: the one number shown in the tables' "VGPRs / regs" column.
REGISTERS: tuple[str, ...] = METRICS["registers"].covers


def get_metric(name: str) -> Metric:
    """A metric a user named (a rule): unknown names are an error listing the valid ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise UnknownNameError("metric", name, list(METRICS)) from None


def metric_info(name: str) -> Metric:
    """A metric a usage reported: one ``metrics()`` gained before this table knew it is gated as a count
    that may not grow (the gate fails closed rather than ignore a number)."""
    return METRICS.get(name) or Metric(name, "count", "reported by the parser")


def neutral_metrics(name: str) -> tuple[str, ...]:
    """The neutral metrics that stand for ``name`` (``registers`` for ``vgpr_total`` and ``regs``)."""
    return tuple(m.name for m in METRICS.values() if name in m.covers)


def entry_metrics(usage: ResourceUsage | None, occupancy: Mapping[str, Any] | None) -> dict[str, int]:
    """The gate's numbers of one kernel: the usage's own ``metrics()`` and the occupancy value."""
    out = dict(usage.metrics()) if usage is not None else {}
    if occupancy is not None:
        out["occupancy"] = occupancy["value"]
    return out
