"""The NVIDIA backend (Triton's ``cuda``): ptxas and the cubin in, blocks per SM out.

Targets: ``Target("cuda", capability, 32)``. Launch options only it reads: the NVIDIA rows of
``core/options.py``; ``maxnreg`` (ptxas's register cap) is the frontier's knob, any value a budget, so the
frontier bisects for the smallest spill-free one.
The compile worker returns ``ptxas -v``'s log, ``cuobjdump --dump-resource-usage`` of the cubin, the cubin
itself (base64, for the spill sites: its SASS through ``nvdisasm -gi``) and Triton's dynamic shared memory;
``parse.nvidia`` reads the usage, ``parse.lineinfo.sass_spills`` the spill sites; the occupancy rule is
``occupancy.nvidia_occupancy`` (``cuda_occupancy.h``).
"""

from __future__ import annotations

import base64
import subprocess
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.archs import ARCHS, Arch, NvidiaArch, Vendor, arch_for_device
from ..core.errors import UsageError
from ..core.job import Target
from ..core.occupancy.common import DEFAULT_THREADS, LadderStep
from ..core.occupancy.ladder import check_warps, nvidia_ladder, nvidia_memory_ladder
from ..core.occupancy.nvidia import nvidia_occupancy
from ..core.options import launch_option_names, occupancy_knob
from ..core.records import NvidiaUsage, Occupancy
from .base import Calculation, Facts, KnobLevel, Metric, UsageFigures, require_outputs, threads_reason
from .loops import LOOP_METRICS, loop_values, read_loops

if TYPE_CHECKING:  # the parsers are imported when an output is parsed: a warm run reads the cache only
    from ..core.parse.lineinfo import SpillInstruction
    from ..core.parse.loops import LoopMix

# what the compile worker returns for it, that the parser reads (runtime.compile._collect); the cubin
# (cubin_b64) is for the spill sites only
RAW_OUTPUTS = ("ptxas_log", "cuobjdump", "shared")


def nvdisasm(cubin: bytes) -> str:
    """``nvdisasm -gi -c`` of a cubin: SASS with the line info and inlining chains (the Triton wheel's
    nvdisasm, as Triton's knobs locate it)."""
    from triton import knobs

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([knobs.nvidia.nvdisasm.path, "-gi", "-c", f.name], check=True, capture_output=True,
                              text=True).stdout


