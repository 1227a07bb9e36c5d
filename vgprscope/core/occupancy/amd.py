"""AMD occupancy (waves per SIMD): LLVM's rules and the hardware's, the differences named (see the package)."""

from __future__ import annotations

from dataclasses import dataclass

from ..archs import AmdArch, expect_amd
from ..errors import UsageError
from ..records import Occupancy
from .advice import _Knob, _limiters, _plan_text
from .common import AMD_UNIT, _align_up, _ceil_div, _check_count, _check_threads, _plural


def total_vgprs(arch: AmdArch, arch_vgpr: int, agpr: int = 0) -> int:
    """Rule 1: the unified VGPR+AGPR total of a wave (``.vgpr_count``): alignTo(arch_vgpr, 4) + agpr when
    agpr > 0, else arch_vgpr (LLVM ``AMDGPUMCExpr::evaluateTotalNumVGPR`` for gfx90a+)."""
    _check_count("arch VGPRs", arch_vgpr, arch.max_arch_vgprs, f"for a wave on {arch.name}")
    if agpr and not arch.unified_agprs:
        raise UsageError(f"{arch.name} has no AGPRs; got {agpr} AGPRs")
    _check_count("AGPRs", agpr, arch.max_agprs, f"for a wave on {arch.name}")
    if agpr > 0:
        return _align_up(arch_vgpr, 4) + agpr  # AGPRs start at a 4-aligned offset (.amdhsa_accum_offset)
    return arch_vgpr


