"""Where the registers go: tensors live across each loop (from TTGIR, counted from their layouts) beside
the compiler's allocation (and a model's estimate, where the kernel's source has one: ``Estimate``), and the
spill sites by source line.

The join takes one compiled kernel's raw outputs (the compile worker's dict: ``ttgir``, ``amdgcn`` or the
cubin, ptxas and cuobjdump texts), whatever produced them: a bundled variant, a captured launch or a
kernel directory. Rules for what a loop's sum counts:
- loop-carried tensors (``acc``, ``l_i``, ``m_i``), at the registers their layout gives each lane;
- live-ins: tensors defined before the loop and used in it (the ``q`` tile), at their layout's
  registers; integer ones (offsets such as ``offs_n``) have the role ``index`` and are summed apart: the
  compiler may recompute an index vector from the lane id instead of holding it, so they are what the
  remainder may hold, not part of the sum;
- not counted: splats and constants (role ``uniform``: one value, whatever the layout: LLVM keeps the
  scalar, not one copy per element), i1 tensors (role ``mask``: the backends keep booleans as predicates
  or lane masks, AMD one SGPR bit per lane, not as 32-bit registers; their element count is shown) and
  tensors in shared or tensor memory (role ``memory``, whether carried by the loop or not: no registers;
  counted in bytes, a buffer once: the views into it that a software pipeline carries from stage to
  stage take none of their own).
What the allocation holds beyond the sum is the loop's temporaries (in any kernel, intermediate values and
dot operands; an estimate may name them in its kernels' words), addresses and the software pipeline's
buffers: the remainder.
"""

from __future__ import annotations

import math
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...backends import backend_of, backend_of_usage
from ...backends.cuda import nvdisasm  # noqa: F401  (explain's SASS reader, where callers found it)
from ...core.archs import Arch
from ...core.errors import VgprscopeError
from ...core.parse.layouts import (
    Layout,
    LayoutError,
    Opaque,
    describe,
    elements_per_lane,
    parse_layout,
    registers_per_lane,
)
from ...core.parse.lineinfo import SpillInstruction
from ...core.parse.loops import LoopMix
from ...core.parse.setmaxnreg import with_given_registers
from ...core.parse.ttgir import IrLoop, IrValue, TtgirModule, WarpPartition, parse_ttgir, warp_partitions
from ...core.records import Diagnostic, ResourceUsage
from ...report.vendor_words import words_of


class ExplainError(VgprscopeError):
    """Raw compiler outputs that cannot be explained (no TTGIR: compiled before explain existed)."""


UNIFORM_OPS = ("arith.constant", "tt.splat")
INDEX_OPS = ("tt.make_range",)
# operations that allocate shared / tensor memory (anything else of a memory type is a view into a buffer)
ALLOC_OPS = ("ttg.local_alloc", "ttng.tmem_alloc")
# What the allocation holds beyond the loop's sum, in any kernel's words
REMAINDER = "temporaries (values computed inside the loop, dot operands), addresses, pipeline buffers"


@dataclass(frozen=True)
class Estimate:
    """A model's estimate of a kernel's loop state, to hold the compiler's count against, supplied by the
    kernel's source (``explain_tasks(..., estimate=...)``; the bundled attention variants: seed 001's, from
    ``vgprscope.flashattn.live``).

    ``values``: registers per lane by the model's own rows, then ``total`` and ``threads``; ``tensors``: which
    row a live tensor's name falls under; ``summary``: the line shown under the kernel; ``remainder``: what
    the allocation holds beyond the loop's sum, in the words of the source's kernels."""

    name: str  # the column's header ("seed 001")
    values: tuple[tuple[str, int], ...]
    tensors: tuple[tuple[str, str], ...] = ()
    summary: str = ""
    remainder: str = REMAINDER

    def row(self, tensor: str) -> str | None:
        """The row of the model a tensor's name falls under, if any."""
        return dict(self.tensors).get(tensor)

    def value(self, row: str) -> int | None:
        return dict(self.values).get(row)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "registers_per_lane": dict(self.values)}


@dataclass(frozen=True)
class LiveTensor:
    name: str
    ssa: str
    role: str  # carried | live-in | index | uniform | mask | memory
    shape: tuple[int, ...]
    dtype: str
    layout: str  # a short name (``mfma 32x32 T``, ``swizzled_shared``): never a cut attribute
    elements: int | None  # distinct elements per lane (None: a layout not counted here)
    registers: int | None  # 32-bit registers per lane
    counted: bool  # part of the loop's sum
    layout_full: str = ""  # the layout attribute in full, aliases resolved
    memory: str = "registers"  # or "shared" / "tensor memory"
    buffer: str | None = None  # memory only: "allocation", or "view" into one ("carried view": loop-carried)
    bytes: int | None = None  # memory only, allocations only: the buffer's size

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ssa": self.ssa, "role": self.role, "shape": list(self.shape),
                "dtype": self.dtype, "layout": self.layout, "layout_full": self.layout_full,
                "elements_per_lane": self.elements, "registers_per_lane": self.registers, "counted": self.counted,
                "memory": self.memory, "buffer": self.buffer, "bytes": self.bytes}


