"""Whether a register, SGPR or LDS / shared-memory growth costs time: the ``cliff`` rule.

Such a count costs time only through occupancy: a growth that keeps the kernel at its occupancy is
``changed`` (it passes, shown with how much more fits before the next step), one that takes its own
occupancy limit below what the kernel had (it crossed a step: the occupancy drops) or past the arch's
maximum fails. The limits come from the occupancy model (``vgprscope.core.occupancy`` through the backend that
compiled the entry), at the entry's own launch (``num_warps``, ``waves_per_eu``), not from the counts'
differences alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..core.archs import Arch, get_arch
from ..core.errors import VgprscopeError
from ..core.records import LAUNCH_DEFAULTS, ResourceUsage
from .baseline import Entry
from .metrics import metric_info


@dataclass(frozen=True)
class Cliff:
    """How the current count stands against its occupancy step.

    ``crossed``: why the growth fails ("" when it keeps the occupancy); ``headroom``: how much more of the
    count keeps the current occupancy (None when the model cannot say); ``after``: what the next unit
    brings (``3 waves/SIMD``, ``it no longer launches``, ``the arch's maximum (512)``)."""

    crossed: str
    headroom: int | None
    after: str

    def text(self, unit: str) -> str:
        """``16 VGPRs of headroom before 3 waves/SIMD`` or why it crossed."""
        if self.crossed:
            return self.crossed
        if self.headroom is None:
            return "same occupancy"
        return f"same occupancy, {self.headroom} {unit} of headroom before {self.after}"


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit.replace('waves', 'wave').replace('blocks', 'block')}" if n == 1 else f"{n} {unit}"


def _launch(e: Entry) -> tuple[int, int | None]:
    warps = getattr(e.config, "num_warps", None) or LAUNCH_DEFAULTS["num_warps"]
    return int(warps), getattr(e.config, "waves_per_eu", None)


def _with(usage: ResourceUsage, metric: str, amount: int) -> ResourceUsage:
    """The usage with ``metric`` at ``amount`` (its ``field`` moved by the difference), the rest as compiled."""
    m = metric_info(metric)
    name = m.field or metric
    now = getattr(usage, metric)
    return dataclasses.replace(usage, **{name: getattr(usage, name) + amount - now})


def _occupancy(e: Entry, arch: Arch, usage: ResourceUsage) -> tuple[int, dict[str, int]] | None:
    from ..backends import occupancy_of

    warps, wpe = _launch(e)
    try:
        occ = occupancy_of(usage, arch, warps, waves_per_eu=wpe)
    except (VgprscopeError, ValueError, TypeError):
        return None  # a count past what the model takes (over the arch's maximum): the caller says so
    return occ.value, dict(occ.limits)


def judge_cliff(base: Entry, cur: Entry, metric: str) -> Cliff | None:
    """The cliff of a growth of ``metric`` from ``base`` to ``cur``; None when the model cannot place it
    (no usage, an arch or metric it does not know): the caller then fails closed."""
    m = metric_info(metric)
    if not m.step or cur.usage is None or base.occupancy is None:
        return None
    try:
        arch = get_arch(cur.arch)
    except VgprscopeError:
        return None
    value = getattr(cur.usage, metric, None)
    maximum = getattr(arch, m.arch_max, None) if m.arch_max else None
    if not isinstance(value, int):
        return None
    if isinstance(maximum, int) and value > maximum:
        return Cliff(f"over {arch.name}'s maximum of {maximum} {m.unit}", None, "")
    had = int(base.occupancy["value"])
    now = _occupancy(cur, arch, cur.usage)
    if now is None:
        return None
    occ, limits = now
    own = limits.get(m.step)
    unit = str(base.occupancy.get("unit", ""))
    if own is not None and own < had:
        to = "it no longer launches" if own == 0 else _plural(own, unit)
        return Cliff(f"crosses an occupancy step: {had} -> {to}" if own else
                     f"crosses an occupancy step: {_plural(had, unit)} -> {to}", None, "")
    return Cliff("", *_headroom(cur, arch, metric, value, occ, maximum, unit))


def _headroom(e: Entry, arch: Arch, metric: str, value: int, occ: int, maximum: int | None,
              unit: str) -> tuple[int | None, str]:
    """(how much more of ``metric`` keeps ``occ``, what the next unit brings): a binary search over the
    occupancy model, which is non-increasing in every count."""
    if maximum is None or e.usage is None:
        return None, ""

    def keeps(amount: int) -> bool:
        got = _occupancy(e, arch, _with(e.usage, metric, amount))  # type: ignore[arg-type]
        return got is not None and got[0] >= occ

    lo, hi = value, maximum
    if keeps(hi):
        return hi - value, f"the arch's maximum ({maximum})"
    while lo < hi - 1:  # keeps(lo), not keeps(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if keeps(mid) else (lo, mid)
    after = _occupancy(e, arch, _with(e.usage, metric, hi))
    drop = after[0] if after is not None else 0
    return lo - value, "it no longer launches" if drop == 0 else _plural(drop, unit)