def waves_with_vgprs(arch: AmdArch, vgpr_total: int) -> int:
    """Rule 2 (LLVM ``IsaInfo::getNumWavesPerEUWithNumVGPRs``): waves per SIMD the register file allows."""
    if vgpr_total < arch.vgpr_granule:
        return arch.max_waves_per_simd
    rounded = _align_up(vgpr_total, arch.vgpr_granule)
    return min(max(arch.vgprs_per_simd_lane // rounded, 1), arch.max_waves_per_simd)


def _align_down(n: int, granule: int) -> int:
    return n // granule * granule


def llvm_min_num_vgprs(arch: AmdArch, waves: int) -> int:
    """LLVM ``AMDGPU::IsaInfo::getMinNumVGPRs`` (Utils/AMDGPUBaseInfo.cpp): the fewest VGPRs that give at
    most ``waves`` waves per SIMD (0: no register count gives fewer than the arch's maximum). Where even
    the most VGPRs a wave can address leave more waves (RDNA3 wave32: 256 VGPRs still give 5), the answer
    for that many waves; where no count gives exactly ``waves`` (gfx1100 wave32: 11), the fewest for the
    next step up (97 VGPRs, 12 waves)."""
    if waves >= arch.max_waves_per_simd:
        return 0
    total, granule, addressable = arch.vgprs_per_simd_lane, arch.vgpr_granule, arch.max_vgprs_total
    most = _align_down(total // waves, granule)
    if most == _align_down(total // arch.max_waves_per_simd, granule):
        return 0
    fewest_waves = waves_with_vgprs(arch, addressable)
    if waves < fewest_waves:
        return llvm_min_num_vgprs(arch, fewest_waves)
    below_next = _align_down(total // (waves + 1), granule)
    return min(1 + min(most - granule, below_next), addressable)


def llvm_waves_per_eu(arch: AmdArch, waves_per_eu: int | None, max_flat_workgroup: int,
                      lds_static: int = 0, min_flat_workgroup: int = 1) -> tuple[int, int]:
    """The waves-per-EU range LLVM keeps for Triton's ``"amdgpu-waves-per-eu"="N,N"`` (None or 0: the
    attribute is absent, which LLVM reads as ``1,max``).

    LLVM ``AMDGPUSubtarget::getEffectiveWavesPerEU`` (AMDGPUSubtarget.cpp): the default range is
    (``getWavesPerEUForWorkGroup(maxFlatWG)`` = ceil(ceil(maxFlatWG / wave) / EUsPerCU), the waves a SIMD
    needs to hold one largest workgroup; ``getOccupancyWithWorkGroupSizes(LDS, flat sizes).second``), its
    minimum lowered to its maximum; a request whose minimum is below or above that default range, whose
    minimum exceeds its maximum, or whose maximum exceeds the arch's, is dropped for the default; a kept
    request's maximum is capped at the default maximum. ``lds_static`` is the LDS LLVM sees (Triton's is
    dynamic: 0). Measured on Triton 3.9's LLVM, gfx90a/gfx942/gfx950/gfx1100, num_warps 1..16: e.g.
    ``waves_per_eu=1`` with 8 warps (2 waves/SIMD per workgroup) is dropped and the kernel compiles as
    without the hint.
    """
    hi = _llvm_workgroup_waves(arch, lds_static, min_flat_workgroup, max_flat_workgroup)
    lo = min(_ceil_div(waves_per_workgroup(arch, max_flat_workgroup), arch.simds_per_cu), hi)
    first, second = (waves_per_eu, waves_per_eu) if waves_per_eu else (1, arch.max_waves_per_simd)
    if first < lo or first > hi or first > second or second > arch.max_waves_per_simd:
        return lo, hi
    return first, min(second, hi)


def llvm_vgpr_allocation(arch: AmdArch, vgpr_total: int, pad_waves: int | None) -> int:
    """LLVM's ``NumVGPRsForWavesPerEU`` (``AMDGPUAsmPrinter::getSIProgramInfo``), which the kernel
    descriptor's ``.amdhsa_next_free_vgpr`` carries: the VGPRs used, padded up to
    ``getMinNumVGPRs(max waves per EU)`` (the maximum of :func:`llvm_waves_per_eu`'s range; None: the
    arch's maximum, no padding). ``.vgpr_count`` stays unpadded; the hardware allocates this."""
    pad = llvm_min_num_vgprs(arch, pad_waves) if pad_waves else 0
    return max(vgpr_total, pad)


def waves_with_vgprs_padded(arch: AmdArch, vgpr_total: int, pad_waves: int | None) -> int:
    """Rule 2 on the allocation LLVM pads for the waves-per-EU range it kept (``pad_waves``: that range's
    maximum, see :func:`llvm_waves_per_eu`; None: no padding). Seen on gfx942: 108 VGPRs at
    waves_per_eu=2 -> next_free_vgpr 169, `; Occupancy: 2`; on gfx1100 (wave32) waves_per_eu=2 cannot go
    below 5 waves (241 VGPRs) and LLVM says 5; waves_per_eu=11 gives 12 (97 VGPRs).
    """
    return waves_with_vgprs(arch, llvm_vgpr_allocation(arch, vgpr_total, pad_waves))


def waves_with_sgprs(arch: AmdArch, sgpr: int) -> int:
    """Rule 3, LLVM's GFX9 table (``IsaInfo::getOccupancyWithNumSGPRs``): <=80 -> 10, <=88 -> 9,
    <=100 -> 8, else 7, capped at the arch's max waves; SGPRs never limit on GFX10+ (RDNA).

    The count includes VCC / flat-scratch / XNACK (``.sgpr_count``). The HIP runtime instead uses
    ``800 // alignUp(sgpr, 16)`` (7 waves for 97-100 SGPRs); which one the hardware follows is unresolved
    (occupancy.md rule 3), and LLVM's is used here so that ours and ``; Occupancy:`` compare.
    """
    if arch.sgpr_waves is None:
        return arch.max_waves_per_simd
    for most, waves in arch.sgpr_waves:
        if sgpr <= most:
            return min(waves, arch.max_waves_per_simd)
    return min(arch.sgpr_waves_else, arch.max_waves_per_simd)


def waves_per_workgroup(arch: AmdArch, workgroup_size: int) -> int:
    return _ceil_div(workgroup_size, arch.wave_size)


def workgroups_per_cu_by_slots(arch: AmdArch, waves_per_wg: int) -> int:
    """Rule 4 (LLVM ``IsaInfo::getMaxWorkGroupsPerCU``): wave slots, and the barrier limit for
    workgroups of more than one wave (one-wave workgroups use no barrier)."""
    slots = arch.max_waves_per_cu // waves_per_wg
    return slots if waves_per_wg == 1 else min(slots, arch.max_workgroups_per_cu)


def lds_allocation(arch: AmdArch, lds_bytes: int) -> int:
    """LDS a workgroup is given: rounded up to the allocation granule (hardware; LLVM does not round)."""
    return _align_up(lds_bytes, arch.lds_granule) if lds_bytes > 0 else 0


def _workgroups_by_lds(arch: AmdArch, lds_bytes: int, *, rounded: bool = True) -> int | None:
    """Workgroups per CU the LDS allows; None when no LDS is used; 0 when one workgroup cannot have it."""
    if lds_bytes <= 0:
        return None
    if lds_bytes > arch.lds_per_workgroup:
        return 0
    return arch.lds_per_cu // (lds_allocation(arch, lds_bytes) if rounded else lds_bytes)


def _waves_from_workgroups(arch: AmdArch, workgroups: int, waves_per_wg: int) -> int:
    """Rule 4's last step: waves spread as evenly as possible over the SIMDs, the most on any SIMD."""
    if workgroups <= 0:
        return 0
    return min(_ceil_div(workgroups * waves_per_wg, arch.simds_per_cu), arch.max_waves_per_simd)


def _workgroups_within(arch: AmdArch, waves_per_simd: int, waves_per_wg: int) -> int:
    """Whole workgroups that fit in a per-SIMD wave budget (registers are per SIMD; a workgroup is
    resident with all its waves or not at all)."""
    return waves_per_simd * arch.simds_per_cu // waves_per_wg


@dataclass(frozen=True)
class _AmdLaunch:
    arch: AmdArch
    vgpr_total: int
    sgpr: int | None
    lds_bytes: int
    workgroup_size: int
    pad_waves: int | None  # the waves-per-EU maximum LLVM pads the VGPR allocation for (None: no padding)
    round_lds: bool = True  # False: LLVM's view, LDS not rounded to its granule

    @property
    def waves_per_wg(self) -> int:
        return waves_per_workgroup(self.arch, self.workgroup_size)

    def register_waves(self, vgpr_total: int) -> int:
        return waves_with_vgprs_padded(self.arch, vgpr_total, self.pad_waves)

    def limit(self, key: str, amount: int) -> int:
        a, wpw = self.arch, self.waves_per_wg
        if key == "vgpr":
            return _waves_from_workgroups(a, _workgroups_within(a, self.register_waves(amount), wpw), wpw)
        if key == "sgpr":
            return _waves_from_workgroups(a, _workgroups_within(a, waves_with_sgprs(a, amount), wpw), wpw)
        if key == "lds":
            wgs = _workgroups_by_lds(a, amount, rounded=self.round_lds)
            return a.max_waves_per_simd if wgs is None else _waves_from_workgroups(a, wgs, wpw)
        if key == "workgroup":
            return _waves_from_workgroups(a, workgroups_per_cu_by_slots(a, wpw), wpw)
        raise KeyError(key)

    def limits(self) -> dict[str, int]:
        out = {"vgpr": self.limit("vgpr", self.vgpr_total)}
        if self.sgpr is not None and self.arch.sgpr_waves is not None:
            out["sgpr"] = self.limit("sgpr", self.sgpr)
        if self.lds_bytes > 0:
            out["lds"] = self.limit("lds", self.lds_bytes)
        out["workgroup"] = self.limit("workgroup", 0)
        return out

    def value_with(self, changes: dict[str, int]) -> int:
        vgpr, sgpr, lds = (changes.get("vgpr", self.vgpr_total), changes.get("sgpr", self.sgpr),
                           changes.get("lds", self.lds_bytes))
        out = [self.limit("vgpr", vgpr), self.limit("workgroup", 0)]
        if sgpr is not None and self.arch.sgpr_waves is not None:
            out.append(self.limit("sgpr", sgpr))
        if lds > 0:
            out.append(self.limit("lds", lds))
        return min(out)

    def workgroups(self) -> int:
        """Workgroups resident on one CU at once."""
        a, wpw = self.arch, self.waves_per_wg
        counts = [workgroups_per_cu_by_slots(a, wpw), _workgroups_within(a, self.register_waves(self.vgpr_total), wpw)]
        if self.sgpr is not None and a.sgpr_waves is not None:
            counts.append(_workgroups_within(a, waves_with_sgprs(a, self.sgpr), wpw))
        by_lds = _workgroups_by_lds(a, self.lds_bytes)
        if by_lds is not None:
            counts.append(by_lds)
        return min(counts)


def _llvm_workgroup_waves(arch: AmdArch, lds_bytes: int, min_wg: int, max_wg: int) -> int:
    """LLVM 22's ``AMDGPUSubtarget::getOccupancyWithWorkGroupSizes(LDS, {min, max}).second``: the
    workgroup-and-LDS occupancy over a range of flat workgroup sizes, LDS not rounded to its granule."""
    max_wgs_lds = arch.lds_per_cu // max(lds_bytes, 1)
    if max_wgs_lds == 0:
        return 1

    def props(size: int) -> tuple[int, int, int]:
        wpw = waves_per_workgroup(arch, size)
        wgs = min(workgroups_per_cu_by_slots(arch, wpw), max_wgs_lds)
        return wpw, wgs, wpw * wgs

    min_wpw, max_wgs, max_waves_cu = props(min_wg)
    _, _, min_waves_cu = props(max_wg)
    if min_waves_cu >= max_waves_cu:
        max_waves_cu = min_waves_cu
    else:  # a larger group than the minimum may fill the leftover wave slots with as many workgroups
        leftover_per_wg = (arch.max_waves_per_cu - max_wgs * min_wpw) // max_wgs
        if leftover_per_wg:
            max_waves_cu += max_wgs * min(leftover_per_wg, (max_wg - 1) // arch.wave_size + 1 - min_wpw)
    return max(1, min(_ceil_div(max_waves_cu, arch.simds_per_cu), arch.max_waves_per_simd))


def _llvm_occupancy(arch: AmdArch, vgpr_total: int, sgpr: int | None, lds_bytes: int,
                    workgroup_range: tuple[int, int], pad_waves: int | None) -> int:
    """Rule 5 with the VGPR padding given (``pad_waves``, see :func:`waves_with_vgprs_padded`)."""
    waves = waves_with_vgprs_padded(arch, vgpr_total, pad_waves)
    if sgpr is not None:
        waves = min(waves, waves_with_sgprs(arch, sgpr))
    return min(waves, _llvm_workgroup_waves(arch, lds_bytes, *workgroup_range))


def llvm_pad_waves(arch: AmdArch, waves_per_eu: int | None, max_flat_workgroup: int, lds_static: int = 0,
                   min_flat_workgroup: int = 1) -> int | None:
    """The waves per EU LLVM pads the VGPR allocation for (``MFI->getMaxWavesPerEU()``: the maximum of
    :func:`llvm_waves_per_eu`'s range), None when that is the arch's maximum (no padding)."""
    most = llvm_waves_per_eu(arch, waves_per_eu, max_flat_workgroup, lds_static, min_flat_workgroup)[1]
    return most if most < arch.max_waves_per_simd else None


def _amd_note(launch: _AmdLaunch, value: int, llvm_occupancy: int | None, lds_static: int,
              llvm_max_workgroup: int | None, waves_per_eu: int | None) -> str:
    """Walk from our number to LLVM's view one difference at a time and name each that changes it.

    With LLVM's line: empty when it agrees; else every named step, or, if LLVM's line is not what our
    model of LLVM's rule gives, that the reason is unknown. Without it: the steps where ours departs from
    LLVM's rule for this very launch (LDS granule, whole workgroups).
    """
    a, wg, wpw = launch.arch, launch.workgroup_size, launch.waves_per_wg
    n, sgpr, pad, total = launch.vgpr_total, launch.sgpr, launch.pad_waves, launch.lds_bytes
    static = min(lds_static, total)
    hi = llvm_max_workgroup or wg
    # the padding is a fact of the compiled kernel (LLVM decided it for its own workgroup range), so every
    # step keeps it; only the occupancy formula's view changes
    chain: list[tuple[str, int]] = [
        ("granule", _AmdLaunch(a, n, sgpr, total, wg, pad, round_lds=False).value_with({})),
        ("dynamic", _AmdLaunch(a, n, sgpr, static, wg, pad, round_lds=False).value_with({})),
        ("whole", _llvm_occupancy(a, n, sgpr, static, (wg, wg), pad)),
        ("range", _llvm_occupancy(a, n, sgpr, static, (1, hi), pad)),
    ]
    room = launch.register_waves(n)
    if sgpr is not None:
        room = min(room, waves_with_sgprs(a, sgpr))
    fit = _workgroups_within(a, room, wpw)
    steps: list[tuple[str, str]] = []
    prev = value
    for kind, v in chain:
        if v == prev:
            continue
        was, now = _plural(prev, AMD_UNIT), _plural(v, AMD_UNIT)
        reason = {
            "granule": f"LDS rounded up to the {a.lds_granule}-byte allocation granule ({total} -> "
                       f"{lds_allocation(a, total)} B) gives {was}, {v} unrounded; LLVM ignores the granule",
            "dynamic": f"Triton's {total - static} B of dynamic LDS (metadata.shared) limit it to {was}; "
                       f"LLVM sees only the static LDS ({static} B): {now}",
            "whole": f"{wpw}-wave workgroups are resident whole: registers leave room for "
                     f"{_plural(room, AMD_UNIT)} ({room * a.simds_per_cu} waves per CU), so {fit} "
                     f"workgroup{'' if fit == 1 else 's'} ({fit * wpw} waves) fit: {was}; LLVM's formula "
                     f"does not round to whole workgroups: {now}",
            "range": f"LLVM assumes any workgroup of 1..{hi} threads (amdgpu-flat-work-group-size), not the "
                     f"real {wg}: {now}",
        }[kind]
        steps.append((kind, reason))
        prev = v
    if llvm_occupancy is None:
        return "; ".join(r for kind, r in steps if kind in ("granule", "whole"))
    if llvm_occupancy == value:
        return ""
    head = f"LLVM's `; Occupancy: {llvm_occupancy}` differs from ours ({value})"
    if llvm_occupancy == prev:
        return f"{head}: " + "; ".join(r for _, r in steps)
    hint = ""
    if llvm_occupancy < prev and not waves_per_eu:
        hint = "; a waves_per_eu hint, which pads LLVM's VGPR allocation, would explain a lower value: pass it"
    return f"{head} for a reason vgprscope cannot name: our model of LLVM's rule gives {prev}{hint}"


def amd_occupancy(
    arch: AmdArch,
    vgpr_total: int,
    sgpr: int | None = None,
    lds_bytes: int = 0,
    workgroup_size: int | None = None,
    *,
    agpr: int = 0,
    arch_vgpr: int | None = None,
    llvm_occupancy: int | None = None,
    lds_static: int = 0,
    llvm_max_workgroup: int | None = None,
    waves_per_eu: int | None = None,
) -> Occupancy:
    """Waves per SIMD of one kernel on an AMD arch, what limits it, and the next step.

    ``vgpr_total``: the unified VGPR+AGPR count (``.vgpr_count``); when ``arch_vgpr`` is given the total
    is computed from ``arch_vgpr`` and ``agpr`` by rule 1 and ``vgpr_total`` must agree with it (or be 0).
    ``sgpr``: ``.sgpr_count`` incl. VCC / flat scratch / XNACK; None: not limiting.
    ``lds_bytes``: all the LDS of a workgroup (static + Triton's dynamic ``shared``).
    ``workgroup_size``: threads of the real launch (Triton: ``num_warps * wave_size``); None: one wave.
    ``llvm_occupancy``, ``lds_static``, ``llvm_max_workgroup``: LLVM's ``; Occupancy:`` line and what
    LLVM saw (static LDS, ``.max_flat_workgroup_size``), only to explain a difference in ``note``.
    ``waves_per_eu``: Triton's ``waves_per_eu`` option (``"amdgpu-waves-per-eu"="N,N"``), which pads the
    VGPR allocation when LLVM keeps it and is dropped, with no effect, when one workgroup of
    ``llvm_max_workgroup`` threads (default: ``workgroup_size``, as Triton sets it) needs more waves per
    SIMD (see :func:`llvm_waves_per_eu` and :func:`waves_with_vgprs_padded`).
    """
    arch = expect_amd(arch, "nvidia_occupancy")
    if arch_vgpr is not None:
        computed = total_vgprs(arch, arch_vgpr, agpr)
        if vgpr_total not in (0, computed):
            raise UsageError(f"vgpr_total {vgpr_total} does not match {arch_vgpr} arch VGPRs + {agpr} AGPRs "
                             f"(= {computed} by the unified-file rule)")
        vgpr_total = computed
    else:
        _check_count("AGPRs", agpr, arch.max_agprs, f"for a wave on {arch.name}")
        if agpr and not arch.unified_agprs:
            raise UsageError(f"{arch.name} has no AGPRs; got {agpr} AGPRs")
    _check_count("VGPRs", vgpr_total, arch.max_vgprs_total,
                 f"for a wave on {arch.name} ({arch.max_arch_vgprs} arch VGPRs + {arch.max_agprs} AGPRs)"
                 if arch.unified_agprs else f"for a wave on {arch.name}")
    if agpr > vgpr_total:
        raise UsageError(f"{agpr} AGPRs cannot exceed the VGPR+AGPR total {vgpr_total}")
    _check_count("SGPRs", sgpr, arch.max_sgprs, f"for a wave on {arch.name} (VCC, flat scratch and XNACK included)")
    _check_count("LDS bytes", lds_bytes)
    _check_count("static LDS bytes", lds_static)
    _check_count("waves_per_eu", waves_per_eu, arch.max_waves_per_simd, f"waves per SIMD on {arch.name}")
    _check_count("LLVM occupancy", llvm_occupancy, arch.max_waves_per_simd, f"waves per SIMD on {arch.name}")
    wg = arch.wave_size if workgroup_size is None else workgroup_size
    _check_threads("workgroup size", wg, arch.max_threads_per_workgroup)
    if llvm_max_workgroup is not None:
        _check_threads("LLVM's max workgroup size", llvm_max_workgroup, arch.max_threads_per_workgroup)

    # the padding LLVM decided for its own flat workgroup range (Triton: 1..num_warps*wave) and static LDS
    llvm_wg, static = llvm_max_workgroup or wg, min(lds_static, lds_bytes)
    kept = llvm_waves_per_eu(arch, waves_per_eu, llvm_wg, static)
    dropped = bool(waves_per_eu) and kept[0] != waves_per_eu
    launch = _AmdLaunch(arch, vgpr_total, sgpr, lds_bytes, wg, llvm_pad_waves(arch, waves_per_eu, llvm_wg, static))
    limits = launch.limits()
    value = min(limits.values())
    ceiling = limits["workgroup"]
    unit = AMD_UNIT
    knobs = [_Knob("vgpr", "VGPRs/AGPRs" if agpr else "VGPRs", vgpr_total, arch.max_vgprs_total)]
    if "sgpr" in limits and sgpr is not None:  # an SGPR limit comes from an SGPR count
        knobs.append(_Knob("sgpr", "SGPRs", sgpr, arch.max_sgprs))
    if lds_bytes > 0:
        # one byte past the per-workgroup limit: the headroom search then reports "no longer launches"
        knobs.append(_Knob("lds", "bytes of LDS", lds_bytes, arch.lds_per_workgroup + 1))
    wpw = launch.waves_per_wg
    ceiling_reason = (
        f"no register or LDS cut helps: {wg}-thread workgroups ({wpw} waves) fit at most "
        f"{workgroups_per_cu_by_slots(arch, wpw)} per CU (wave slots and the "
        f"{arch.max_workgroups_per_cu}-barrier limit), {_plural(ceiling, unit)}; another workgroup size is needed"
    )
    at_max = value >= arch.max_waves_per_simd
    cap_reason = (f"no register cut helps: waves_per_eu={waves_per_eu} pads the VGPR allocation to "
                  f"{_plural(launch.register_waves(0), unit)}; raise or drop the hint for more"
                  if waves_per_eu and not dropped else "")
    next_step, headroom = _plan_text(
        value, ceiling, at_max, unit, knobs, launch.limit, launch.value_with, lambda v: _plural(v, unit),
        ceiling_reason, cap_reason,
    )
    note = _amd_note(launch, value, llvm_occupancy, lds_static, llvm_max_workgroup, waves_per_eu)
    if dropped and waves_per_eu is not None:  # dropped: a hint was given
        lo, hi = kept
        why = (f"below the {_plural(lo, unit)} one {llvm_wg}-thread workgroup needs" if waves_per_eu < lo else
               f"above the {_plural(hi, unit)} its workgroup size and {static} B of static LDS allow")
        note = "; ".join(x for x in (f"waves_per_eu={waves_per_eu} has no effect: LLVM drops a hint {why} "
                                     "(AMDGPUSubtarget::getEffectiveWavesPerEU) and pads nothing", note) if x)
    if value == 0:
        why = (f"a workgroup needs {lds_bytes} B of LDS, more than the {arch.lds_per_workgroup} B a workgroup "
               f"may have on {arch.name}" if limits.get("lds") == 0 else
               f"a {wg}-thread workgroup needs {_ceil_div(wpw, arch.simds_per_cu)} waves on each SIMD, more than "
               f"its registers allow ({_plural(launch.register_waves(vgpr_total), unit)})")
        note = "; ".join(x for x in (f"does not launch: {why}", note) if x)
    return Occupancy(
        unit=unit,
        value=value,
        max_value=ceiling,
        percent=round(100.0 * value / arch.max_waves_per_simd, 2),
        # the VGPR floor without the waves_per_eu padding: a padded allocation binds like a used one
        limiters=_limiters(limits, value, at_max, {k.key: launch.limit(k.key, 0) for k in knobs}
                           | {"vgpr": _AmdLaunch(arch, 0, None, 0, wg, None).limit("vgpr", 0)}),
        limits=tuple(limits.items()),
        next_step=next_step,
        headroom=headroom,
        waves_per_cu=launch.workgroups() * wpw,
        note=note,
    )
