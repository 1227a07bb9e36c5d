"""NVIDIA occupancy (blocks per SM, warps beside): ``cuda_occupancy.h``'s rules (see the package)."""

from __future__ import annotations

from dataclasses import dataclass

from ..archs import NvidiaArch, expect_nvidia
from ..records import Occupancy
from .advice import _Knob, _limiters, _plan_text
from .common import DEFAULT_THREADS, KIB, NVIDIA_UNIT, _align_up, _ceil_div, _check_count, _check_threads, _plural


def warps_per_block(arch: NvidiaArch, threads: int) -> int:
    return _ceil_div(threads, arch.wave_size)


def blocks_by_registers(arch: NvidiaArch, regs: int, threads: int) -> int:
    """Rule 2 (``cudaOccMaxBlocksPerSMRegsLimit``): registers are allocated per warp in units of 256, in
    each of 4 sub-partitions of the SM's file; the hardware's per-block check rounds the warps up to the
    sub-partitions. 0 registers: no limit (the blocks limit then applies)."""
    wpb = warps_per_block(arch, threads)
    if regs == 0:
        return arch.max_blocks_per_sm
    if regs > arch.max_regs_per_thread:
        return 0
    per_warp = _align_up(regs * arch.wave_size, arch.reg_alloc_unit)
    if (per_warp * _align_up(wpb, arch.reg_subpartitions) > arch.regs_per_sm  # hardware check
            or per_warp * wpb > arch.regs_per_sm):  # software check
        return 0
    warps_per_subpartition = arch.regs_per_sm // arch.reg_subpartitions // per_warp
    return warps_per_subpartition * arch.reg_subpartitions // wpb


def shared_allocation(arch: NvidiaArch, shared_bytes: int) -> int:
    """Rule 3: static + dynamic + the 1 KiB the driver reserves per block (CC >= 8), in 128 B units."""
    return _align_up(shared_bytes + arch.shared_reserved_per_block, arch.shared_granule)


def shared_carveout(arch: NvidiaArch, allocation: int, carveout_percent: int | None = None) -> int | None:
    """The SM's shared-memory carveout (``cudaOccSMemPreferenceVoltaPlus`` and ``...SmemLimit``): the
    preference (default: the maximum; else a percent of the SM's shared memory) rounded up to a carveout
    step; when that cannot hold one block, the smallest step that can. None when no step can."""
    steps = [k * KIB for k in arch.shared_carveouts_kib]
    want = arch.shared_per_sm if carveout_percent is None else carveout_percent * arch.shared_per_sm // 100
    preferred = next((s for s in steps if s >= want), steps[-1])
    if preferred >= allocation:
        return preferred
    return next((s for s in steps if s >= allocation), None)


def blocks_by_shared(arch: NvidiaArch, shared_bytes: int, carveout_percent: int | None = None) -> int:
    """Rule 3: blocks the carveout holds; 0 when a block needs more than the opt-in per-block limit."""
    alloc = shared_allocation(arch, shared_bytes)
    if alloc > arch.max_shared_per_block + arch.shared_reserved_per_block:
        return 0
    carveout = shared_carveout(arch, alloc, carveout_percent)
    return 0 if carveout is None else carveout // alloc


@dataclass(frozen=True)
class _NvidiaLaunch:
    arch: NvidiaArch
    regs: int
    shared_bytes: int
    threads: int
    carveout_percent: int | None

    def limit(self, key: str, amount: int) -> int:
        a = self.arch
        if key == "regs":
            return blocks_by_registers(a, amount, self.threads)
        if key == "shared":
            return blocks_by_shared(a, amount, self.carveout_percent)
        if key == "warps":
            return a.max_warps_per_sm // warps_per_block(a, self.threads)
        if key == "blocks":
            return a.max_blocks_per_sm
        raise KeyError(key)

    def limits(self) -> dict[str, int]:
        return {"regs": self.limit("regs", self.regs), "shared": self.limit("shared", self.shared_bytes),
                "warps": self.limit("warps", 0), "blocks": self.limit("blocks", 0)}

    def value_with(self, changes: dict[str, int]) -> int:
        amounts = {"regs": self.regs, "shared": self.shared_bytes} | changes
        return min(self.limit("regs", amounts["regs"]), self.limit("shared", amounts["shared"]),
                   self.limit("warps", 0), self.limit("blocks", 0))


