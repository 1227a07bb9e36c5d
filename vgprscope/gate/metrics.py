"""The numbers the gate watches, one ``Metric`` each, and how an entry's numbers are read.

``registers`` is vendor-neutral: the unified VGPR count on AMD (``vgpr_total``, what occupancy sees) and
registers per thread on NVIDIA (``regs``). It is not a number of its own: a rule on it governs both
vendor metrics, so ``registers:+4`` gates a kernel on gfx942 and on sm_90 alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..backends import BACKENDS, Metric, backend_of_usage, registers_metric, registers_metrics
from ..core.errors import UnknownNameError
from ..core.records import ResourceUsage
from ..report.vendor_words import words_of

__all__ = ["METRICS", "REGISTERS", "Metric", "entry_metrics", "get_metric", "metric_info", "neutral_metrics"]

# The neutral registers metric, every backend's own (vgprscope.backends: which usage fields each gates), and
# the occupancy value.
METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("registers", "registers",
           " or ".join(f"{b.vendor.name} {registers_metric(b).name}" for b in BACKENDS) + ": one rule for every vendor",
           covers=registers_metrics()),
    *(m for b in BACKENDS for m in b.metrics),
    Metric("occupancy", " | ".join(words_of(b.vendor).unit for b in BACKENDS), "theoretical occupancy (may not drop)",
           higher_is_better=True),
    # not a count of the usage: the compiler's warning codes, judged by gate.diagnostics
    Metric("diagnostics", "codes", "compiler warning codes the baseline entry did not have (a new one fails)"),
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
    """A metric a usage reported: one a backend's ``metric_values`` gained before this table knew it is gated as a count
    that may not grow (the gate fails closed rather than ignore a number)."""
    return METRICS.get(name) or Metric(name, "count", "reported by the parser")


def neutral_metrics(name: str) -> tuple[str, ...]:
    """The neutral metrics that stand for ``name`` (``registers`` for ``vgpr_total`` and ``regs``)."""
    return tuple(m.name for m in METRICS.values() if name in m.covers)


def entry_metrics(usage: ResourceUsage | None, occupancy: Mapping[str, Any] | None) -> dict[str, int]:
    """The gate's numbers of one kernel: its backend's metrics of the usage, and the occupancy value."""
    out = backend_of_usage(usage).metric_values(usage) if usage is not None else {}
    if occupancy is not None:
        out["occupancy"] = occupancy["value"]
    return out
