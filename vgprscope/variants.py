"""The registry of variants: each kernel file's declaration, as a frozen record, and config resolution.

Listing variants reads only each file's ``VARIANT = {...}`` literal (no triton import); compiling or
running one imports its file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from . import loader
from .archs import Arch, Vendor
from .errors import UnknownNameError, UsageError
from .records import DEFAULT_SHAPE, DTYPES, KernelConfig


@dataclass(frozen=True)
class Variant:
    name: str
    strategy: str
    seed: str
    trades: str
    defaults: tuple[tuple[str, Any], ...] = field(compare=False)  # values may be per-vendor dicts
    kernels: tuple[str, ...]
    # knobs whose value defines the strategy: a request above the cap gets the cap (small-tiles asked for
    # BLOCK_M 128 is still small tiles, at 64)
    caps: tuple[tuple[str, int], ...]
    knobs: tuple[str, ...]  # the variant-specific knobs it takes (split-k: num_splits)
    directory: Path
    file: Path
    source_hash: str
    order: int = 0

    def module(self) -> ModuleType:
        return loader.load_file(self.directory, self.file.name)

    def default(self, name: str, vendor: Vendor) -> Any:
        value = dict(self.defaults).get(name)
        if isinstance(value, dict):
            return value.get(vendor.value)
        return value

    def check(self, config: KernelConfig) -> str | None:
        """Why this variant cannot take ``config``, or None."""
        return self.module().check_config(config.as_dict())


def _literal_variant(file: Path) -> dict[str, Any] | None:
    tree = ast.parse(file.read_text(), str(file))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "VARIANT" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


_REQUIRED = ("name", "strategy", "seed", "trades", "defaults", "kernels")


@cache
def load_variants(directory: Path = loader.BUNDLED_DIR) -> dict[str, Variant]:
    """Every variant a kernel directory declares, in the order of its ``VARIANT['order']`` then name."""
    out: dict[str, Variant] = {}
    for file in loader.variant_files(directory):
        decl = _literal_variant(file)
        if decl is None:
            continue
        missing = [k for k in _REQUIRED if k not in decl]
        if missing:
            raise UsageError(f"{file.name}: VARIANT lacks {', '.join(missing)}")
        out[decl["name"]] = Variant(
            name=decl["name"], strategy=decl["strategy"], seed=decl["seed"], trades=decl["trades"],
            defaults=tuple(sorted(decl["defaults"].items())), kernels=tuple(decl["kernels"]),
            caps=tuple(sorted(decl.get("caps", {}).items())), knobs=tuple(decl.get("knobs", ())), directory=directory, file=file,
            source_hash=loader.source_hash(directory, file), order=decl.get("order", 100),
        )
    return dict(sorted(out.items(), key=lambda kv: (kv[1].order, kv[0])))


def get_variant(name: str, directory: Path = loader.BUNDLED_DIR) -> Variant:
    variants = load_variants(directory)
    try:
        return variants[name]
    except KeyError:
        raise UnknownNameError("variant", name, list(variants)) from None


def select_variants(names: list[str] | None, directory: Path = loader.BUNDLED_DIR) -> list[Variant]:
    """``None``, ``[]`` or ``['all']`` -> every variant; else each name, validated (comma lists allowed)."""
    flat = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    if not flat or flat == ["all"]:
        return list(load_variants(directory).values())
    return [get_variant(n, directory) for n in dict.fromkeys(flat)]


@dataclass(frozen=True)
class ConfigRequest:
    """What the user asked for; None means "the variant's default"."""

    block_m: int | None = None
    block_n: int | None = None
    head_dim: int = 128
    dtype: str = "fp16"
    causal: bool = False
    num_warps: int | None = None
    num_stages: int | None = None
    waves_per_eu: int | None = None
    matrix_instr_nonkdim: int | None = None
    kpack: int | None = None
    maxnreg: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    shape: tuple[int, int, int, int] = DEFAULT_SHAPE


AMD_ONLY = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
NVIDIA_ONLY = ("maxnreg",)


def resolve_config(variant: Variant, arch: Arch, req: ConfigRequest) -> KernelConfig:
    """The full specialisation of ``variant`` on ``arch`` for a request: defaults filled in, backend options
    that do not apply to the arch dropped (so they never split the cache or the baseline)."""
    if req.dtype not in DTYPES:
        raise UnknownNameError("dtype", req.dtype, DTYPES)

    caps = dict(variant.caps)

    def pick(name: str) -> Any:
        value = getattr(req, name)
        value = value if value is not None else variant.default(name, arch.vendor)
        if name in caps and value is not None and value > caps[name]:
            return caps[name]
        return value

    amd = arch.vendor is Vendor.AMD
    # a knob asked for goes to the variants that take it; the others keep their defaults
    own = {k: v for k, v in req.extra if k in variant.knobs}
    extra = {k: v for k, v in variant.defaults if k not in _CONFIG_FIELDS} | own
    cfg = KernelConfig(
        block_m=pick("block_m"), block_n=pick("block_n"), head_dim=req.head_dim, dtype=req.dtype,
        causal=req.causal, num_warps=pick("num_warps"), num_stages=pick("num_stages"),
        waves_per_eu=pick("waves_per_eu") if amd else None,
        matrix_instr_nonkdim=pick("matrix_instr_nonkdim") if amd else None,
        kpack=pick("kpack") if amd else None, maxnreg=None if amd else pick("maxnreg"),
        extra=tuple(sorted(extra.items())), shape=req.shape,
    )
    return cfg


_CONFIG_FIELDS = {
    "block_m", "block_n", "head_dim", "dtype", "causal", "num_warps", "num_stages", "waves_per_eu",
    "matrix_instr_nonkdim", "kpack", "maxnreg", "shape",
}


def check_backend_options(req: ConfigRequest, archs: list[Arch]) -> None:
    """AMD options for NVIDIA-only arch lists (and the reverse) are a usage error, not silently dropped."""
    vendors = {a.vendor for a in archs}
    for names, vendor in ((AMD_ONLY, Vendor.AMD), (NVIDIA_ONLY, Vendor.NVIDIA)):
        given = [n for n in names if getattr(req, n) is not None]
        if given and vendor not in vendors:
            opts = ", ".join("--" + n.replace("_", "-") for n in given)
            raise UsageError(f"{opts} applies to {vendor.value.upper()} archs only, and none was selected")


def check_knobs(req: ConfigRequest, variants: list[Variant]) -> None:
    """A --knob no selected variant takes is a usage error naming who takes what."""
    taken = {k for v in variants for k in v.knobs}
    unknown = [k for k, _ in req.extra if k not in taken]
    if unknown:
        offers = "; ".join(f"{v.name}: {', '.join(v.knobs)}" for v in variants if v.knobs) or "none"
        raise UsageError(f"no selected variant takes the knob {unknown[0]!r}; knobs by variant: {offers}")


def parse_knobs(items: list[str] | None) -> tuple[tuple[str, Any], ...]:
    """``NAME=VALUE`` strings -> sorted (name, value) pairs; integers become ints."""
    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"knob {item!r} is not NAME=VALUE (for example num_splits=4)")
        value = value.strip()
        out[name.strip()] = int(value) if value.lstrip("-").isdigit() else value
    return tuple(sorted(out.items()))
