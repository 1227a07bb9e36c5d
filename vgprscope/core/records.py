"""The data model: frozen records every layer passes around (docs/design.md, "Data model")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol, cast

from .limits import COUNT_LIMIT

SCHEMA_VERSION = 1


class Config(Protocol):
    """What a row's config is to the core, whichever source made it: a captured launch's ``LaunchConfig``,
    a bundled variant's attention config (``vgprscope.flashattn.config``), or a config read back from JSON
    whose kind this process does not know (``DataConfig``). ``key()`` is part of every cache and baseline
    key: two configs that compile differently never share it."""

    @property
    def kind(self) -> str: ...

    def key(self) -> str: ...

    def short(self) -> str: ...

    def flat(self) -> dict[str, Any]: ...

    def as_dict(self) -> dict[str, Any]: ...

    def option(self, name: str) -> Any: ...

    def with_options(self, **options: Any) -> Config: ...

    @property
    def num_warps(self) -> int | None: ...

    @property
    def num_stages(self) -> int | None: ...

    @property
    def waves_per_eu(self) -> int | None: ...

    @property
    def maxnreg(self) -> int | None: ...


# Triton's defaults for options a launch did not give, the same on every backend (num_stages is not: the
# backend's options dataclass decides it, so it stays unset here).
LAUNCH_DEFAULTS = {"num_warps": 4, "num_ctas": 1}
# A row's note where it compiled from a capture's snapshot (its file is not on this machine), not from a file
# (the compile worker, which cannot import this, writes the same words)
SNAPSHOT_NOTE = "compiled from the capture's snapshot of its source"


def config_key(d: dict[str, Any]) -> str:
    """The stable hash of a config's ``as_dict()``: every config kind keys the same way, so a config read
    back as another class (``DataConfig``) keeps its key."""
    blob = json.dumps(d, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument as Triton's JIT specialised it: its type (``*fp16``, ``i32``, ``constexpr``)
    and its specialisation descriptor per backend (Triton's backend name -> the letters its JIT writes, each
    backend's own: ``backends.base.descriptor``), None where the JIT does not specialise it."""

    name: str
    type: str
    descriptors: tuple[tuple[str, str | None], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """``{"name", "type", <backend>: <descriptor>, ...}``."""
        return {"name": self.name, "type": self.type, **dict(self.descriptors)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ArgSpec:
        return cls(d["name"], d["type"], tuple((k, v) for k, v in d.items() if k not in ("name", "type")))


@dataclass(frozen=True)
class AutotunePick:
    """Which config of an autotuned kernel's list (after ``prune_configs_by``) a row compiles."""

    index: int  # 0-based, in the pruned list's order
    count: int  # configs after pruning
    declared: int  # configs the decorator lists
    key: tuple[str, ...] = ()  # the autotune key's values at the launch


class _LaunchOptions:
    """The launch options every config names the same way, read through its own ``option``."""

    def option(self, name: str) -> Any:
        raise NotImplementedError

    @property
    def num_stages(self) -> int | None:
        return cast("int | None", self.option("num_stages"))

    @property
    def waves_per_eu(self) -> int | None:
        return cast("int | None", self.option("waves_per_eu"))

    @property
    def maxnreg(self) -> int | None:
        return cast("int | None", self.option("maxnreg"))


@dataclass(frozen=True)
class LaunchConfig(_LaunchOptions):
    """The generic config of a captured or cached kernel: its signature and specialisation, constexprs
    and launch options, exactly as the launch gave them (docs/design.md, "Data model")."""

    args: tuple[ArgSpec, ...]
    constexprs: tuple[tuple[str, Any], ...]  # name -> JSON value ({"dtype": "fp16"}, {"jit": {"file", "qualname"}}, ...)
    options: tuple[tuple[str, Any], ...]  # num_warps, num_stages, num_ctas, waves_per_eu, maxnreg, ... as given
    autotune: AutotunePick | None = None
    origin: str = ""  # what else tells two launches apart: a Triton cache entry's hash
    # sizes the kernel's body fixes rather than its launch (an Inductor template's BLOCK_M, BLOCK_N, BLOCK_K)
    tile: tuple[tuple[str, int], ...] = ()

    kind = "launch"

    def option(self, name: str) -> Any:
        return dict(self.options).get(name, LAUNCH_DEFAULTS.get(name))

    def with_options(self, **options: Any) -> LaunchConfig:
        """The config with these launch options set (None unsets one), as its job's options."""
        merged = {k: v for k, v in (dict(self.options) | options).items() if v is not None}
        return replace(self, options=tuple(sorted(merged.items())))

    @property
    def num_warps(self) -> int:
        return cast(int, self.option("num_warps"))

    def as_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "args": [a.as_dict() for a in self.args], "constexprs": dict(self.constexprs),
             "options": dict(self.options), "autotune": asdict(self.autotune) if self.autotune else None}
        return d | ({"origin": self.origin} if self.origin else {}) | ({"tile": dict(self.tile)} if self.tile else {})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LaunchConfig:
        at = d.get("autotune")
        return cls(args=tuple(ArgSpec.from_dict(a) for a in d["args"]), constexprs=tuple(d["constexprs"].items()),
                   options=tuple(sorted(d["options"].items())),
                   autotune=AutotunePick(at["index"], at["count"], at["declared"], tuple(at.get("key", ())))
                   if at else None, origin=d.get("origin", ""), tile=tuple((d.get("tile") or {}).items()))

    def key(self) -> str:
        return config_key(self.as_dict())

    def flat(self) -> dict[str, Any]:
        return {"kind": self.kind, "signature": ",".join(f"{a.name}:{a.type}" for a in self.args),
                "constexprs": ";".join(f"{k}={_show(v)}" for k, v in self.constexprs),
                "options": ";".join(f"{k}={v}" for k, v in self.options),
                "autotune": f"{self.autotune.index + 1}/{self.autotune.count}" if self.autotune else ""} | \
            ({"tile": ";".join(f"{k}={v}" for k, v in self.tile)} if self.tile else {})

    def short(self) -> str:
        """Pointer dtypes, the tile a template's body fixes, the constexprs that are numbers, warps and stages,
        the autotune pick: ``fp32 BLOCK_SIZE=1024 w4 s3 cfg 2/18``, ``bf16 128x128x64 w4 s3``. Every field is in
        json / csv."""
        dtypes = sorted({a.type.lstrip("*") for a in self.args if a.type.startswith("*")})
        numeric = [(k, v) for k, v in self.constexprs
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and k.isupper()]
        # tile sizes first: they decide the registers; the other constexprs are in json / csv
        tiles = [(k, v) for k, v in numeric if k.startswith("BLOCK")]
        consts = [f"{k}={_show(v)}" for k, v in (tiles or numeric[:2])]
        parts = ["/".join(dtypes)] if dtypes else []
        parts += ["x".join(str(v) for _, v in self.tile)] if self.tile else []  # 128x128x64: BLOCK_M x N x K
        parts += consts + [f"w{self.num_warps}"] + ([f"s{self.num_stages}"] if self.num_stages is not None else [])
        for name in ("waves_per_eu", "maxnreg", "num_ctas"):
            if name in dict(self.options) and dict(self.options)[name] != LAUNCH_DEFAULTS.get(name):
                parts.append(f"{name}={dict(self.options)[name]}")
        if self.autotune:
            parts.append(f"cfg {self.autotune.index + 1}/{self.autotune.count}")
        return " ".join(parts)


def _show(value: Any) -> str:
    if isinstance(value, dict) and len(value) == 1:
        inner = next(iter(value.values()))
        return str(inner["qualname"]) if isinstance(inner, dict) and "qualname" in inner else str(inner)
    return str(value)


@dataclass(frozen=True)
class DataConfig(_LaunchOptions):
    """A config read back from JSON (a baseline, a record) whose kind no loaded module registered: its
    fields as they were written, nothing assumed about them. It keys as the concrete class keys the same
    dict (``config_key`` of ``as_dict()``), so a baseline compares whichever class reads it; the launch
    options are read by name, at Triton's defaults where absent."""

    blob: str  # the dict as canonical JSON (a config stays hashable)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DataConfig:
        return cls(json.dumps(d, sort_keys=True, separators=(",", ":")))

    @property
    def kind(self) -> str:
        return str(self.as_dict().get("kind", ""))

    def as_dict(self) -> dict[str, Any]:
        return cast(dict[str, Any], json.loads(self.blob))

    def key(self) -> str:
        return config_key(self.as_dict())

    def option(self, name: str) -> Any:
        d = self.as_dict()
        options: dict[str, Any] = d["options"] if isinstance(d.get("options"), dict) else d
        value = options.get(name)
        return LAUNCH_DEFAULTS.get(name) if value is None else value

    def with_options(self, **options: Any) -> DataConfig:
        d = self.as_dict()
        target = d["options"] if isinstance(d.get("options"), dict) else d
        target.update(options)
        return DataConfig.from_dict(d)

    @property
    def num_warps(self) -> int | None:
        return cast("int | None", self.option("num_warps"))

    def flat(self) -> dict[str, Any]:
        """Scalars as they are; a list as ``4x32x4096``, a table as ``name=value;...``."""
        out: dict[str, Any] = {}
        for k, v in self.as_dict().items():
            if isinstance(v, list):
                v = "x".join(map(str, v))
            elif isinstance(v, dict):
                v = ";".join(f"{n}={_show(x)}" for n, x in v.items())
            out[k] = v
        return out

    def short(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.flat().items() if v not in (None, "") and k != "kind")


# Readers of config dicts by their ``kind`` (None: a dict with no ``kind``: the bundled variants' attention
# config predates kinds, and writing one into it would change every key). A package registers its own when
# its config module is imported; a kind no loaded module registered reads as a DataConfig.
_READERS: dict[str | None, Callable[[dict[str, Any]], Config]] = {LaunchConfig.kind: LaunchConfig.from_dict}


def register_config_kind(kind: str | None, reader: Callable[[dict[str, Any]], Config]) -> None:
    """Read config dicts of ``kind`` (None: dicts without one) with ``reader``."""
    _READERS[kind] = reader


def config_from_dict(d: dict[str, Any]) -> Config:
    """A config as ``as_dict`` wrote it, read by its kind's registered reader, or as a DataConfig."""
    reader = _READERS.get(d.get("kind"))
    return reader(d) if reader is not None else DataConfig.from_dict(d)


@dataclass(frozen=True)
class KernelIdentity:
    """Which Triton function a row is: module, qualified name, source file and the file's hash."""

    module: str
    qualname: str
    file: str
    source_hash: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> KernelIdentity | None:
        return cls(**{k: d.get(k, "") for k in ("module", "qualname", "file", "source_hash")}) if d else None


@dataclass(frozen=True)
class Diagnostic:
    """One warning, advisory or error the compiler printed while it compiled a kernel (``parse.diagnostics``).

    ``code``: the compiler's own code (ptxas ``C7511``), else the message's first words as a slug
    (``too-many-maxnreg-specified``), the same whichever kernel it names: what the gate compares.
    ``severity``: ``error``, ``warning``, ``info`` (a ptxas advisory with a code) or ``remark``.
    ``where``: the location the compiler gave (``PTX line 2074``, ``kernel.py:12``), "" where none."""

    tool: str  # "ptxas" or "llvm" (LLVM and MLIR, Triton's own passes included)
    code: str
    severity: str
    message: str
    where: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Diagnostic:
        return cls(**{f.name: str(d.get(f.name) or "") for f in fields(cls)})

    def text(self) -> str:
        """``ptxas C7512 info: Potential Performance Loss: ...`` (and `` (PTX line 2074)``)."""
        at = f" ({self.where})" if self.where else ""
        return f"{self.tool} {self.code} {self.severity}: {self.message}{at}"


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
    # the gate's loop: its one trip (parse.loops.gate_loop); None: no assembly was read, or no loop
    loop_matrix_share: int | None = None  # matrix instructions, percent of its instructions (rounded)
    loop_spill_bytes: int | None = None  # scratch bytes loaded + stored per trip, per lane (0: no loop)
    loop_scratch_insts: int | None = None  # scratch loads + stores per trip
    loop_lines: str | None = None  # its source lines ("baseline.py:45-69")
    # every loop's spill traffic (parse.loops.loop_fields): the worst loop's scratch bytes per trip of its own
    # body, and every loop's together
    loop_spill_bytes_max: int | None = None
    loop_spill_bytes_sum: int | None = None

    vendor = "amd"

    @property
    def lds_bytes(self) -> int:
        return self.lds_static + self.lds_dynamic

    @property
    def spills_known(self) -> bool:
        return True

    @property
    def spills(self) -> int:
        return self.vgpr_spill + self.sgpr_spill


@dataclass(frozen=True)
class NvidiaUsage:
    """Resources of one NVIDIA kernel, from ptxas -v and cuobjdump --dump-resource-usage."""

    regs: int
    stack_bytes: int  # stack frame per thread
    spill_store_bytes: int | None  # None: unknown (a stored cubin no ptxas here rebuilds: see spills_from)
    spill_load_bytes: int | None
    shared_static: int
    shared_dynamic: int  # Triton's `metadata.shared`
    local_bytes: int  # cuobjdump LOCAL
    ptxas_version: str | None = None  # the ptxas whose -v gave the spill figures (None: no ptxas run here did)
    # A Triton cache entry read as stored: where the registers, stack and shared memory come from, and where
    # the spill figures do (or why they are unknown). None on a compile: all from this compile's ptxas.
    counts_from: str | None = None
    spills_from: str | None = None
    # the gate's loop and every loop's spill traffic, as AmdUsage's (per thread): None where the cubin's SASS
    # was not read
    loop_matrix_share: int | None = None
    loop_spill_bytes: int | None = None
    loop_scratch_insts: int | None = None
    loop_lines: str | None = None
    loop_spill_bytes_max: int | None = None
    loop_spill_bytes_sum: int | None = None

    vendor = "nvidia"

    @property
    def shared_bytes(self) -> int:
        return self.shared_static + self.shared_dynamic

    @property
    def spills_known(self) -> bool:
        return self.spill_store_bytes is not None and self.spill_load_bytes is not None

    @property
    def spills(self) -> int:
        """Spill store + load bytes (0 where unknown: ``spills_known`` tells)."""
        return (self.spill_store_bytes or 0) + (self.spill_load_bytes or 0)


ResourceUsage = AmdUsage | NvidiaUsage
# The usage classes by the ``vendor`` their dicts carry (what each backend's parser returns: vgprscope.backends;
# the gate's numbers and the views' cells of a usage are its backend's)
USAGE_CLASSES: dict[str, type[AmdUsage] | type[NvidiaUsage]] = {
    cls.vendor: cls for cls in (AmdUsage, NvidiaUsage)
}


def usage_dict_valid(d: Any, bounds: dict[str, int] | None = None) -> bool:
    """Whether ``d`` is a usage as ``usage_to_dict`` writes it: a known vendor, every field of its class
    present (the optional ones may be left out) and of its declared type, each count a whole number from 0 to
    its bound (``bounds``: the arch's, else ``COUNT_LIMIT``). What a cache entry must pass before it is read."""
    if not isinstance(d, dict) or d.get("vendor") not in USAGE_CLASSES:
        return False
    bounds = bounds or {}
    for f in fields(USAGE_CLASSES[d["vendor"]]):
        kinds = {k.strip() for k in str(f.type).split("|")}
        if f.name not in d:
            if "None" in kinds and (f.name in _OPTIONAL_FIELDS or f.default is None):
                continue
            return False
        value = d[f.name]
        if value is None:
            if "None" not in kinds:
                return False
        elif "int" in kinds and isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value <= bounds.get(f.name, COUNT_LIMIT):
                return False
        elif not ("str" in kinds and isinstance(value, str)):
            return False
    return True


def usage_from_dict(d: dict[str, Any] | None) -> ResourceUsage | None:
    if d is None:
        return None
    d = dict(d)
    cls = USAGE_CLASSES[d.pop("vendor")]
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in known})


