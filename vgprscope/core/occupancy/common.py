"""The occupancy model's units, its ladder step, and the arithmetic and input checks every rule uses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UsageError

AMD_UNIT = "waves/SIMD"
NVIDIA_UNIT = "blocks/SM"
KIB = 1024  # bytes per KiB: the carveout steps are given in KiB (core/archs.py)
DEFAULT_THREADS = 128  # Triton's default launch on NVIDIA: num_warps=4 warps of 32 threads


@dataclass(frozen=True)
class LadderStep:
    """Register counts ``lo..hi`` (inclusive) give ``value`` (waves/SIMD on AMD, blocks/SM on NVIDIA)."""

    lo: int
    hi: int
    value: int
    percent: float
    warps_per_sm: int | None = None  # NVIDIA only






def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align_up(n: int, granule: int) -> int:
    return _ceil_div(n, granule) * granule


def _plural(n: int, unit: str) -> str:
    """'1 wave/SIMD', '3 waves/SIMD', '1 block/SM', '2 blocks/SM'."""
    noun, _, per = unit.partition("/")
    if n == 1 and noun.endswith("s"):
        noun = noun[:-1]
    return f"{n} {noun}/{per}" if per else f"{n} {noun}"


def _check_count(name: str, value: int | None, maximum: int | None = None, why: str = "") -> None:
    """A count must be a whole number, not negative, and (where given) at most ``maximum``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number; got {value!r}")
    if value < 0:
        raise UsageError(f"{name} must not be negative; got {value}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{name} {value} is over the maximum of {maximum}{' ' + why if why else ''}")


def _check_threads(name: str, value: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number; got {value!r}")
    if not 1 <= value <= maximum:
        raise UsageError(f"{name} must be between 1 and {maximum} threads; got {value}")


def _last_at_least(fn: Callable[[int], int], target: int, lo: int, hi: int) -> int:
    """Largest x in [lo, hi] with fn(x) >= target, for fn non-increasing and fn(lo) >= target."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fn(mid) >= target:
            lo = mid
        else:
            hi = mid - 1
    return lo