@dataclass(frozen=True)
class LoopLiveState:
    index: int
    depth: int
    location: tuple[str, ...]
    tensors: tuple[LiveTensor, ...]

    def _sum(self, roles: tuple[str, ...]) -> int:
        return sum(t.registers or 0 for t in self.tensors if t.counted and t.role in roles)

    @property
    def carried(self) -> int:
        return self._sum(("carried",))

    @property
    def live_in(self) -> int:
        return self._sum(("live-in",))

    @property
    def index_vectors(self) -> int:
        """Integer offset / index vectors live across the loop, at their layout's registers: shown apart,
        since the compiler may recompute them (from the lane id) rather than hold them whole."""
        return self._sum(("index",))

    @property
    def total(self) -> int:
        return self.carried + self.live_in

    @property
    def memory_bytes(self) -> int:
        """Bytes of the shared / tensor memory buffers the loop uses (each buffer once, not its views)."""
        return sum(t.bytes or 0 for t in self.tensors if t.role == "memory")

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "depth": self.depth, "location": list(self.location),
                "carried_registers": self.carried, "live_in_registers": self.live_in,
                "index_registers": self.index_vectors, "total_registers": self.total,
                "memory_bytes": self.memory_bytes, "tensors": [t.as_dict() for t in self.tensors]}


@dataclass(frozen=True)
class SpillSite:
    location: tuple[str, ...]  # file:line, then the lines it was inlined at
    stores: int
    reloads: int
    in_loop: bool

    def as_dict(self) -> dict[str, Any]:
        return {"location": list(self.location), "stores": self.stores, "reloads": self.reloads,
                "in_loop": self.in_loop}


@dataclass(frozen=True)
class Allocation:
    """What the compiler allocated per lane: AMD arch VGPRs + AGPRs (unified file), NVIDIA registers."""

    registers: int  # the unified total (AMD) or the register count (NVIDIA)
    arch_vgpr: int | None
    agpr: int | None
    spill_stores: int
    spill_reloads: int

    def as_dict(self) -> dict[str, Any]:
        return {"registers": self.registers, "arch_vgpr": self.arch_vgpr, "agpr": self.agpr,
                "spill_stores": self.spill_stores, "spill_reloads": self.spill_reloads}


@dataclass(frozen=True)
class KernelExplanation:
    label: str  # variant / kernel, or a captured kernel's name
    kernel: str
    arch: str
    config: str
    num_warps: int
    lanes: int
    allocation: Allocation | None
    loops: tuple[LoopLiveState, ...] = ()
    spills: tuple[SpillSite, ...] = ()
    estimate: Estimate | None = None  # a model's estimate, where the kernel's source has one
    error: str | None = None
    notes: tuple[str, ...] = field(default=())
    shared_bytes: int | None = None  # the kernel's shared memory / LDS in all, as the compiler reports it
    mixes: tuple[LoopMix, ...] = ()  # each machine-code loop's one-trip instruction mix (parse.loops)
    file: str | None = field(default=None, compare=False)  # the kernel's source file, where its source has one
    # a warp-specialized kernel's partitions (Gluon's gl.warp_specialize), with the registers each is given
    partitions: tuple[WarpPartition, ...] = ()
    # what the compiler said (its row's diagnostics) and which compilers said it
    diagnostics: tuple[Diagnostic, ...] = ()
    ptxas_version: str = ""
    llvm_version: str = ""
    # how it compiled where not from its file (the capture's snapshot): the header says it once for all
    compiled_from: str = field(default="", compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kernel": self.kernel, "arch": self.arch, "config": self.config,
                "num_warps": self.num_warps, "lanes_per_warp": self.lanes,
                "allocation": self.allocation.as_dict() if self.allocation else None,
                "loops": [lp.as_dict() for lp in self.loops], "spill_sites": [s.as_dict() for s in self.spills],
                "estimate": self.estimate.as_dict() if self.estimate else None, "error": self.error, "notes": list(self.notes),
                "shared_bytes": self.shared_bytes, "loop_mix": [m.as_dict() for m in self.mixes],
                "partitions": [{"name": p.name, "num_warps": p.num_warps, "requested_registers": p.requested_registers,
                                "given_registers": p.given_registers}
                               for p in self.partitions],
                "diagnostics": [d.as_dict() for d in self.diagnostics], "ptxas_version": self.ptxas_version,
                "llvm_version": self.llvm_version}


