"""``vgprscope occupancy`` as a library call: the occupancy of one kernel from its counts typed by hand (the
limit, what binds, the next step), and the arch's ladder where asked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..backends import BACKENDS, Calculation, backend_of
from ..core.archs import Arch, get_arch
from ..core.errors import UsageError
from ..core.occupancy.common import LadderStep


@dataclass(frozen=True)
class OccupancyResult:
    """The calculator's answer: the arch, the backend's calculation, and the ladder where asked (None)."""

    arch: Arch
    calculation: Calculation
    ladder: tuple[LadderStep, ...] | None = None

    @property
    def cannot_launch(self) -> str | None:
        """Why the counts cannot launch on the arch (occupancy 0: its note), None where they can."""
        o = self.calculation.occupancy
        return o.note if o is not None and o.value == 0 else None

    def as_dict(self) -> dict[str, Any]:
        """``--format json``: the inputs, the vendor's own figures, the occupancy and its limits, the ladder."""
        o = self.calculation.occupancy
        out: dict[str, Any] = {"arch": self.arch.name, "vendor": self.arch.vendor.value} | self.calculation.fields
        if o is not None:
            out |= {"unit": o.unit, "occupancy_pct": o.percent, "limiters": list(o.limiters),
                    "limits": dict(o.limits), "next_step": o.next_step, "headroom": o.headroom, "note": o.note}
        if self.ladder is not None:
            out["ladder"] = [{"lo": s.lo, "hi": s.hi, "value": s.value, "percent": s.percent}
                             | ({"warps_per_sm": s.warps_per_sm} if s.warps_per_sm is not None else {})
                             for s in self.ladder]
        return out

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1)

    def table(self, wide: bool = False) -> str:
        from ..report.usage_text import calculator_tables

        return calculator_tables(self.arch, self.as_dict(), self.ladder, self.calculation, wide)


def _verb(names: list[str]) -> str:
    return "applies" if len(names) == 1 else "apply"


def occupancy(arch: str, *, vgprs: int | None = None, agprs: int | None = None, sgprs: int | None = None,
              lds: int | None = None, workgroup: int | None = None, regs: int | None = None,
              shared: int | None = None, threads: int | None = None, ladder: bool = False) -> OccupancyResult:
    """Occupancy of one kernel on ``arch`` from its counts (AMD: ``vgprs``, ``agprs``, ``sgprs``, ``lds``,
    ``workgroup``; NVIDIA: ``regs``, ``shared``, ``threads``); ``ladder``: the arch's register ladder too.
    A count of the other vendor's is a UsageError naming this vendor's."""
    target = get_arch(arch)
    backend = backend_of(target)
    values = {"--vgprs": vgprs, "--agprs": agprs, "--sgprs": sgprs, "--lds": lds, "--workgroup": workgroup,
              "--regs": regs, "--shared": shared, "--threads": threads}
    # options of another vendor are refused, named with that vendor's own
    for other in BACKENDS:
        given = [o for o in other.facts.calculator_options if values.get(o) is not None]
        if other is not backend and given:
            raise UsageError(f"{', '.join(given)} {_verb(given)} to {other.vendor.name} archs only; {target.name} is "
                             f"{backend.vendor.name}: use {', '.join(backend.facts.calculator_options)}")
    calc = backend.calculate(target, values, ladder)
    steps = tuple(backend.ladder(target, calc.size)) if ladder else None
    return OccupancyResult(target, calc, steps)