class CudaBackend:
    name = "cuda"
    vendor = Vendor.NVIDIA
    facts = Facts(
        triton_dir="nvidia",
        options=launch_option_names(Vendor.NVIDIA),
        cache_options=(*launch_option_names(Vendor.NVIDIA), "ptx_options", "ptx_version", "launch_pdl",
                       "enable_reflect_ftz"),
        cache_artifact="cubin",
        stored_read_needs_release=True,  # the spill bytes: the ptxas that built the cubin
        device_library=("NVIDIA's libdevice", r'symbol = "(__nv_\w+)"'),  # libdevice.10.bc
        # PyTorch Inductor on this backend: config.triton.spill_threshold's default (torch/_inductor/config.py)
        # and whether PyTorch's build for it sets torch.version.hip
        inductor_spill_threshold=16,
        pytorch_hip=False,
        knob=occupancy_knob(Vendor.NVIDIA),
        bisects=True,
        calculator_options=("--regs", "--shared", "--threads"),
        driver_command=("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"),
        hardware_verified=True,
        usage_bounds=(("regs", "max_regs_per_thread"),),
        # spills live in local memory, within the stack frame
        scratch_fields=("stack_bytes", "local_bytes", "spill_store_bytes", "spill_load_bytes"),
        descriptor_letters=(("aligned", "D", False),),
    )
    metrics = (
        Metric("regs", "registers/thread", "NVIDIA: registers per thread", step="regs",
               arch_max="max_regs_per_thread", label="registers", role="registers"),
        Metric("stack_bytes", "bytes/thread", "NVIDIA: stack frame per thread"),
        Metric("spill_store_bytes", "bytes", "NVIDIA: spill stores"),
        Metric("spill_load_bytes", "bytes", "NVIDIA: spill loads"),
        Metric("shared_bytes", "bytes", "NVIDIA: shared memory, static and Triton's dynamic", step="shared",
               arch_max="max_shared_per_block", field="shared_dynamic", label="shared memory", role="memory"),
        *LOOP_METRICS,
    )

    # ---- the arch table and targets

    def target(self, arch: NvidiaArch) -> Target:
        return Target(self.name, arch.capability, arch.wave_size)

    def arch_for_target(self, capability: Any) -> Arch | None:
        """The table's arch Triton's ``GPUTarget("cuda", capability, 32)`` is."""
        return next((a for a in ARCHS.values() if isinstance(a, NvidiaArch) and a.capability == capability), None)

    def device_arch(self, props: Any) -> Arch:
        return arch_for_device(self.name, props.major * 10 + props.minor)

    # ---- compiler outputs

    def parse(self, raw: Mapping[str, Any], loops: bool | None = True) -> NvidiaUsage:
        from ..core.parse.nvidia import nvidia_usage

        if "stored" in raw:  # a Triton cache entry read as stored: the cubin's counts, spills where known
            from ..core.parse.nvidia import stored_nvidia_usage

            require_outputs(raw, ("cuobjdump", "shared"))
            usage = stored_nvidia_usage(raw["cuobjdump"], raw["shared"], raw.get("name"), raw["stored"],
                                        raw.get("ptxas_log"), raw.get("ptxas_version"))
        else:
            require_outputs(raw, RAW_OUTPUTS)
            usage = nvidia_usage(raw["ptxas_log"], raw["cuobjdump"], raw["shared"], kernel=raw.get("name"),
                                 ptxas_version=raw.get("ptxas_version"))
        return read_loops(self, raw, usage, loops)

    def spill_instructions(self, raw: Mapping[str, Any], sass: str | None = None) -> list[SpillInstruction] | None:
        """The SASS's local-memory instructions (``sass``: the cubin's ``nvdisasm -gi`` text, disassembled
        from ``raw['cubin_b64']`` when not given); None when there is no cubin to read."""
        from ..core.parse.lineinfo import sass_spills

        if sass is None:
            sass = self.disassemble(raw)
        if sass is None:
            return None
        return sass_spills(sass, raw.get("name")) if sass else []

    def disassemble(self, raw: Mapping[str, Any]) -> str | None:
        if raw.get("sass"):  # the compile worker's nvdisasm, run beside the compile
            return str(raw["sass"])
        return nvdisasm(base64.b64decode(raw["cubin_b64"])) if raw.get("cubin_b64") else None

    def loop_mixes(self, raw: Mapping[str, Any], sass: str | None = None) -> tuple[LoopMix, ...] | None:
        from ..core.parse.loops import sass_loops

        if sass is None:
            sass = self.disassemble(raw)
        return sass_loops(sass, raw.get("name")) if sass is not None else None

    # ---- launch, occupancy, frontier

    def launch_limit_reason(self, arch: NvidiaArch, usage: NvidiaUsage, num_warps: int | None = None) -> str | None:
        reason = threads_reason(arch, num_warps, arch.max_threads_per_block, "warps")
        if reason:
            return reason
        if usage.shared_bytes > arch.max_shared_per_block:
            return (f"needs {usage.shared_bytes} B of shared memory; {arch.name} allows "
                    f"{arch.max_shared_per_block} B per block")
        return None

    def occupancy(self, usage: NvidiaUsage, arch: NvidiaArch, num_warps: int, *,
                  waves_per_eu: int | None = None) -> Occupancy:
        return nvidia_occupancy(arch, usage.regs, usage.shared_bytes, check_warps(num_warps, arch.wave_size))

    def ladder(self, arch: NvidiaArch, size: int | None = None, *, memory: bool = False) -> list[LadderStep]:
        return nvidia_memory_ladder(arch, size) if memory else nvidia_ladder(arch, size)

    def levels(self, arch: NvidiaArch, num_warps: int) -> list[KnobLevel]:
        # maxnreg at the top register count of every blocks-per-SM step of the launch's block size
        steps = nvidia_ladder(arch, num_warps * arch.wave_size)
        return sorted((KnobLevel(s.value, s.hi, s.hi) for s in steps if s.value > 0), key=lambda lv: lv.target)

    def calculate(self, arch: NvidiaArch, values: Mapping[str, int | None], ladder: bool) -> Calculation:
        regs, shared, threads = (values.get(o) for o in self.facts.calculator_options)
        if regs is None and not ladder:
            raise UsageError(f"--regs is required for {arch.name} (or --ladder)")
        if regs is None:
            return Calculation(None, {}, None, threads)
        size = DEFAULT_THREADS if threads is None else threads
        o = nvidia_occupancy(arch, regs, shared or 0, size)
        fields = {
            "inputs": {"regs": regs, "shared": shared or 0, "threads": size},
            "blocks_per_sm": o.value, "warps_per_sm": o.warps_per_sm, "max_warps_per_sm": arch.max_warps_per_sm,
        }
        return Calculation(o, fields, regs, threads)

    # ---- a usage's numbers

    def metric_values(self, u: NvidiaUsage) -> dict[str, int]:
        """The gate's numbers; unknown spill figures (a stored cubin no ptxas here rebuilds) are left out."""
        values = {"regs": u.regs, "stack_bytes": u.stack_bytes, "spill_store_bytes": u.spill_store_bytes,
                  "spill_load_bytes": u.spill_load_bytes, "shared_bytes": u.shared_bytes} | loop_values(u)
        return {k: v for k, v in values.items() if v is not None}

    def figures(self, u: NvidiaUsage) -> UsageFigures:
        return UsageFigures(
            registers=u.regs, allocation=u.regs, register_parts=None, scalar_registers=None,
            scratch_bytes=u.stack_bytes, memory_bytes=u.shared_bytes, compiler_occupancy=None,
            spilled=(("spill_store_bytes", u.spill_store_bytes), ("spill_load_bytes", u.spill_load_bytes)),
            # ptxas counts spill bytes, not instructions, and does not say where its spills are: the SASS's
            # local-memory instructions are the spill sites (spill_instructions)
            spill_stores=None, spill_loads=None, spill_insts_in_loop=None,
        )


CUDA = CudaBackend()