def _role(value: IrValue) -> str:
    if value.type.memory != "registers":
        return "memory"  # a buffer (or a view into one) takes no registers, carried by the loop or not
    if value.op == "scf.for":
        return "carried"
    if value.op in UNIFORM_OPS:
        return "uniform"
    if value.type.dtype == "i1":
        return "mask"  # predicates / lane masks (AMD: an SGPR bit per lane), not VGPRs
    if value.op in INDEX_OPS or re.fullmatch(r"i\d+", value.type.dtype):
        return "index"  # integer tensors live across a loop are offsets and masks, not data
    return "live-in"


def element_bits(dtype: str) -> int | None:
    """Bits of one element of a TTGIR dtype (``f16`` 16, ``bf16`` 16, ``f8E4M3FN`` 8, ``i1`` 1)."""
    m = re.match(r"^(?:bf|f|i|u|si|ui)(\d+)", dtype)
    return int(m.group(1)) if m else None


def short_layout(layout: Layout) -> str:
    """A layout's short name for a table: vgprscope's own description, or for an encoding it does not
    describe (shared memory's, a newer kind) the encoding's name alone (``swizzled_shared``), never the
    attribute cut at a width (``layout_full`` has it all)."""
    if isinstance(layout, Opaque):
        m = re.match(r"#?(?:\w+\.)?(\w+)", layout.text)
        return m.group(1) if m else layout.text
    return describe(layout)


