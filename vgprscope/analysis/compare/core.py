"""Strategies side by side: per arch, each variant's resources and traffic, and its change against baseline.

A multi-kernel variant (split-k, two-phase) shows each kernel and a variant line: the most registers,
spills and LDS of any of its kernels, the worst occupancy, and the whole variant's modelled traffic where
the kernels' source models it (``compare(records, traffic=...)``; the bundled attention variants':
``vgprscope.flashattn.traffic.line_traffic``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...backends import backend_of_usage
from ...core.errors import UsageError
from ...core.records import Record, ResourceUsage
from ..order import sort_by, sort_given

REFERENCE = "baseline"


@dataclass(frozen=True)
class VariantLine:
    variant: str
    arch: str
    config: str
    kernels: tuple[Record, ...]
    status: str
    regs: int | None  # most VGPRs (AMD, unified total) / registers (NVIDIA) of any kernel
    sgprs: int | None
    spills: int | None  # AMD: VGPR + SGPR spill count; NVIDIA: spill store + load bytes
    scratch: int | None  # AMD scratch bytes per lane / NVIDIA stack bytes
    lds: int | None
    occupancy: int | None  # worst kernel's, in the arch's unit
    occupancy_pct: float | None
    limiter: str
    # the whole line's modelled traffic, from the source's model: bytes_read, bytes_written, bytes_total, flops,
    # intensity, formula (JSON), and what the view says of it: basis, rule, scope, md_scope, notation
    traffic: Any = None
    frontier: Any = None  # frontier.VariantFrontier, when compare --frontier compiled the levels

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _max(values: Sequence[int | None]) -> int | None:
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def _usage_figures(u: ResourceUsage | None) -> dict[str, int | None]:
    """The line's figures of one kernel, as its backend reads them (spills: AMD registers, NVIDIA bytes)."""
    if u is None:
        return dict.fromkeys(("regs", "sgprs", "spills", "scratch", "lds"))
    f = backend_of_usage(u).figures(u)
    return {"regs": f.registers, "sgprs": f.scalar_registers, "spills": u.spills,
            "scratch": f.scratch_bytes, "lds": f.memory_bytes}


TrafficHook = Callable[[Sequence[Record]], Any]


def variant_line(kernels: Sequence[Record], traffic: TrafficHook | None = None) -> VariantLine:
    first = kernels[0]
    figs = [_usage_figures(r.usage) for r in kernels]
    occs = [r.occupancy for r in kernels if r.occupancy is not None]
    worst = min(occs, key=lambda o: (o.value, o.percent)) if occs else None
    bad = [r.status for r in kernels if not r.ok]
    t = traffic(kernels) if traffic is not None else None
    return VariantLine(
        variant=first.variant, arch=first.arch, config=first.config.short(), kernels=tuple(kernels),
        status=bad[0] if bad else "ok", regs=_max([f["regs"] for f in figs]), sgprs=_max([f["sgprs"] for f in figs]),
        spills=sum(f["spills"] or 0 for f in figs) if not bad else None,
        scratch=_max([f["scratch"] for f in figs]), lds=_max([f["lds"] for f in figs]),
        occupancy=worst.value if worst else None, occupancy_pct=worst.percent if worst else None,
        limiter=",".join(worst.limiters) if worst else "-", traffic=t,
    )


def compare(records: Sequence[Record], traffic: TrafficHook | None = None) -> dict[str, list[VariantLine]]:
    """Records of one sweep -> per arch, one line per variant (kernels grouped); the deltas against
    REFERENCE are the view's (analysis/compare/view.py, through report/deltas.py). ``traffic``: a line's
    kernel records -> its modelled traffic, or None (no traffic columns without it)."""
    groups: dict[tuple[str, str, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.arch, r.variant, r.config.key()), []).append(r)
    per_arch: dict[str, list[VariantLine]] = {}
    for (arch, _, _), kernels in groups.items():
        per_arch.setdefault(arch, []).append(variant_line(kernels, traffic))
    return per_arch


def by_point(records: Sequence[Record], points: Mapping[str, str]) -> dict[str, list[Record]]:
    """A grid's records split by grid point: ``points`` maps each point's slot to its label in the tables, in the
    grid's order; a record goes to every point it answers (``Record.points``: a record two points share, as a
    default they do not change is, goes to both). One point: every record, under the label ''."""
    if len(points) <= 1:
        return {"": list(records)}
    return {label: [r for r in records if slot in (r.points or (r.slot,))] for slot, label in points.items()}


def compare_points(records: Sequence[Record], points: Mapping[str, str],
                   traffic: TrafficHook | None = None) -> dict[str, list[VariantLine]]:
    """One table per arch and grid point (``by_point``), each compared with the baseline of the same point, keyed
    by the arch and the point's label (``gfx942 [block_m=32]``; the arch alone where there is one point)."""
    return {f"{arch}{' ' + point if point else ''}": lines
            for point, recs in by_point(records, points).items()
            for arch, lines in compare(recs, traffic).items()}


# compare's variant lines: --sort names -> VariantLine attributes
LINE_SORTS = {"regs": "regs", "vgprs": "regs", "registers": "regs", "sgprs": "sgprs", "spills": "spills",
              "scratch": "scratch", "lds": "lds", "shared": "lds", "occupancy": "occupancy", "occ": "occupancy",
              "occ_percent": "occupancy_pct", "spill_free_occupancy": "spill_free_occupancy"}


def sort_lines(per_arch: Mapping[str, Sequence[Any]], metric: str | None) -> dict[str, list[Any]]:
    """compare's per-arch variant lines, each table best first by ``metric``."""
    if (metric := sort_given(metric)) is None:
        return {k: list(v) for k, v in per_arch.items()}
    key = metric.strip().lower().replace("-", "_")
    if key not in LINE_SORTS:
        raise UsageError(f"cannot sort compare by {metric!r}; sort by one of: {', '.join(LINE_SORTS)}")
    attr = LINE_SORTS[key]
    field = "occ_value" if attr == "occupancy" else attr  # occupancy sorts descending

    def value(ln: Any, _: str) -> Any:
        if attr == "spill_free_occupancy":
            return ln.frontier.spill_free_occupancy if ln.frontier is not None else None
        return getattr(ln, attr)

    return {k: sort_by(list(v), field if field != "occupancy_pct" else "occ_percent", value)
            for k, v in per_arch.items()}
