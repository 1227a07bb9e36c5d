"""The next occupancy step as advice: how far each resource is from the next level, in words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .common import _last_at_least, _plural


@dataclass(frozen=True)
class _Knob:
    """A resource the kernel author can shed or add: its limit name, how to say it, and its range."""

    key: str  # the limit it drives ("vgpr", "lds", "regs", ...)
    label: str  # "VGPRs", "bytes of LDS", ...
    amount: int
    maximum: int  # the largest amount the search for headroom considers


def _plan_text(
    value: int,
    ceiling: int,
    at_max: bool,
    unit: str,
    knobs: list[_Knob],
    limit_of: Callable[[str, int], int],
    value_with: Callable[[dict[str, int]], int],
    describe: Callable[[int], str],
    ceiling_reason: str,
    cap_reason: str = "",
) -> tuple[str, str]:
    """(next_step, headroom): the smallest cuts that reach the next step, and how much more fits.

    ``limit_of(key, amount)`` is one resource's own limit (non-increasing in the amount);
    ``value_with({key: amount})`` is the occupancy with those amounts changed, the rest as given.
    Every resource whose own limit is below the next value must move, so all of them are named.
    ``cap_reason`` says why no cut helps when a knob's own limit stays below the ceiling even at 0.
    """
    reachable = min([ceiling, *(limit_of(k.key, 0) for k in knobs)])
    if at_max:
        next_step = f"at the maximum ({describe(value)})"
    elif value >= ceiling:
        next_step = ceiling_reason
    elif value >= reachable:
        next_step = cap_reason or ceiling_reason
    else:
        target = value + 1
        cuts: dict[str, int] = {}
        for k in knobs:
            if limit_of(k.key, k.amount) < target:  # feasible: every knob's limit at 0 is >= target
                def own_limit(a: int, key: str = k.key) -> int:
                    return limit_of(key, a)

                cuts[k.key] = _last_at_least(own_limit, target, 0, k.amount)
        reached = value_with(cuts)
        parts = [f"{k.amount - cuts[k.key]} {k.label} (-> {cuts[k.key]})" for k in knobs if k.key in cuts]
        next_step = f"shed {' and '.join(parts)} for {describe(reached)}"

    if value == 0:
        return next_step, "none: it does not launch"
    notes = []
    for k in knobs:
        def value_at(a: int, key: str = k.key) -> int:
            return value_with({key: a})

        top = _last_at_least(value_at, value, k.amount, k.maximum)
        extra = top - k.amount
        if top >= k.maximum:
            if k is knobs[0]:  # the registers always get a headroom line
                notes.append(f"{extra} {k.label} of headroom: even the maximum, {k.maximum}, keeps "
                             f"{_plural(value, unit)}")
            continue
        drop = value_with({k.key: top + 1})
        after = "it no longer launches" if drop == 0 else _plural(drop, unit)
        notes.append(f"{extra} {k.label} of headroom before {after}")
    return next_step, "; ".join(notes)


def _limiters(limits: dict[str, int], value: int, at_max: bool, floor: dict[str, int]) -> tuple[str, ...]:
    """The limits that bind: those equal to the value, unless it is the arch's maximum. A resource binds
    only if having none of it would allow more (``floor``: each resource's limit at 0): 32 VGPRs do not
    bind 768-thread workgroups that the wave slots hold to 6 waves/SIMD, and an unused resource never
    binds."""
    if at_max:
        return ()
    return tuple(name for name, lim in limits.items() if lim == value and floor.get(name, value + 1) > value)
