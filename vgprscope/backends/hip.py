"""The AMD backend (Triton's ``hip``): AMDGCN in, waves per SIMD out.

Targets: ``Target("hip", gfx, wave size)`` (RDNA compiles as wave32). Launch options only it reads:
``waves_per_eu`` (LLVM's ``amdgpu-waves-per-eu``: the frontier's knob), ``matrix_instr_nonkdim``, ``kpack``.
The compile worker returns the AMDGCN text (``amdgcn``) and Triton's dynamic LDS (``shared``);
``parse.amdgcn`` reads the usage, ``parse.lineinfo.amdgcn_spills`` the spill sites; the occupancy rule is
``occupancy.amd_occupancy`` (the unified VGPR+AGPR file, SGPRs on GFX9, LDS and whole workgroups).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.archs import ARCHS, AmdArch, Arch, Vendor, arch_for_device
from ..core.job import Target
from ..core.errors import UsageError
from ..core.occupancy.amd import amd_occupancy, total_vgprs
from ..core.occupancy.common import AMD_UNIT, LadderStep
from ..core.occupancy.ladder import amd_ladder, check_warps
from ..core.records import AmdUsage, Occupancy
from .base import Calculation, KnobLevel, Metric, require_outputs, count, last_output_line, threads_reason
from .loops import LOOP_METRICS, loop_values, with_loop

if TYPE_CHECKING:  # the parsers are imported when an output is parsed: a warm run reads the cache only
    from ..core.parse.lineinfo import SpillInstruction
    from ..core.parse.loops import LoopMix

KIB = 1024


class HipBackend:
    name = "hip"
    vendor = Vendor.AMD
    label = "AMD"
    triton_dir = "amd"
    usage_type = AmdUsage
    options = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
    cache_options = ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint")
    cache_artifact = "amdgcn"
    stored_read_needs_release = False  # the AMDGCN text holds every figure
    device_library = ("AMD's device libraries", r'symbol = "(__oc[km]l_\w+)"')  # ocml.bc, ockl.bc
    # PyTorch Inductor on this backend: config.triton.spill_threshold's default (torch/_inductor/config.py)
    # and whether PyTorch's build for it sets torch.version.hip
    inductor_spill_threshold = 32
    pytorch_hip = True
    # what the compile worker returns for it, that the parser reads (runtime.compile._collect)
    raw_outputs = ("amdgcn", "shared")
    spill_artifact = "AMDGCN"
    unit = AMD_UNIT
    unit_short = "w/SIMD"  # in a compact occupancy cell
    group_word = "waves"
    lane_word = "lane"  # what per-lane counts are per (a loop's bytes per trip)
    register_word = "VGPRs"
    # waves_per_eu N asks LLVM for N waves/SIMD: a level is a setting, nothing lies between two
    knob = "waves_per_eu"
    bisects = False
    metrics = (
        Metric("vgpr_total", "VGPRs", "AMD: unified VGPR+AGPR count per wave (what occupancy sees)",
               step="vgpr", arch_max="max_vgprs_total", label="VGPRs"),
        Metric("arch_vgpr", "VGPRs", "AMD: architectural VGPRs (part of vgpr_total)", gated=False),
        Metric("agpr", "AGPRs", "AMD: accumulation registers (part of vgpr_total)", gated=False),
        Metric("sgpr", "SGPRs", "AMD: scalar registers, VCC / flat-scratch / XNACK included", step="sgpr",
               arch_max="max_sgprs", label="SGPRs"),
        Metric("vgpr_spill", "VGPRs", "AMD: VGPRs spilled to scratch"),
        Metric("sgpr_spill", "SGPRs", "AMD: SGPRs spilled to VGPR lanes"),
        Metric("scratch_bytes", "bytes/lane", "AMD: scratch memory per lane"),
        Metric("lds_bytes", "bytes", "AMD: LDS, static and Triton's dynamic", step="lds",
               arch_max="lds_per_workgroup", field="lds_dynamic", label="LDS"),
        Metric("spill_insts", "instructions", "AMD: spill stores and reloads"),
        Metric("spill_insts_in_loop", "instructions", "AMD: spill stores and reloads inside a loop"),
        *LOOP_METRICS,
    )
    registers_metric = "vgpr_total"
    memory_field = "lds_bytes"
    hardware_verified = False  # the bench has not yet been run on AMD hardware by a person
    calculator_options = ("--vgprs", "--agprs", "--sgprs", "--lds", "--workgroup")
    ladder_words = "VGPRs+AGPRs per wave"
    register_header = "VGPRs"
    memory_header = "LDS B"
    register_split = "arch VGPR+AGPR"

    # ---- the arch table and targets

    def target(self, arch: AmdArch) -> Target:
        return Target(self.name, arch.gfx, arch.wave_size)

    def arch_for_target(self, gfx: Any) -> Arch | None:
        """The table's arch Triton's ``GPUTarget("hip", gfx, ...)`` is (the first row of that processor)."""
        return next((a for a in ARCHS.values() if isinstance(a, AmdArch) and a.gfx == gfx), None)

    def device_arch(self, props: Any) -> Arch:
        return arch_for_device(self.name, getattr(props, "gcnArchName", "unknown"))

    def driver_version(self) -> str:
        return last_output_line(["rocm-smi", "--showdriverversion"])

    def arch_row(self, a: AmdArch) -> dict[str, Any]:
        return {
            "arch": a.name, "vendor": a.vendor.value, "description": a.description,
            "wave": a.wave_size, "max occupancy": f"{a.max_waves_per_simd} waves/SIMD x {a.simds_per_cu} SIMDs",
            "registers": f"{a.vgprs_per_simd_lane} VGPR/lane/SIMD"
                         + (" (shared with AGPRs)" if a.unified_agprs else ""),
            "per wave/thread": f"{a.max_arch_vgprs} VGPR" + (f" + {a.max_agprs} AGPR" if a.max_agprs else ""),
            "alloc granule": f"{a.vgpr_granule} VGPR",
            "LDS/shared per CU/SM": f"{a.lds_per_cu // KIB} KiB",
            "per workgroup/block": f"{a.lds_per_workgroup // KIB} KiB",
            "LDS/shared granule": f"{a.lds_granule} B",
            "max workgroups/blocks": a.max_workgroups_per_cu,
            "compiles": "yes" if a.triton_target else "no (calculator only)",
        }

    def arch_cells(self, a: AmdArch) -> dict[str, str]:
        return {"occ": f"{a.max_waves_per_simd}/SIMD x{a.simds_per_cu}",
                "regs": f"{a.vgprs_per_simd_lane}" + ("+AGPR" if a.unified_agprs else ""),
                "per_wave": f"{a.max_arch_vgprs}v" + (f"+{a.max_agprs}a" if a.max_agprs else ""),
                "granule": str(a.vgpr_granule), "lds": f"{a.lds_per_cu // KIB}/{a.lds_per_workgroup // KIB}",
                "compiles": "yes" if a.triton_target else "no [1]"}

    def group_memory_limit(self, arch: AmdArch) -> int:
        return arch.lds_per_workgroup

    # ---- compiler outputs

    def parse(self, raw: Mapping[str, Any]) -> AmdUsage:
        from ..core.parse.amdgcn import parse_amdgcn

        require_outputs(raw, self.raw_outputs)
        from ..core.parse.loops import amdgcn_gate_loops

        usage = parse_amdgcn(raw["amdgcn"], raw["shared"], kernel=raw.get("name"))
        return with_loop(usage, amdgcn_gate_loops(raw["amdgcn"], kernel=raw.get("name")))

    def spill_instructions(self, raw: Mapping[str, Any], sass: str | None = None) -> list[SpillInstruction]:
        from ..core.parse.lineinfo import amdgcn_spills

        return amdgcn_spills(raw["amdgcn"], kernel=raw.get("name"))

    def disassemble(self, raw: Mapping[str, Any]) -> str | None:
        return None  # the AMDGCN the compiler prints is the text

    def loop_mixes(self, raw: Mapping[str, Any], sass: str | None = None) -> tuple[LoopMix, ...] | None:
        from ..core.parse.loops import amdgcn_loops

        return amdgcn_loops(raw["amdgcn"], kernel=raw.get("name")) if raw.get("amdgcn") else None

    # ---- launch, occupancy, frontier

    def launch_limit_reason(self, arch: AmdArch, usage: AmdUsage, num_warps: int | None = None) -> str | None:
        reason = threads_reason(arch, num_warps, arch.max_threads_per_workgroup, self.group_word)
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

    def ladder(self, arch: AmdArch, size: int | None = None) -> list[LadderStep]:
        return amd_ladder(arch, size)

    def levels(self, arch: AmdArch, num_warps: int) -> list[KnobLevel]:
        # registers alone: the waves_per_eu budget is per SIMD, whatever the workgroup size
        return sorted((KnobLevel(s.value, s.hi, s.value) for s in amd_ladder(arch)), key=lambda lv: lv.target)

    def calculate(self, arch: AmdArch, values: Mapping[str, int | None], ladder: bool) -> Calculation:
        vgprs, agprs, sgprs, lds, workgroup = (values.get(o) for o in self.calculator_options)
        if vgprs is None and not ladder:
            raise UsageError(f"--vgprs is required for {arch.name} (or --ladder)")
        if vgprs is None:
            return Calculation(None, {}, None, workgroup, "")
        # --vgprs is always the arch VGPRs, so 300 on a CDNA arch (256 + 256 AGPRs) is refused, not read as
        # a unified total; the total follows from rule 1
        o = amd_occupancy(arch, 0, sgprs, lds or 0, workgroup, agpr=agprs or 0, arch_vgpr=vgprs)
        total = total_vgprs(arch, vgprs, agprs or 0)
        fields = {
            "inputs": {"vgprs": vgprs, "agprs": agprs, "vgpr_total": total, "sgprs": sgprs, "lds": lds or 0,
                       "workgroup": workgroup or arch.wave_size},
            "waves_per_simd": o.value, "max_waves_per_simd": arch.max_waves_per_simd, "waves_per_cu": o.waves_per_cu,
        }
        line = (f"{o.value} / {arch.max_waves_per_simd} waves/SIMD ({o.percent:g} %), {o.waves_per_cu} waves/CU")
        return Calculation(o, fields, total, workgroup, line)

    # ---- a usage's numbers and words

    def metric_values(self, u: AmdUsage) -> dict[str, int]:
        """The gate's numbers, smaller is better for each."""
        return {
            "vgpr_total": u.vgpr_total, "arch_vgpr": u.arch_vgpr, "agpr": u.agpr, "sgpr": u.sgpr,
            "vgpr_spill": u.vgpr_spill, "sgpr_spill": u.sgpr_spill, "scratch_bytes": u.scratch_bytes,
            "lds_bytes": u.lds_bytes, "spill_insts": u.spill_stores + u.spill_loads,
            "spill_insts_in_loop": u.spill_insts_in_loop,
        } | loop_values(u)

    def registers(self, u: AmdUsage) -> int:
        return u.vgpr_total

    def allocation(self, u: AmdUsage) -> int:
        """What the hardware allocates: padded for waves_per_eu where LLVM padded it."""
        return u.vgpr_alloc if u.vgpr_alloc is not None else u.vgpr_total

    def register_parts(self, u: AmdUsage) -> tuple[int, int]:
        return u.arch_vgpr, u.agpr

    def scalar_registers(self, u: AmdUsage) -> int:
        return u.sgpr

    def scratch_bytes(self, u: AmdUsage) -> int:
        return u.scratch_bytes

    def memory_bytes(self, u: AmdUsage) -> int:
        return u.lds_bytes

    def compiler_occupancy(self, u: AmdUsage) -> int | None:
        return u.llvm_occupancy

    def spill_insts(self, u: AmdUsage) -> int:
        return u.spill_stores + u.spill_loads

    def spill_insts_in_loop(self, u: AmdUsage) -> int:
        return u.spill_insts_in_loop

    def spill_counts(self, u: AmdUsage, instructions: Sequence[SpillInstruction]) -> tuple[int, int]:
        """Spill stores and reloads: the parser's own count (LLVM marks each)."""
        return u.spill_stores, u.spill_loads

    def frontier_figures(self, u: AmdUsage) -> dict[str, int]:
        return {"used": u.vgpr_total, "vgpr_spill": u.vgpr_spill, "sgpr_spill": u.sgpr_spill,
                "spill_insts": u.spill_stores + u.spill_loads, "spill_insts_in_loop": u.spill_insts_in_loop,
                "scratch_bytes": u.scratch_bytes}

    def registers_text(self, u: AmdUsage) -> str:
        """``264 (256v+8a)``: the unified total occupancy sees, and its arch VGPR and AGPR parts."""
        return f"{u.vgpr_total} ({u.arch_vgpr}v+{u.agpr}a)" if u.agpr else str(u.vgpr_total)

    def spills_text(self, u: AmdUsage) -> str:
        """``0``, or ``1 (0 in loop)``: registers spilled (VGPRs + SGPRs) and spill instructions in a loop."""
        return "0" if not u.spills else f"{u.spills} ({u.spill_insts_in_loop} in loop)"

    def spills_full_text(self, u: AmdUsage) -> str:
        if not (u.vgpr_spill or u.sgpr_spill):
            return "0"
        loop = f", {u.spill_insts_in_loop} in loop" if u.spill_insts_in_loop else ""
        return f"v{u.vgpr_spill} s{u.sgpr_spill} ({u.spill_stores}st/{u.spill_loads}ld{loop})"

    def spills_level_text(self, u: AmdUsage) -> str:
        return "0" if not u.spills else (f"{u.vgpr_spill}" if not u.sgpr_spill else f"{u.vgpr_spill}+{u.sgpr_spill}s")

    def spills_next_text(self, u: AmdUsage) -> str:
        return f"{u.spills} ({u.spill_insts_in_loop} loop)"

    def spill_price(self, u: AmdUsage) -> str:
        """'233 spills (163 spill instructions, 124 in the loop)'."""
        if not u.spills:
            return "no spills"
        sgpr = f" ({u.vgpr_spill} VGPR + {u.sgpr_spill} SGPR)" if u.sgpr_spill else ""
        insts = u.spill_stores + u.spill_loads
        return (f"{count(u.spills, 'spill')}{sgpr}, {count(insts, 'spill instruction')}, "
                f"{u.spill_insts_in_loop} in the loop")


HIP = HipBackend()
