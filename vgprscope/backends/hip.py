"""The AMD backend (Triton's ``hip``): AMDGCN in, waves per SIMD out.

Targets: ``Target("hip", gfx, wave size)`` (RDNA compiles as wave32). Launch options only it reads: the AMD
rows of ``core/options.py`` (``waves_per_eu``, LLVM's ``amdgpu-waves-per-eu``, is the frontier's knob).
The compile worker returns the AMDGCN text (``amdgcn``) and Triton's dynamic LDS (``shared``);
``parse.amdgcn`` reads the usage, ``parse.lineinfo.amdgcn_spills`` the spill sites; the occupancy rule is
``occupancy.amd_occupancy`` (the unified VGPR+AGPR file, SGPRs on GFX9, LDS and whole workgroups).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.archs import ARCHS, AmdArch, Arch, Vendor, arch_for_device
from ..core.errors import UsageError
from ..core.job import Target
from ..core.occupancy.amd import amd_occupancy, total_vgprs
from ..core.occupancy.common import LadderStep
from ..core.occupancy.ladder import amd_ladder, amd_memory_ladder, check_warps
from ..core.options import launch_option_names, occupancy_knob
from ..core.records import AmdUsage, Occupancy
from .base import Calculation, Facts, KnobLevel, Metric, UsageFigures, require_outputs, threads_reason
from .loops import LOOP_METRICS, loop_values, read_loops

if TYPE_CHECKING:  # the parsers are imported when an output is parsed: a warm run reads the cache only
    from ..core.parse.lineinfo import SpillInstruction
    from ..core.parse.loops import LoopMix

# what the compile worker returns for it, that the parser reads (runtime.compile._collect)
RAW_OUTPUTS = ("amdgcn", "shared")


class HipBackend:
    name = "hip"
    vendor = Vendor.AMD
    facts = Facts(
        triton_dir="amd",
        options=launch_option_names(Vendor.AMD),
        cache_options=(*launch_option_names(Vendor.AMD), "schedule_hint"),
        cache_artifact="amdgcn",
        stored_read_needs_release=False,  # the AMDGCN text holds every figure
        device_library=("AMD's device libraries", r'symbol = "(__oc[km]l_\w+)"'),  # ocml.bc, ockl.bc
        # PyTorch Inductor on this backend: config.triton.spill_threshold's default (torch/_inductor/config.py)
        # and whether PyTorch's build for it sets torch.version.hip
        inductor_spill_threshold=32,
        pytorch_hip=True,
        # waves_per_eu N asks LLVM for N waves/SIMD: a level is a setting, nothing lies between two
        knob=occupancy_knob(Vendor.AMD),
        bisects=False,
        calculator_options=("--vgprs", "--agprs", "--sgprs", "--lds", "--workgroup"),
        driver_command=("rocm-smi", "--showdriverversion"),
        hardware_verified=False,  # the bench has not yet been run on AMD hardware by a person
        usage_bounds=(("arch_vgpr", "max_arch_vgprs"), ("agpr", "max_agprs"), ("vgpr_total", "max_vgprs_total"),
                      ("vgpr_alloc", "max_vgprs_total"), ("sgpr", "max_sgprs"),
                      ("llvm_occupancy", "max_waves_per_simd"),
                      ("max_flat_workgroup_size", "max_threads_per_workgroup")),
        # spills and reloads are scratch instructions: the scratch, the spilled registers, the instructions LLVM marks
        scratch_fields=("scratch_bytes", "vgpr_spill", "sgpr_spill", "spill_stores", "spill_loads"),
        descriptor_letters=(("aligned", "D", False), ("small", "S", True)),
    )
    metrics = (
        Metric("vgpr_total", "VGPRs", "AMD: unified VGPR+AGPR count per wave (what occupancy sees)",
               step="vgpr", arch_max="max_vgprs_total", label="VGPRs", role="registers"),
        Metric("arch_vgpr", "VGPRs", "AMD: architectural VGPRs (part of vgpr_total)", gated=False),
        Metric("agpr", "AGPRs", "AMD: accumulation registers (part of vgpr_total)", gated=False),
        Metric("sgpr", "SGPRs", "AMD: scalar registers, VCC / flat-scratch / XNACK included", step="sgpr",
               arch_max="max_sgprs", label="SGPRs"),
        Metric("vgpr_spill", "VGPRs", "AMD: VGPRs spilled to scratch"),
        Metric("sgpr_spill", "SGPRs", "AMD: SGPRs spilled to VGPR lanes"),
        Metric("scratch_bytes", "bytes/lane", "AMD: scratch memory per lane"),
        Metric("lds_bytes", "bytes", "AMD: LDS, static and Triton's dynamic", step="lds",
               arch_max="lds_per_workgroup", field="lds_dynamic", label="LDS", role="memory"),
        Metric("spill_insts", "instructions", "AMD: spill stores and reloads"),
        Metric("spill_insts_in_loop", "instructions", "AMD: spill stores and reloads inside a loop"),
        *LOOP_METRICS,
    )

    # ---- the arch table and targets

    def target(self, arch: AmdArch) -> Target:
        return Target(self.name, arch.gfx, arch.wave_size)

    def arch_for_target(self, gfx: Any) -> Arch | None:
        """The table's arch Triton's ``GPUTarget("hip", gfx, ...)`` is (the first row of that processor)."""
        return next((a for a in ARCHS.values() if isinstance(a, AmdArch) and a.gfx == gfx), None)

    def device_arch(self, props: Any) -> Arch:
        return arch_for_device(self.name, getattr(props, "gcnArchName", "unknown"))

    # ---- compiler outputs

    def parse(self, raw: Mapping[str, Any], loops: bool | None = True) -> AmdUsage:
        from ..core.parse.amdgcn import parse_amdgcn

        require_outputs(raw, RAW_OUTPUTS)
        return read_loops(self, raw, parse_amdgcn(raw["amdgcn"], raw["shared"], kernel=raw.get("name")), loops)

    def spill_instructions(self, raw: Mapping[str, Any], sass: str | None = None) -> list[SpillInstruction]:
        from ..core.parse.lineinfo import amdgcn_spills

        return amdgcn_spills(raw["amdgcn"], kernel=raw.get("name"))

    def disassemble(self, raw: Mapping[str, Any]) -> str | None:
        return None  # the AMDGCN the compiler prints is the text

    def loop_mixes(self, raw: Mapping[str, Any], sass: str | None = None) -> tuple[LoopMix, ...] | None:
        from ..core.parse.loops import amdgcn_gate_loops

        return amdgcn_gate_loops(raw["amdgcn"], kernel=raw.get("name")) if raw.get("amdgcn") else None

    # ---- launch, occupancy, frontier

    def launch_limit_reason(self, arch: AmdArch, usage: AmdUsage, num_warps: int | None = None) -> str | None:
        reason = threads_reason(arch, num_warps, arch.max_threads_per_workgroup, "waves")
        if reason:
            return reason
        if usage.lds_bytes > arch.lds_per_workgroup:
            return f"needs {usage.lds_bytes} B of LDS; {arch.name} has {arch.lds_per_workgroup} B per workgroup"
        return None

    def occupancy(self, usage: AmdUsage, arch: AmdArch, num_warps: int, *,
                  waves_per_eu: int | None = None) -> Occupancy:
        # `.vgpr_count` already is the unified total (rule 1); arch_vgpr / agpr are its parts.
        return amd_occupancy(
            arch, usage.vgpr_total, usage.sgpr, usage.lds_bytes, check_warps(num_warps, arch.wave_size),
            agpr=usage.agpr, llvm_occupancy=usage.llvm_occupancy, lds_static=usage.lds_static,
            llvm_max_workgroup=usage.max_flat_workgroup_size, waves_per_eu=waves_per_eu,
        )

    def ladder(self, arch: AmdArch, size: int | None = None, *, memory: bool = False) -> list[LadderStep]:
        return amd_memory_ladder(arch, size) if memory else amd_ladder(arch, size)

    def levels(self, arch: AmdArch, num_warps: int) -> list[KnobLevel]:
        # registers alone: the waves_per_eu budget is per SIMD, whatever the workgroup size
        return sorted((KnobLevel(s.value, s.hi, s.value) for s in amd_ladder(arch)), key=lambda lv: lv.target)

    def calculate(self, arch: AmdArch, values: Mapping[str, int | None], ladder: bool) -> Calculation:
        vgprs, agprs, sgprs, lds, workgroup = (values.get(o) for o in self.facts.calculator_options)
        if vgprs is None and not ladder:
            raise UsageError(f"--vgprs is required for {arch.name} (or --ladder)")
        if vgprs is None:
            return Calculation(None, {}, None, workgroup)
        # --vgprs is always the arch VGPRs, so 300 on a CDNA arch (256 + 256 AGPRs) is refused, not read as
        # a unified total; the total follows from rule 1
        o = amd_occupancy(arch, 0, sgprs, lds or 0, workgroup, agpr=agprs or 0, arch_vgpr=vgprs)
        total = total_vgprs(arch, vgprs, agprs or 0)
        fields = {
            "inputs": {"vgprs": vgprs, "agprs": agprs, "vgpr_total": total, "sgprs": sgprs, "lds": lds or 0,
                       "workgroup": workgroup or arch.wave_size},
            "waves_per_simd": o.value, "max_waves_per_simd": arch.max_waves_per_simd, "waves_per_cu": o.waves_per_cu,
        }
        return Calculation(o, fields, total, workgroup)

    # ---- a usage's numbers

    def metric_values(self, u: AmdUsage) -> dict[str, int]:
        """The gate's numbers, smaller is better for each."""
        return {
            "vgpr_total": u.vgpr_total, "arch_vgpr": u.arch_vgpr, "agpr": u.agpr, "sgpr": u.sgpr,
            "vgpr_spill": u.vgpr_spill, "sgpr_spill": u.sgpr_spill, "scratch_bytes": u.scratch_bytes,
            "lds_bytes": u.lds_bytes, "spill_insts": u.spill_stores + u.spill_loads,
            "spill_insts_in_loop": u.spill_insts_in_loop,
        } | loop_values(u)

    def figures(self, u: AmdUsage) -> UsageFigures:
        return UsageFigures(
            registers=u.vgpr_total,  # the unified total (rule 1); arch_vgpr / agpr are its parts
            # what the hardware allocates: padded for waves_per_eu where LLVM padded it
            allocation=u.vgpr_alloc if u.vgpr_alloc is not None else u.vgpr_total,
            register_parts=(u.arch_vgpr, u.agpr), scalar_registers=u.sgpr, scratch_bytes=u.scratch_bytes,
            memory_bytes=u.lds_bytes, compiler_occupancy=u.llvm_occupancy,
            spilled=(("vgpr_spill", u.vgpr_spill), ("sgpr_spill", u.sgpr_spill)),
            spill_stores=u.spill_stores, spill_loads=u.spill_loads,  # LLVM marks each
            spill_insts_in_loop=u.spill_insts_in_loop,
        )


HIP = HipBackend()
