"""The data model: frozen records every layer passes around (DESIGN.md, "Data model")."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

SCHEMA_VERSION = 1

DTYPES = ("fp16", "bf16")

# The reference problem shape (B, H, Nq, Nk) whose contiguous strides specialise a compile, and on which
# the traffic model is evaluated. Seqlens are never specialised by the kernels (do_not_specialize).
DEFAULT_SHAPE = (4, 32, 4096, 4096)


@dataclass(frozen=True)
class KernelConfig:
    """The whole specialisation of one compile: constexprs, launch knobs and backend options.

    Backend options that do not apply to an arch are None; two configs that compile differently never
    compare equal nor share a ``key()``.
    """

    block_m: int
    block_n: int
    head_dim: int
    dtype: str = "fp16"
    causal: bool = False
    num_warps: int = 4
    num_stages: int = 1
    waves_per_eu: int | None = None  # AMD
    matrix_instr_nonkdim: int | None = None  # AMD
    kpack: int | None = None  # AMD
    maxnreg: int | None = None  # NVIDIA
    extra: tuple[tuple[str, Any], ...] = ()  # variant-specific knobs, sorted by name
    shape: tuple[int, int, int, int] = DEFAULT_SHAPE

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["extra"] = dict(self.extra)
        d["shape"] = list(self.shape)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KernelConfig:
        d = dict(d)
        d["extra"] = tuple(sorted((d.get("extra") or {}).items()))
        d["shape"] = tuple(d.get("shape") or DEFAULT_SHAPE)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def key(self) -> str:
        """A stable hash of the full specialisation (part of every cache and baseline key)."""
        blob = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.extra).get(name, default)

    def with_extra(self, **kw: Any) -> KernelConfig:
        merged = dict(self.extra) | kw
        return replace(self, extra=tuple(sorted(merged.items())))

    def short(self) -> str:
        """A compact human label: 128x64 d128 fp16 w4 s1 [causal] [wpe2] [k=v ...]."""
        parts = [f"{self.block_m}x{self.block_n}", f"d{self.head_dim}", self.dtype, f"w{self.num_warps}",
                 f"s{self.num_stages}"]
        if self.causal:
            parts.append("causal")
        if self.waves_per_eu:
            parts.append(f"wpe{self.waves_per_eu}")
        if self.matrix_instr_nonkdim:
            parts.append(f"nonk{self.matrix_instr_nonkdim}")
        if self.kpack and self.kpack != 1:
            parts.append(f"kpack{self.kpack}")
        if self.maxnreg:
            parts.append(f"maxnreg{self.maxnreg}")
        parts += [f"{k}={v}" for k, v in self.extra]
        return " ".join(parts)


@dataclass(frozen=True)
class AmdUsage:
    """Resources of one AMD kernel, as the compiler reported them (AMDGCN metadata and comments)."""

    arch_vgpr: int  # `; NumVgprs:`
    agpr: int  # `.agpr_count`
    vgpr_total: int  # `.vgpr_count`: the unified file, alignTo(arch_vgpr, 4) + agpr when agpr > 0
    sgpr: int  # `.sgpr_count`, VCC / flat-scratch / XNACK included
    vgpr_spill: int
    sgpr_spill: int
    scratch_bytes: int  # `.private_segment_fixed_size`, per lane
    lds_static: int  # `.group_segment_fixed_size`
    lds_dynamic: int  # Triton's `metadata.shared`
    spill_stores: int  # instructions LLVM marks as spills
    spill_loads: int  # instructions LLVM marks as reloads
    spill_insts_in_loop: int  # of those, inside a loop
    llvm_occupancy: int | None  # LLVM's own `; Occupancy:` line, kept as a cross-check
    max_flat_workgroup_size: int | None
    code_bytes: int | None
    # `.amdhsa_next_free_vgpr` of the kernel descriptor: what the hardware allocates. It equals vgpr_total
    # unless LLVM padded it for `waves_per_eu` (it then limits occupancy; see occupancy.waves_with_vgprs_padded).
    vgpr_alloc: int | None = None

    vendor = "amd"

    @property
    def lds_bytes(self) -> int:
        return self.lds_static + self.lds_dynamic

    @property
    def spills(self) -> int:
        return self.vgpr_spill + self.sgpr_spill

    def metrics(self) -> dict[str, int]:
        """The gate's numbers, smaller is better for each."""
        return {
            "vgpr_total": self.vgpr_total, "arch_vgpr": self.arch_vgpr, "agpr": self.agpr, "sgpr": self.sgpr,
            "vgpr_spill": self.vgpr_spill, "sgpr_spill": self.sgpr_spill, "scratch_bytes": self.scratch_bytes,
            "lds_bytes": self.lds_bytes, "spill_insts": self.spill_stores + self.spill_loads,
        }


