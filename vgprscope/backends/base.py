"""What every backend answers (``Backend``), and the small records it answers with.

A backend is one vendor's compiler side as vgprscope sees it, in numbers and rules: how Triton targets its
archs, which raw outputs the compile worker returns for it and how they become a ResourceUsage, what makes
a kernel unlaunchable, its occupancy rule and register ladder, the knob the frontier turns, the numbers the
gate watches, and a usage's figures (``UsageFigures``). Its static data is one record (``Facts``). The
words the views print for a vendor are not here: ``vgprscope.report.vendor_words`` holds them, one row per
vendor. Nothing here knows a vendor; ``hip.py`` and ``cuda.py`` do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.archs import Arch, Vendor
    from ..core.job import Target
    from ..core.occupancy.common import LadderStep
    from ..core.parse.lineinfo import SpillInstruction
    from ..core.parse.loops import LoopMix
    from ..core.records import Occupancy, ResourceUsage

# the loop fields' own bounds (the rest are counts: ``limits.COUNT_LIMIT``)
LOOP_BOUNDS = {"loop_matrix_share": 100}


@dataclass(frozen=True)
class Metric:
    """One number the gate watches. ``gated`` False: shown when it changes, never a failure by default
    (``arch_vgpr`` and ``agpr`` are the parts of ``vgpr_total``, which is what occupancy sees).
    ``covers``: the vendor metrics a neutral metric stands for (a rule on it applies to each of them).

    ``step``: for a count whose growth costs time only through occupancy (registers, LDS / shared memory),
    the occupancy limit it drives (``vgpr``, ``lds``, ``regs``, ...: the keys of ``Occupancy.limits``);
    by default its growth fails only when it crosses an occupancy step or ``arch_max``, the ``Arch``
    attribute holding its maximum. ``field``: the usage field the headroom search varies (default: the
    metric's own name). "" for a count whose every growth costs time (spills, scratch, stack).
    ``label``: how a view names the count when it says what dropped the occupancy (``LDS``).
    ``role``: "registers" for the count the neutral ``registers`` metric stands for (and occupancy sees),
    "memory" for the workgroup's / block's LDS or shared memory; "" for the others."""

    name: str
    unit: str
    what: str
    higher_is_better: bool = False
    gated: bool = True
    covers: tuple[str, ...] = ()
    step: str = ""
    arch_max: str = ""
    field: str = ""
    label: str = ""
    role: str = ""


@dataclass(frozen=True)
class Facts:
    """What a backend is, as data: how Triton, PyTorch and vgprscope's own commands treat it."""

    triton_dir: str  # the backend's folder in the Triton wheel (triton/backends/<dir>)
    # launch options vgprscope sets that only this backend reads; a Triton cache entry's metadata also
    # keeps ``cache_options`` (they survive a recompile for the same backend only)
    options: tuple[str, ...]
    cache_options: tuple[str, ...]
    cache_artifact: str  # the file of a Triton cache entry the resources are read from ("amdgcn", "cubin")
    # whether reading that file as stored runs the writing release's own tools (a ptxas re-run for the spills)
    stored_read_needs_release: bool
    # its device library, as a TTIR calls it (``tt.extern_elementwise``'s symbol): its name and the symbol's
    # pattern; linked by this backend only
    device_library: tuple[str, str]
    inductor_spill_threshold: int  # PyTorch Inductor's default spill_threshold on this backend
    pytorch_hip: bool  # whether PyTorch's build for this backend sets torch.version.hip
    # the frontier's knob, and whether any setting between two levels is a register budget (then the
    # frontier bisects for the smallest spill-free one)
    knob: str
    bisects: bool
    calculator_options: tuple[str, ...]  # ``vgprscope occupancy`` options of this vendor, first required
    driver_command: tuple[str, ...]  # the command whose last output line is the GPU driver's version
    hardware_verified: bool  # False: bench results on its GPUs are marked unverified
    # the most each count of its usage can be, as the arch table's attribute that holds it (its registers): a
    # usage read back from the cache past one is damaged (``compile.results.valid_result``); a count not named
    # is bounded by ``limits.COUNT_LIMIT``
    usage_bounds: tuple[tuple[str, str], ...] = ()
    # the usage fields of its scratch / local memory: a kernel with none of them (and no spill) moves no spilled
    # byte in any loop (``loops.read_loops``)
    scratch_fields: tuple[str, ...] = ()
    # the letters its JIT's specialisation descriptor writes for an argument's facts, in order: (fact, letter,
    # pointers only): "D" 16-byte aligned / divisible by 16, AMD's "S" a buffer-op range (``descriptor``)
    descriptor_letters: tuple[tuple[str, str, bool], ...] = ()


@dataclass(frozen=True)
class CompilerWarnings:
    """The compiler's own warnings a run asks for beyond its defaults (``core.options.COMPILER_WARNINGS``' rows,
    each on the vendor whose compiler has it): the asked rows' names and values. They add diagnostics; the code
    the compiler writes is the same."""

    asked: tuple[tuple[str, Any], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.asked)


@dataclass(frozen=True)
class UsageFigures:
    """A usage's numbers in the terms every view uses, whatever its vendor calls them."""

    registers: int  # the register count occupancy sees (AMD: VGPR+AGPR total per wave; NVIDIA: per thread)
    allocation: int  # what the hardware allocates (AMD: padded where LLVM padded it for waves_per_eu)
    register_parts: tuple[int, int] | None  # the registers' two parts (AMD: arch VGPRs, AGPRs); None: one file
    scalar_registers: int | None  # None: the vendor has none apart
    scratch_bytes: int  # per lane (AMD scratch) / per thread (NVIDIA stack frame)
    memory_bytes: int  # the workgroup's / block's LDS or shared memory, static and dynamic
    compiler_occupancy: int | None  # the compiler's own occupancy line, where it prints one
    # the two spill figures, by their metric names, in order (AMD: VGPRs and SGPRs spilled; NVIDIA: spill store
    # and load bytes); a value None where unknown
    spilled: tuple[tuple[str, int | None], ...]
    # spill instructions the compiler marks (AMD); None where it counts bytes, not instructions (NVIDIA)
    spill_stores: int | None
    spill_loads: int | None
    spill_insts_in_loop: int | None  # of those, inside a loop

    @property
    def spill_pair(self) -> tuple[int, int] | None:
        """The two spill figures; None where either is unknown."""
        a, b = (v for _, v in self.spilled)
        return None if a is None or b is None else (a, b)

    @property
    def spill_insts(self) -> int | None:
        return None if self.spill_stores is None or self.spill_loads is None else self.spill_stores + self.spill_loads


@dataclass(frozen=True)
class KnobLevel:
    """One occupancy level of an arch for the frontier: the occupancy the registers alone give at
    ``budget`` registers, and the knob's setting that asks the compiler for it."""

    target: int
    budget: int
    setting: int


@dataclass(frozen=True)
class Calculation:
    """The occupancy calculator's answer for counts typed by hand (``vgprscope occupancy``)."""

    occupancy: Occupancy | None  # None: no register count given (a ladder only)
    fields: dict[str, Any]  # the JSON fields: inputs and the vendor's own occupancy figures
    current: int | None  # the register count the ladder marks "<- here"
    size: int | None  # the workgroup / block size the ladder is for (None: the backend's default)


class Backend(Protocol):
    """One vendor's backend: numbers and rules only. Attributes are data; methods take the arch, the compiler
    outputs or the usage they are about. Its words are a row of ``vgprscope.report.vendor_words``."""

    name: str  # Triton's backend name ("hip", "cuda"): ``Target.backend``, a cache entry's target
    vendor: Vendor  # its row of the arch table's vendors, and of the words table
    facts: Facts
    metrics: tuple[Metric, ...]  # the gate's numbers of its usage, in the order they are shown

    # ---- the arch table and targets
    def target(self, arch: Arch) -> Target: ...
    def arch_for_target(self, arch: Any) -> Arch | None: ...
    def device_arch(self, props: Any) -> Arch: ...

    # ---- compiler outputs
    def parse(self, raw: Mapping[str, Any], loops: bool | None = True) -> ResourceUsage:
        """The usage in a compile's raw outputs; ``loops`` False: the loop figures left unread where they cost
        a disassembly (``loops.read_loops``)."""
        ...
    def spill_instructions(self, raw: Mapping[str, Any], sass: str | None = None) -> list[SpillInstruction] | None: ...

    def disassemble(self, raw: Mapping[str, Any]) -> str | None:
        """The machine code as text where the compiler outputs hold only the binary (NVIDIA's cubin -> SASS),
        else None (AMD's AMDGCN is already text)."""
        ...

    def loop_mixes(self, raw: Mapping[str, Any], sass: str | None = None) -> tuple[LoopMix, ...] | None:
        """Each loop's one-trip instruction mix from the kernel's assembly; None when there is none to read, or
        it does not say where its loops are (an AMDGCN listing printed without LLVM's loop comments)."""
        ...

    # ---- launch, occupancy, frontier
    def launch_limit_reason(self, arch: Arch, usage: ResourceUsage, num_warps: int | None = None) -> str | None: ...
    def occupancy(self, usage: ResourceUsage, arch: Arch, num_warps: int, *,
                  waves_per_eu: int | None = None) -> Occupancy: ...
    def ladder(self, arch: Arch, size: int | None = None, *, memory: bool = False) -> list[LadderStep]:
        """The register staircase: registers (``lo``..``hi``) -> occupancy, the registers alone, for ``size``
        threads; ``memory``: the LDS / shared memory staircase, bytes per workgroup / block -> occupancy."""
        ...
    def levels(self, arch: Arch, num_warps: int) -> list[KnobLevel]: ...
    def calculate(self, arch: Arch, values: Mapping[str, int | None], ladder: bool) -> Calculation: ...

    # ---- a usage's numbers
    def metric_values(self, usage: ResourceUsage) -> dict[str, int]: ...
    def figures(self, usage: ResourceUsage) -> UsageFigures: ...


def descriptor(backend: Backend, fact: Mapping[str, Any]) -> str:
    """An argument's specialisation descriptor as ``backend``'s JIT writes it from the launch's facts
    (``{"type": "*fp16", "aligned": True, ...}``): ``"D"``, ``"DS"``, ``""``."""
    pointer = str(fact.get("type", "")).startswith("*")
    return "".join(letter for name, letter, pointers in backend.facts.descriptor_letters
                   if fact.get(name) and (pointer or not pointers))


def threads_reason(arch: Arch, num_warps: int | None, limit: int, group_word: str) -> str | None:
    """Why ``num_warps`` warps / waves of the arch's size make a workgroup the arch refuses (None: it takes it)."""
    if num_warps is None or num_warps * arch.wave_size <= limit:
        return None
    return (f"num_warps {num_warps} is {num_warps * arch.wave_size} threads ({num_warps} {group_word} of "
            f"{arch.wave_size}); {arch.name} allows {limit} per workgroup")


def last_output_line(cmd: Sequence[str]) -> str:
    """The last line a tool prints (a driver version), or "unknown" when it cannot run."""
    import subprocess

    try:
        out = subprocess.run(list(cmd), capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[-1].strip() if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def usage_bounds(backend: Backend, arch: Arch) -> dict[str, int]:
    """The most each bounded count of a usage of ``backend`` can be on ``arch``: its registers (the arch
    table's, ``facts.usage_bounds``) and the loop share's 100 %."""
    return {field: getattr(arch, attr) for field, attr in backend.facts.usage_bounds} | LOOP_BOUNDS


def warning_options(backend: Backend, warnings: CompilerWarnings, options: Mapping[str, Any]) -> dict[str, Any]:
    """The launch options that ask ``backend``'s compiler for ``warnings`` (the rows of its vendor in
    ``core.options.COMPILER_WARNINGS``), each joined to the job's own value of that option (its own ptxas
    options or LLVM attributes are kept)."""
    from ..core.options import compiler_warnings

    asked = dict(warnings.asked)
    out: dict[str, Any] = {}
    for row in compiler_warnings(backend.vendor):
        own = options.get(row.joins) or ""
        if not isinstance(own, str):  # LLVM attributes given as (name, value) pairs
            own = row.separator.join(f"{k}={v}" if v else str(k) for k, v in own)
        value = row.ask(asked.get(row.name), own)
        if value is not None:
            out[row.joins] = value
    return out


def require_outputs(raw: Mapping[str, Any], keys: Sequence[str]) -> None:
    """A worker's answer without an output the parser reads is a one-line error, not a KeyError."""
    missing = [k for k in keys if k not in raw]
    if missing:
        raise ValueError(f"the compiler outputs hold no {', '.join(missing)}")
