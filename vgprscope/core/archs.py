"""The one table of per-arch constants. No occupancy constant lives anywhere else.

Every value comes from ``shared/reference/occupancy.md`` (which cites LLVM's AMDGPUBaseInfo.cpp,
AMDGPUUsage.rst, the ROCm hardware tables, NVIDIA's ``cuda_occupancy.h`` and tuning guides).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from .errors import UnknownNameError, UsageError


class Vendor(str, Enum):
    AMD = "amd"
    NVIDIA = "nvidia"


@dataclass(frozen=True)
class AmdArch:
    """An AMD GPU as the occupancy rules see it (unit: waves per SIMD, "EU" in LLVM)."""

    name: str
    description: str
    gfx: str  # the LLVM processor name Triton targets
    wave_size: int
    simds_per_cu: int
    max_waves_per_simd: int
    vgprs_per_simd_lane: int  # register file per lane per SIMD (VGPRs and AGPRs share it on CDNA)
    max_arch_vgprs: int  # per wave
    max_agprs: int  # per wave; 0 where there are no AGPRs
    vgpr_granule: int
    # GFX9 SGPR table (LLVM getOccupancyWithNumSGPRs): (max sgprs, waves); None where SGPRs never limit.
    sgpr_waves: tuple[tuple[int, int], ...] | None
    sgpr_waves_else: int  # waves when the count is above the table's last row
    max_sgprs: int  # per wave, VCC / flat-scratch / XNACK extras included (`.sgpr_count`)
    lds_per_cu: int
    lds_per_workgroup: int
    lds_granule: int
    max_workgroups_per_cu: int
    triton_target: bool = True  # False where the installed Triton has no such target mode
    # CUs of the table's reference part (WGPs on RDNA in WGP mode): what split-k sizes its grid by when
    # compiling for the arch; a launch uses the device's own count.
    compute_units: int = 0

    vendor = Vendor.AMD
    backend = "hip"

    @property
    def unified_agprs(self) -> bool:
        return self.max_agprs > 0

    @property
    def max_vgprs_total(self) -> int:
        return self.max_arch_vgprs + self.max_agprs

    @property
    def max_waves_per_cu(self) -> int:
        return self.max_waves_per_simd * self.simds_per_cu

    @property
    def max_threads_per_workgroup(self) -> int:
        return 1024


@dataclass(frozen=True)
class NvidiaArch:
    """An NVIDIA GPU as the occupancy rules see it (unit: blocks per SM)."""

    name: str
    description: str
    capability: int  # e.g. 80 for sm_80
    wave_size: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int
    max_regs_per_thread: int
    reg_alloc_unit: int  # registers, per warp
    reg_subpartitions: int
    shared_per_sm: int
    max_shared_per_block: int  # with the opt-in attribute, which Triton sets
    shared_carveouts_kib: tuple[int, ...]
    shared_granule: int
    shared_reserved_per_block: int
    max_threads_per_block: int = 1024
    # SMs of the table's reference part (named in the description): what split-k sizes its grid by when
    # compiling for the arch; a launch uses the device's own count.
    compute_units: int = 0
    triton_target: bool = True  # False where the installed Triton has no such target

    vendor = Vendor.NVIDIA
    backend = "cuda"


Arch = AmdArch | NvidiaArch


# The vendor's own occupancy functions take only their vendor's archs: these say so in one line (the arch
# table is, with ``vgprscope.backends``, the one place that tells the vendors apart).
def expect_amd(arch: Arch, instead: str) -> AmdArch:
    """``arch`` when it is an AMD arch, else a UsageError naming ``instead``, the function to use."""
    if isinstance(arch, AmdArch):
        return arch
    raise UsageError(f"{arch.name} is not an AMD arch; use {instead}")


def expect_nvidia(arch: Arch, instead: str) -> NvidiaArch:
    """``arch`` when it is an NVIDIA arch, else a UsageError naming ``instead``, the function to use."""
    if isinstance(arch, NvidiaArch):
        return arch
    raise UsageError(f"{arch.name} is not an NVIDIA arch; use {instead}")

_CDNA: dict[str, Any] = dict(
    wave_size=64, simds_per_cu=4, max_waves_per_simd=8, vgprs_per_simd_lane=512, max_arch_vgprs=256,
    max_agprs=256, vgpr_granule=8, sgpr_waves=((80, 10), (88, 9), (100, 8)), sgpr_waves_else=7,
    max_sgprs=108, max_workgroups_per_cu=16,
)
# RDNA in WGP mode (gfx11 and gfx12.0 alike in what occupancy reads: LLVM's FeatureGFX10_3Insts, no
# FeatureCuMode, 64 KiB addressable LDS): 16 waves/EU (AMDGPUBaseInfo.cpp getMaxWavesPerEU), 4 SIMDs per WGP
# (getEUsPerCU), 32 barriers (getMaxWorkGroupsPerCU), LDS 64 KiB per workgroup and twice that per WGP
# (getLocalMemorySize), SGPRs never limit (getOccupancyWithNumSGPRs, GFX10+), 106 addressable + VCC.
_RDNA: dict[str, Any] = dict(
    simds_per_cu=4, max_waves_per_simd=16, max_arch_vgprs=256, max_agprs=0, sgpr_waves=None,
    sgpr_waves_else=16, max_sgprs=108, lds_per_cu=131072, lds_per_workgroup=65536, lds_granule=512,
    max_workgroups_per_cu=32,
)
_AMPERE_SHARED: dict[str, Any] = dict(regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit=256, reg_subpartitions=4,
                      shared_granule=128, shared_reserved_per_block=1024, wave_size=32)

ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        AmdArch("gfx90a", "AMD MI200 (CDNA2)", "gfx90a", lds_per_cu=65536, lds_per_workgroup=65536,
                lds_granule=512, compute_units=110, **_CDNA),  # one MI250X GCD
        AmdArch("gfx942", "AMD MI300 (CDNA3)", "gfx942", lds_per_cu=65536, lds_per_workgroup=65536,
                lds_granule=512, compute_units=304, **_CDNA),  # MI300X
        AmdArch("gfx950", "AMD MI350 (CDNA4)", "gfx950", lds_per_cu=163840, lds_per_workgroup=163840,
                lds_granule=1280, compute_units=256, **_CDNA),  # MI355X
        AmdArch("gfx1100", "AMD RX 7900 (RDNA3), wave32, WGP mode", "gfx1100", wave_size=32,
                vgprs_per_simd_lane=1536, vgpr_granule=24, compute_units=48, **_RDNA),  # 7900 XTX WGPs
        # Triton compiles RDNA kernels as wave32 only; wave64 is here for the occupancy calculator.
        AmdArch("gfx1100-wave64", "AMD RX 7900 (RDNA3), wave64, WGP mode", "gfx1100", wave_size=64,
                vgprs_per_simd_lane=768, vgpr_granule=12, triton_target=False, compute_units=48, **_RDNA),
        # RDNA4: gfx1201 is LLVM's FeatureISAVersion12 (GCNProcessors.td), which has Feature1_5xVGPRs
        # (AMDGPU.td) like gfx1100: 1536 VGPRs per lane in wave32, allocated in granules of 24
        # (AMDGPUBaseInfo.cpp getTotalNumVGPRs, getVGPRAllocGranule); the rest is _RDNA's. LDS granule: LLVM
        # encodes 128 dwords (getLdsDwGranularity), as on gfx1100 (whether the hardware allocates 1 KiB is
        # as unresolved there; docs/occupancy-rules.md). Checked against LLVM's `; Occupancy:` on real
        # compiles (tests/core/test_llvm_crosscheck.py).
        AmdArch("gfx1201", "AMD RX 9070 (RDNA4), wave32, WGP mode", "gfx1201", wave_size=32,
                vgprs_per_simd_lane=1536, vgpr_granule=24, compute_units=32, **_RDNA),  # RX 9070 XT: 64 CUs
        NvidiaArch("sm_80", "NVIDIA A100 (Ampere)", 80, max_warps_per_sm=64, max_blocks_per_sm=32,
                   shared_per_sm=167936, max_shared_per_block=166912,
                   shared_carveouts_kib=(0, 8, 16, 32, 64, 100, 132, 164), compute_units=108, **_AMPERE_SHARED),
        NvidiaArch("sm_86", "NVIDIA RTX 30 / A40 (Ampere GA10x)", 86, max_warps_per_sm=48, max_blocks_per_sm=16,
                   shared_per_sm=102400, max_shared_per_block=101376,
                   shared_carveouts_kib=(0, 8, 16, 32, 64, 100), compute_units=84, **_AMPERE_SHARED),  # A40
        NvidiaArch("sm_89", "NVIDIA L4 / L40 / RTX 40 (Ada)", 89, max_warps_per_sm=48, max_blocks_per_sm=24,
                   shared_per_sm=102400, max_shared_per_block=101376,
                   shared_carveouts_kib=(0, 8, 16, 32, 64, 100), compute_units=142, **_AMPERE_SHARED),  # L40
        NvidiaArch("sm_90", "NVIDIA H100 / H200 (Hopper)", 90, max_warps_per_sm=64, max_blocks_per_sm=32,
                   shared_per_sm=233472, max_shared_per_block=232448,
                   shared_carveouts_kib=(0, 8, 16, 32, 64, 100, 132, 164, 196, 228), compute_units=132,
                   **_AMPERE_SHARED),  # H100 SXM / H200
        NvidiaArch("sm_100", "NVIDIA B200 (Blackwell)", 100, max_warps_per_sm=64, max_blocks_per_sm=32,
                   shared_per_sm=233472, max_shared_per_block=232448,
                   shared_carveouts_kib=(0, 8, 16, 32, 64, 100, 132, 164, 196, 228), compute_units=148,
                   **_AMPERE_SHARED),  # B200
        # consumer Blackwell, compute capability 12.0. cuda_occupancy.h (nvidia-cuda-runtime-cu12 12.9.79):
        # 24 blocks/SM (cudaOccMaxBlocksPerMultiprocessor, case 12), shared-memory carveouts 0..100 KiB
        # (cudaOccAlignUpShmemSizeVoltaPlus, case 12), 128 B shared granule, 256-register warp granule, 4
        # sub-partitions, the driver's reserved shared memory per block added (CC >= 8); CUDA Programming
        # Guide, compute capability 12.0: 48 warps (1536 threads) per SM, 64 K registers per SM, 255 per
        # thread, 100 KiB of shared memory per SM, 99 KiB per block with the opt-in, 1 KiB reserved per block.
        NvidiaArch("sm_120", "NVIDIA RTX 50 / RTX PRO Blackwell (GB20x)", 120, max_warps_per_sm=48,
                   max_blocks_per_sm=24, shared_per_sm=102400, max_shared_per_block=101376,
                   shared_carveouts_kib=(0, 8, 16, 32, 64, 100), compute_units=170, **_AMPERE_SHARED),  # RTX 5090
    )
}

DEFAULT_ARCHS: tuple[str, ...] = ("gfx90a", "gfx942", "sm_80")

_ALIASES = {"sm80": "sm_80", "sm86": "sm_86", "sm89": "sm_89", "sm90": "sm_90", "sm90a": "sm_90",
            "sm_90a": "sm_90", "sm100": "sm_100", "sm_100a": "sm_100", "sm120": "sm_120", "sm_120a": "sm_120",
            "mi200": "gfx90a", "mi250": "gfx90a",
            "mi300": "gfx942", "mi300x": "gfx942", "mi350": "gfx950", "mi355x": "gfx950",
            "a100": "sm_80", "h100": "sm_90", "h200": "sm_90", "b200": "sm_100"}


def get_arch(name: str) -> Arch:
    """Look an arch up by name (or a common alias); the error lists the valid names."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return ARCHS[key]
    except KeyError:
        raise UnknownNameError("arch", name, list(ARCHS)) from None


def arch_for_device(backend: str, name: str | int) -> Arch:
    """The arch of a live device: ('cuda', capability major*10+minor) or ('hip', 'gfx942:sramecc+:xnack-')."""
    if backend == "cuda":
        cap = int(name)
        exact = [a for a in ARCHS.values() if isinstance(a, NvidiaArch) and a.capability == cap]
        if exact:
            return exact[0]
        raise UnknownNameError("device arch", f"sm_{cap}", [a for a in ARCHS if a.startswith("sm_")])
    return get_arch(str(name).split(":")[0])