@dataclass(frozen=True)
class NvidiaUsage:
    """Resources of one NVIDIA kernel, from ptxas -v and cuobjdump --dump-resource-usage."""

    regs: int
    stack_bytes: int  # stack frame per thread
    spill_store_bytes: int
    spill_load_bytes: int
    shared_static: int
    shared_dynamic: int  # Triton's `metadata.shared`
    local_bytes: int  # cuobjdump LOCAL
    ptxas_version: str | None = None

    vendor = "nvidia"

    @property
    def shared_bytes(self) -> int:
        return self.shared_static + self.shared_dynamic

    @property
    def spills(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes

    def metrics(self) -> dict[str, int]:
        return {
            "regs": self.regs, "stack_bytes": self.stack_bytes, "spill_store_bytes": self.spill_store_bytes,
            "spill_load_bytes": self.spill_load_bytes, "shared_bytes": self.shared_bytes,
        }


ResourceUsage = AmdUsage | NvidiaUsage


def usage_from_dict(d: dict[str, Any] | None) -> ResourceUsage | None:
    if d is None:
        return None
    d = dict(d)
    cls = {"amd": AmdUsage, "nvidia": NvidiaUsage}[d.pop("vendor")]
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in known})


def usage_to_dict(u: ResourceUsage | None) -> dict[str, Any] | None:
    if u is None:
        return None
    return {"vendor": u.vendor, **asdict(u)}


@dataclass(frozen=True)
class Occupancy:
    """Theoretical occupancy of one kernel on one arch, with what binds and how far the next step is.

    AMD: ``value`` is waves per SIMD; NVIDIA: blocks per SM (``warps_per_sm`` beside it).
    """

    unit: str  # "waves/SIMD" or "blocks/SM"
    value: int
    max_value: int  # the arch's ceiling in the same unit for this launch
    percent: float  # of the arch's maximum waves (AMD) or warps (NVIDIA)
    limiters: tuple[str, ...]  # the binding limit(s): vgpr, sgpr, lds, slots / regs, shared, warps, blocks
    limits: tuple[tuple[str, int], ...]  # every limit's own value, in the same unit
    next_step: str  # "shed 8 VGPRs (-> 248) for 3 waves/SIMD", or why there is none
    headroom: str  # "12 VGPRs of headroom before 1 wave/SIMD"
    warps_per_sm: int | None = None
    waves_per_cu: int | None = None
    note: str = ""  # e.g. why LLVM's `; Occupancy:` differs

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["limiters"] = list(self.limiters)
        d["limits"] = dict(self.limits)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Occupancy | None:
        if d is None:
            return None
        d = dict(d)
        d["limiters"] = tuple(d["limiters"])
        d["limits"] = tuple(d["limits"].items())
        return cls(**d)


@dataclass(frozen=True)
class Record:
    """One row: variant x kernel x arch x config. A failed compile is a row with its error in ``status``."""

    variant: str
    kernel: str
    arch: str
    config: KernelConfig
    status: str  # "ok" or a one-line reason
    usage: ResourceUsage | None = None
    occupancy: Occupancy | None = None
    compile_seconds: float = 0.0
    triton_version: str = ""
    source_hash: str = ""
    cached: bool = False
    extras: tuple[tuple[str, Any], ...] = field(default=())  # e.g. traffic-model columns

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> str:
        return f"{self.variant}/{self.kernel}/{self.arch}/{self.config.key()}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant, "kernel": self.kernel, "arch": self.arch, "config": self.config.as_dict(),
            "config_key": self.config.key(), "status": self.status, "usage": usage_to_dict(self.usage),
            "occupancy": self.occupancy.as_dict() if self.occupancy else None,
            "compile_seconds": round(self.compile_seconds, 3), "triton_version": self.triton_version,
            "source_hash": self.source_hash, "cached": self.cached, "extras": dict(self.extras),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        return cls(
            variant=d["variant"], kernel=d["kernel"], arch=d["arch"], config=KernelConfig.from_dict(d["config"]),
            status=d["status"], usage=usage_from_dict(d.get("usage")),
            occupancy=Occupancy.from_dict(d.get("occupancy")), compile_seconds=d.get("compile_seconds", 0.0),
            triton_version=d.get("triton_version", ""), source_hash=d.get("source_hash", ""),
            cached=d.get("cached", False), extras=tuple((d.get("extras") or {}).items()),
        )