def nvidia_occupancy(arch: NvidiaArch, regs: int, shared_bytes: int = 0, threads: int = DEFAULT_THREADS, *,
                     carveout_percent: int | None = None) -> Occupancy:
    """Blocks (and warps) per SM of one kernel on an NVIDIA arch, what limits it, and the next step.

    ``regs``: registers per thread (ptxas); ``shared_bytes``: static + dynamic shared memory per block
    (Triton: ``metadata.shared``, dynamic, with the opt-in attribute set); ``threads``: per block
    (Triton: ``num_warps * 32``); ``carveout_percent``: the function's preferred shared-memory carveout
    (None: the driver default, the maximum). Shared memory over the per-block limit gives 0 blocks, with
    the reason in ``note``, not an error.
    """
    arch = expect_nvidia(arch, "amd_occupancy")
    _check_count("registers per thread", regs, arch.max_regs_per_thread, f"for a thread on {arch.name}")
    _check_count("shared memory bytes", shared_bytes)
    _check_threads("threads per block", threads, arch.max_threads_per_block)
    _check_count("carveout percent", carveout_percent, 100)

    launch = _NvidiaLaunch(arch, regs, shared_bytes, threads, carveout_percent)
    limits = launch.limits()
    value = min(limits.values())
    wpb = warps_per_block(arch, threads)
    ceiling = min(limits["warps"], limits["blocks"])
    at_max = value * wpb >= arch.max_warps_per_sm

    def describe(v: int) -> str:
        return f"{_plural(v, NVIDIA_UNIT)}, {v * wpb} warps/SM"

    if limits["blocks"] <= limits["warps"]:
        ceiling_reason = (f"no register or shared-memory cut helps: at the {arch.max_blocks_per_sm}-block/SM limit "
                          f"with {threads}-thread blocks ({ceiling * wpb} of {arch.max_warps_per_sm} warps); "
                          "larger blocks are needed for more warps")
    else:
        ceiling_reason = (f"no register or shared-memory cut helps: {threads}-thread blocks ({wpb} warps) fill "
                          f"{ceiling * wpb} of the {arch.max_warps_per_sm} warp slots; a block size that "
                          "divides them is needed for more")
    knobs = [_Knob("regs", "registers", regs, arch.max_regs_per_thread)]
    if shared_bytes > 0:
        knobs.append(_Knob("shared", "bytes of shared memory", shared_bytes, arch.max_shared_per_block + 1))
    next_step, headroom = _plan_text(value, ceiling, at_max, NVIDIA_UNIT, knobs, launch.limit,
                                     launch.value_with, describe, ceiling_reason)
    notes = []
    if limits["shared"] == 0:
        notes.append(f"does not launch: {shared_bytes} B of shared memory per block (+{arch.shared_reserved_per_block}"
                     f" B reserved) is over the {arch.max_shared_per_block} B opt-in limit of {arch.name}")
    elif limits["regs"] == 0:
        notes.append(f"does not launch: {wpb} warps of {regs} registers do not fit the {arch.regs_per_sm}-register "
                     "file")
    if carveout_percent is not None:
        carve = shared_carveout(arch, shared_allocation(arch, shared_bytes), carveout_percent)
        notes.append(f"carveout {carveout_percent} % -> {carve} B of shared memory per SM")
    return Occupancy(
        unit=NVIDIA_UNIT,
        value=value,
        max_value=ceiling,
        percent=round(100.0 * value * wpb / arch.max_warps_per_sm, 2),
        limiters=_limiters(limits, value, at_max,
                           {k.key: launch.limit(k.key, 0) for k in knobs} | ({"regs": 0} if regs == 0 else {})),
        limits=tuple(limits.items()),
        next_step=next_step,
        headroom=headroom,
        warps_per_sm=value * wpb,
        note="; ".join(notes),
    )