def full_layout(encoding: str, aliases: dict[str, str]) -> str:
    """The layout attribute with every alias in it (``#mma``, a parent's ``#blocked``) written out."""
    text = encoding.strip()
    for _ in range(8):  # aliases nest a few levels at most (a slice of a dot operand of an mma)
        new = re.sub(r"#[\w.]+", lambda m: aliases.get(m.group(0), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


def live_tensor(value: IrValue, module: TtgirModule) -> LiveTensor:
    role = _role(value)
    t = value.type
    layout = parse_layout(t.encoding, module.aliases)
    full = full_layout(t.encoding, module.aliases)
    buffer = size = None
    if role == "memory":
        elements, registers = 0, 0
        if value.op in ALLOC_OPS:
            buffer = "allocation"
            bits = element_bits(t.dtype)
            size = None if bits is None else math.prod(t.shape) * bits // 8
        else:
            buffer = "carried view" if value.op == "scf.for" else "view"
    else:
        try:
            elements = elements_per_lane(layout, t.shape)
            registers = registers_per_lane(layout, t.shape, t.dtype)
        except LayoutError:
            elements = registers = None
    if role == "mask":
        registers = None  # not 32-bit registers (see the module docstring); the element count stays
    return LiveTensor(name=value.name or value.ssa, ssa=value.ssa, role=role, shape=t.shape, dtype=t.dtype,
                      layout=short_layout(layout), elements=elements, registers=registers,
                      counted=role in ("carried", "live-in", "index") and registers is not None,
                      layout_full=full, memory=t.memory, buffer=buffer, bytes=size)


def loop_state(loop: IrLoop, module: TtgirModule) -> LoopLiveState:
    tensors = tuple(live_tensor(v, module) for v in loop.carried + loop.live_in)
    return LoopLiveState(index=loop.index, depth=loop.depth, location=loop.location, tensors=tensors)


def spill_sites(instructions: Sequence[SpillInstruction]) -> tuple[SpillSite, ...]:
    """Spill instructions grouped by (source chain, in/out of a loop), most instructions first."""
    stores: Counter = Counter()
    reloads: Counter = Counter()
    for s in instructions:
        (stores if s.kind == "store" else reloads)[(s.location, s.in_loop)] += 1
    keys = list(dict.fromkeys(list(stores) + list(reloads)))
    sites = [SpillSite(location=loc, stores=stores[(loc, inl)], reloads=reloads[(loc, inl)], in_loop=inl)
             for loc, inl in keys]
    return tuple(sorted(sites, key=lambda s: (-(s.stores + s.reloads), not s.in_loop, s.location)))


def allocation_of(usage: ResourceUsage, spills: Sequence[SpillInstruction]) -> Allocation:
    """The compiler's allocation; spill counts as the backend counts them (AMD: the parser's own count;
    NVIDIA: the instructions found)."""
    f = backend_of_usage(usage).figures(usage)
    arch_vgpr, agpr = f.register_parts or (None, None)
    if f.spill_stores is not None and f.spill_loads is not None:
        stores, reloads = f.spill_stores, f.spill_loads
    else:
        stores = sum(1 for s in spills if s.kind == "store")
        reloads = len(spills) - stores
    return Allocation(registers=f.registers, arch_vgpr=arch_vgpr, agpr=agpr, spill_stores=stores,
                      spill_reloads=reloads)


def explain_raw(arch: Arch, raw: dict[str, Any], label: str, config: str = "",
                estimate: Estimate | None = None, sass: str | None = None) -> KernelExplanation:
    """One kernel's raw compiler outputs -> its explanation. ``sass``: the cubin's ``nvdisasm -gi`` text
    (NVIDIA; disassembled from ``raw['cubin_b64']`` when not given)."""
    from ...compile.results import parse_output

    kernel = raw.get("name") or raw.get("kernel", "?")
    base = dict(label=label, kernel=kernel, arch=arch.name, config=config, num_warps=0, lanes=arch.wave_size,
                allocation=None, estimate=estimate)
    if "error" in raw:
        return KernelExplanation(**base, error=raw["error"])
    if "ttgir" not in raw:
        raise ExplainError(f"the compiler outputs of {label} on {arch.name} hold no TTGIR (an older cache "
                           "entry); recompile them")
    module = parse_ttgir(raw["ttgir"])
    usage = parse_output(arch, raw)
    notes = []
    backend = backend_of(arch)
    if sass is None:
        sass = backend.disassemble(raw)  # once, for the spill sites and the loops
    found = backend.spill_instructions(raw, sass)
    if found is None:
        notes.append(f"no {words_of(arch.vendor).spill_artifact} in the compiler outputs: spill sites not read")
    instructions = found or []
    alloc = allocation_of(usage, instructions)
    shared = backend.figures(usage).memory_bytes
    return KernelExplanation(
        **base | {"num_warps": module.num_warps, "lanes": module.threads_per_warp, "allocation": alloc},
        loops=tuple(loop_state(lp, module) for lp in module.loops), spills=spill_sites(instructions),
        notes=tuple(notes), shared_bytes=shared, mixes=backend.loop_mixes(raw, sass) or (),
        partitions=with_given_registers(warp_partitions(raw["ttgir"]), sass or "", getattr(usage, "regs", None)))


def explain_tasks(tasks: Sequence[Any], jobs: int | None = None, on_progress=None,
                  engine: Any = None, estimate: Callable[[Any], Estimate | None] | None = None
                  ) -> list[KernelExplanation]:
    """Compile (or read from the cache) each task and explain its kernel, in order.

    Works on tasks of any source (bundled variants, a capture, a kernel directory): the raw outputs are
    this run's, or read back from the compile cache under the engine's own key. ``estimate``: a task ->
    its source's model estimate, or None (the bundled variants': ``vgprscope.flashattn.live.estimate``)."""
    from ...compile.engine import Engine

    engine = engine or Engine(jobs, on_progress=on_progress)
    records = engine.compile(list(tasks))
    out: list[KernelExplanation] = []
    for task, rec in zip(tasks, records):
        config = task.config.short() if hasattr(task.config, "short") else ""
        est = estimate(task) if estimate is not None else None
        several = task.variant is not None and len(task.variant.kernels) > 1
        label = f"{task.label}/{task.row.kernel}" if several else task.label
        raw = engine.raw_outputs(task)
        if raw is None or "ttgir" not in raw:
            reason = (rec.status if not rec.ok else None) or task.reason or "no compiler outputs"
            out.append(KernelExplanation(label=label, kernel=task.row.kernel, arch=task.arch.name, config=config,
                                         num_warps=0, lanes=task.arch.wave_size, allocation=None,
                                         estimate=est, error=reason))
            continue
        try:
            explained = explain_raw(task.arch, raw | {"kernel": task.row.kernel}, label, config=config, estimate=est)
            identity = getattr(task.row, "identity", None)
            out.append(replace(explained, file=identity.file if identity is not None else None))
        except (ValueError, KeyError, subprocess.CalledProcessError, OSError) as exc:  # a row, not the end
            out.append(KernelExplanation(label=label, kernel=task.row.kernel, arch=task.arch.name, config=config,
                                         num_warps=0, lanes=task.arch.wave_size, allocation=None,
                                         estimate=est, error=f"cannot explain: {type(exc).__name__}: {exc}"))
    # one explanation per task: each says what the compiler said of its kernel, as the row does
    return [replace(e, diagnostics=rec.diagnostics, ptxas_version=rec.ptxas_version, llvm_version=rec.llvm_version,
                    compiled_from=str(dict(rec.extras).get("note") or "")) for e, rec in zip(out, records)]