# fields a usage carries only when it has them (a stored cubin's provenance, the loop read from the assembly):
# left out when unset, so the records and baselines written without them read back as they were written
_OPTIONAL_FIELDS = ("counts_from", "spills_from", "loop_matrix_share", "loop_spill_bytes", "loop_scratch_insts",
                   "loop_lines", "loop_spill_bytes_max", "loop_spill_bytes_sum")


def usage_to_dict(u: ResourceUsage | None) -> dict[str, Any] | None:
    if u is None:
        return None
    d = asdict(u)
    return {"vendor": u.vendor, **{k: v for k, v in d.items() if not (k in _OPTIONAL_FIELDS and v is None)}}


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
class Verdict:
    """What the producer of a row's kernel concludes from its compiled counts (PyTorch Inductor: whether its
    autotuner benchmarks the config or skips it for its spills), made with the row by its source's judge
    (``RowInfo.judge``) and stored on it: the tables' column ``column`` shows ``cell``; ``note`` says why the producer
    does not use the config ("" where it does); ``fields`` are its fields in CSV and dataframes."""

    column: str
    cell: str
    kept: bool
    note: str = ""
    fields: tuple[tuple[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"column": self.column, "cell": self.cell, "kept": self.kept, "note": self.note,
                "fields": dict(self.fields)}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Verdict | None:
        if not d:
            return None
        return cls(d["column"], d["cell"], bool(d["kept"]), d.get("note", ""), tuple((d.get("fields") or {}).items()))


@dataclass(frozen=True)
class Record:
    """One row: variant x kernel x arch x config. A failed compile is a row with its error in ``status``."""

    variant: str  # a bundled variant's name, or the label of a captured / cached kernel (its module)
    kernel: str
    arch: str
    config: Config
    status: str  # "ok" or a one-line reason
    usage: ResourceUsage | None = None
    occupancy: Occupancy | None = None
    compile_seconds: float = 0.0
    triton_version: str = ""
    source_hash: str = ""
    cached: bool = False
    extras: tuple[tuple[str, Any], ...] = field(default=())  # e.g. traffic-model columns
    identity: KernelIdentity | None = None  # the Triton function, whatever source it came from
    source: str = "variants"  # the kernel source that yielded the row: variants, capture, triton-cache
    # What the row stands for within its source, whatever config it compiles: the gate compares a baseline
    # entry with the current one of the same slot, so a changed default or autotune config is a change of
    # that slot, not a new entry beside a missing one. Variants: the request ("defaults", "shape=1x32x1x8192x8");
    # a capture: the autotune key and config index, or the launch's argument types and ordinal.
    slot: str = ""
    toolchain: str = ""  # the side that compiled it when not the installed Triton as is: "3.8.0", "3.9.0 X=1"
    # what the compiler printed (ptxas warnings and advisories, LLVM's warnings and errors), in its order
    diagnostics: tuple[Diagnostic, ...] = ()
    llvm_version: str = ""  # the LLVM build of the Triton that compiled it ("24.0.0git (b010a18d2b64...)")
    # why its source does not take the row (a variant written for other archs, a config value outside the
    # variant's range): the tables say it in a note under the table, not as a failed row; "" where it applies
    refused: str = ""
    verdict: Verdict | None = None  # its producer's conclusion from its counts (Inductor's spill threshold)
    # the grid points (their slots) of the selection the row answers: its own slot, and any other point whose
    # request resolves to the same config (a default the points do not change); the selection's, not the compile's:
    # neither compared nor saved
    points: tuple[str, ...] = field(default=(), compare=False)

    @property
    def ptxas_version(self) -> str:
        """The ptxas that built the kernel (NVIDIA; "" elsewhere or where none ran here)."""
        return str(getattr(self.usage, "ptxas_version", None) or "")

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
            "identity": self.identity.as_dict() if self.identity else None, "source": self.source,
            "slot": self.slot, "toolchain": self.toolchain,
            "diagnostics": [d.as_dict() for d in self.diagnostics], "llvm_version": self.llvm_version,
            "ptxas_version": self.ptxas_version, **({"refused": self.refused} if self.refused else {}),
            **({"verdict": self.verdict.as_dict()} if self.verdict else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        return cls(
            variant=d["variant"], kernel=d["kernel"], arch=d["arch"], config=config_from_dict(d["config"]),
            status=d["status"], usage=usage_from_dict(d.get("usage")),
            occupancy=Occupancy.from_dict(d.get("occupancy")), compile_seconds=d.get("compile_seconds", 0.0),
            triton_version=d.get("triton_version", ""), source_hash=d.get("source_hash", ""),
            cached=d.get("cached", False), extras=tuple((d.get("extras") or {}).items()),
            identity=KernelIdentity.from_dict(d.get("identity")), source=d.get("source", "variants"),
            slot=d.get("slot", ""), toolchain=d.get("toolchain", ""),
            diagnostics=tuple(Diagnostic.from_dict(x) for x in d.get("diagnostics") or ()),
            llvm_version=d.get("llvm_version", ""), refused=str(d.get("refused") or ""),
            verdict=Verdict.from_dict(d.get("verdict")),
        )
