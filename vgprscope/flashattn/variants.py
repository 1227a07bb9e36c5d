"""The registry of variants: each kernel file's declaration, as a frozen record, and config resolution.

Listing variants reads only each file's ``VARIANT = {...}`` literal (no triton import); compiling or
running one imports its file.

A variant's own default config is data in that literal, resolved per arch and head dim:

    "defaults": {"block_m": 128, "num_warps": {"amd": 4, "nvidia": 8}, ...},
    "defaults_for": [
        {"arch": ["sm_86", "sm_89"], "head_dim": [129, 256], "set": {"num_stages": 1}},
    ],

``defaults`` holds a value per name, or a dict of values per vendor (``amd`` / ``nvidia``).
``defaults_for`` refines them where a default would not fit an arch: each entry sets the values of its
``set`` where all of its conditions hold: ``arch`` (arch or vendor names; absent: every arch), ``head_dim``
(an inclusive ``[lo, hi]`` range of the requested head dim; absent: every head dim) and ``causal`` (true or
false: only for causal, or only for non-causal attention; absent: both). Later entries win. Above them: the shape's defaults (``vgprscope.flashattn.tuning``), and above all what the user
asks for.

The rest of what is known about a variant is in the same literal, so that a new variant is one file:
``traffic`` (its traffic model: ``flashattn.traffic``), ``live_state`` (seed 001's estimate of its loop
state: ``flashattn.live``), ``tiling`` (which shape defaults apply: ``flashattn.tuning``) and ``tolerance``
(a documented exception to the tolerance table: ``flashattn.tolerances``). Each is checked when the
directory is loaded; a variant without ``traffic`` or ``live_state`` has no traffic columns or estimate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ..backends import backend_of
from ..core.archs import ARCHS, Arch, Vendor
from ..core.errors import UnknownNameError, UsageError
from ..core.options import LAUNCH_OPTIONS
from . import loader
from .config import DTYPES, LAUNCH_FIELDS, AttentionConfig, ConfigRequest
from .declared import LiveModel, TrafficModel, live_model, traffic_model
from .tolerances import Tolerance, tolerance_entries
from .tuning import TILINGS, shape_defaults, stages_refusal


@dataclass(frozen=True)
class DefaultsRule:
    """One ``defaults_for`` entry: values that replace the defaults on some archs, head dims and masks."""

    values: tuple[tuple[str, Any], ...]
    archs: tuple[str, ...] = ()  # arch or vendor names; () = every arch
    head_dims: tuple[int, int] | None = None  # inclusive; None = every head dim
    causal: bool | None = None  # True: causal attention only, False: non-causal only; None = both

    def applies(self, arch: Arch, head_dim: int, causal: bool | None = None) -> bool:
        """Whether the entry holds; a rule for one mask does not apply where the mask is not given."""
        if self.archs and arch.name not in self.archs and arch.vendor.value not in self.archs:
            return False
        if self.causal is not None and causal is not self.causal:
            return False
        return self.head_dims is None or self.head_dims[0] <= head_dim <= self.head_dims[1]


@dataclass(frozen=True)
class Variant:
    name: str
    strategy: str
    seed: str
    trades: str
    defaults: tuple[tuple[str, Any], ...] = field(compare=False)  # values may be per-vendor dicts
    kernels: tuple[str, ...]
    # knobs whose value defines the strategy: a default above the cap (the shape's or the arch's tiles) gets
    # the cap; a value the user asked for is never changed: the variant's check_config refuses it on its row
    # (small-tiles asked for BLOCK_M 128 says it is not a small tile)
    caps: tuple[tuple[str, int], ...]
    knobs: tuple[str, ...]  # the variant-specific knobs it takes (split-k: num_splits)
    directory: Path
    file: Path
    source_hash: str
    order: int = 0
    defaults_for: tuple[DefaultsRule, ...] = field(default=(), compare=False)
    traffic: TrafficModel | None = field(default=None, compare=False)
    live_state: LiveModel | None = field(default=None, compare=False)
    tiling: str = field(default="query-tile", compare=False)
    tolerances: tuple[tuple[str, Tolerance], ...] = field(default=(), compare=False)
    # False for a Gluon variant: Gluon kernels do not run in Triton's interpreter (its numerics are GPU tests)
    interpreter: bool = field(default=True, compare=False)
    # the knob ``frontier`` varies instead of the occupancy levels (a register split between warp_specialize
    # partitions: ws-regalloc's producer_regs), with the values it takes when the grid sets none
    frontier_knob: tuple[str, tuple[int, ...]] | None = field(default=None, compare=False)
    # the archs the variant is written for (ws-regalloc: sm_90): the gate's default set compiles it there too
    archs: tuple[str, ...] = field(default=(), compare=False)

    def module(self) -> ModuleType:
        return loader.load_file(self.directory, self.file.name)

    def default(self, name: str, vendor: Vendor) -> Any:
        """The vendor-wide default of ``name`` (``defaults`` only; ``defaults_on`` adds ``defaults_for``)."""
        value = dict(self.defaults).get(name)
        if isinstance(value, dict):
            return value.get(vendor.value)
        return value

    def defaults_on(self, arch: Arch, head_dim: int, causal: bool | None = None) -> dict[str, Any]:
        """Every default of this variant for ``arch`` at ``head_dim`` (and ``causal``, where given):
        ``defaults`` for the arch's vendor, then each ``defaults_for`` entry that applies, in order."""
        out = {name: self.default(name, arch.vendor) for name, _ in self.defaults}
        for rule in self.defaults_for:
            if rule.applies(arch, head_dim, causal):
                out |= dict(rule.values)
        return out

    def check(self, config: AttentionConfig) -> str | None:
        """Why this variant cannot take ``config``, or None."""
        return self.module().check_config(config.as_dict())


def _literal_variant(file: Path) -> dict[str, Any] | None:
    tree = loader.parsed(file)  # the tree source_hash reads the file's imports from
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "VARIANT" for t in node.targets):
            try:
                decl = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                decl = None
            if not isinstance(decl, dict):
                raise UsageError(f"{file}, line {node.lineno}: VARIANT must be a dict of literals (strings, "
                                 "numbers, lists, dicts), read without running the file")
            return decl
    return None


_REQUIRED = ("name", "strategy", "seed", "trades", "defaults", "kernels")
_VENDORS = tuple(v.value for v in Vendor)
_RULE_KEYS = {"arch", "head_dim", "causal", "set"}
_KNOWN = {*_REQUIRED, "order", "knobs", "caps", "defaults_for", "traffic", "live_state", "tiling", "tolerance",
          "interpreter", "frontier_knob", "archs"}


def _check_declaration(file: Path, decl: dict[str, Any]) -> None:
    """The parts of VARIANT that config resolution reads, checked when the directory is loaded."""
    unknown = sorted(set(decl) - _KNOWN, key=str)
    if unknown:
        raise UsageError(f"{file}: VARIANT has an unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_KNOWN))}")
    archs = decl.get("archs", [])
    if not isinstance(archs, list) or not all(isinstance(a, str) and a in ARCHS for a in archs):
        raise UsageError(f"{file}: VARIANT['archs'] must be a list of arch names (the archs it is written for); "
                         f"got {archs!r}; allowed names: {', '.join(ARCHS)}")
    if decl.get("tiling", "query-tile") not in TILINGS:
        raise UsageError(f"{file}: VARIANT['tiling'] {decl['tiling']!r} is not allowed; allowed: {', '.join(TILINGS)}")
    defaults = decl["defaults"]
    if not isinstance(defaults, dict):
        raise UsageError(f"{file}: VARIANT['defaults'] must be a dict of name: value")
    for name, value in defaults.items():
        if isinstance(value, dict) and not set(value) <= set(_VENDORS):
            raise UsageError(f"{file}: VARIANT['defaults'][{name!r}] is keyed by {', '.join(map(str, value))}; "
                             f"allowed keys: {', '.join(_VENDORS)} (per-arch values go in 'defaults_for')")
    rules = decl.get("defaults_for", [])
    if not isinstance(rules, list):
        raise UsageError(f"{file}: VARIANT['defaults_for'] must be a list of {{'arch', 'head_dim', 'set'}} dicts")
    known = [*ARCHS, *_VENDORS]
    for i, rule in enumerate(rules):
        where = f"{file}: VARIANT['defaults_for'][{i}]"
        if not isinstance(rule, dict) or not isinstance(rule.get("set"), dict) or set(rule) - _RULE_KEYS:
            raise UsageError(f"{where} must be a dict with 'set' (name: value) and optional 'arch', 'head_dim', "
                             "'causal'")
        names = rule.get("arch", [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n in known for n in names):
            raise UsageError(f"{where}['arch'] must list arch or vendor names; valid: {', '.join(known)}")
        hd = rule.get("head_dim")
        if hd is not None and not (isinstance(hd, list) and len(hd) == 2 and all(isinstance(x, int) for x in hd)
                                   and hd[0] <= hd[1]):
            raise UsageError(f"{where}['head_dim'] must be an inclusive range [lo, hi] of integers")
        if "causal" in rule and not isinstance(rule["causal"], bool):
            raise UsageError(f"{where}['causal'] must be true or false; got {rule['causal']!r}")
    fk = decl.get("frontier_knob")
    if fk is not None and not (isinstance(fk, dict) and fk.get("name") in decl.get("knobs", ())
                               and _frontier_values(fk)):
        raise UsageError(f"{file}: VARIANT['frontier_knob'] {fk!r} is not allowed; allowed: {{'name': one of "
                         "VARIANT['knobs'], and 'values': a non-empty list of integers, or 'range': [first, last, "
                         "step] (inclusive, step > 0)}")


def _frontier_values(fk: dict[str, Any]) -> tuple[int, ...]:
    """The values a frontier knob declares (``values``, or the inclusive ``range`` [first, last, step]); () when
    the declaration is not one of those."""
    def ints(xs: Any) -> bool:
        return isinstance(xs, list) and bool(xs) and all(type(x) is int for x in xs)

    if set(fk) == {"name", "values"} and ints(fk["values"]):
        return tuple(fk["values"])
    if set(fk) == {"name", "range"} and ints(fk["range"]) and len(fk["range"]) == 3:
        first, last, step = fk["range"]
        return tuple(range(first, last + 1, step)) if step > 0 else ()
    return ()


def _rules(decl: dict[str, Any]) -> tuple[DefaultsRule, ...]:
    return tuple(DefaultsRule(values=tuple(sorted(r["set"].items())), archs=tuple(r.get("arch", ())),
                              head_dims=tuple(r["head_dim"]) if r.get("head_dim") else None,
                              causal=r.get("causal"))
                 for r in decl.get("defaults_for", []))


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
            raise UsageError(f"{file}: VARIANT lacks {', '.join(missing)}")
        _check_declaration(file, decl)
        out[decl["name"]] = Variant(
            name=decl["name"], strategy=decl["strategy"], seed=decl["seed"], trades=decl["trades"],
            defaults=tuple(sorted(decl["defaults"].items())), kernels=tuple(decl["kernels"]),
            caps=tuple(sorted(decl.get("caps", {}).items())), knobs=tuple(decl.get("knobs", ())), directory=directory,
            file=file,
            source_hash=loader.source_hash(directory, file), order=decl.get("order", 100),
            defaults_for=_rules(decl),
            traffic=traffic_model(decl["traffic"], f"{file}: VARIANT['traffic']") if "traffic" in decl else None,
            live_state=(live_model(decl["live_state"], f"{file}: VARIANT['live_state']", tuple(decl.get("knobs", ())))
                        if "live_state" in decl else None),
            tiling=decl.get("tiling", "query-tile"), interpreter=decl.get("interpreter", True) is not False,
            archs=tuple(decl.get("archs", ())),
            tolerances=tolerance_entries(decl["tolerance"], f"{file}: VARIANT['tolerance']") if "tolerance" in decl
            else (),
            frontier_knob=((decl["frontier_knob"]["name"], _frontier_values(decl["frontier_knob"]))
                           if "frontier_knob" in decl else None),
        )
    loader.forget_trees()  # what they declare and import is read
    if not out:
        raise UsageError(f"kernel directory {str(directory)!r} has no variant: no .py file (outside _*.py) "
                         "defines VARIANT = {...}")
    return dict(sorted(out.items(), key=lambda kv: (kv[1].order, kv[0])))


def get_variant(name: str, directory: Path = loader.BUNDLED_DIR) -> Variant:
    variants = load_variants(directory)
    try:
        return variants[name]
    except KeyError:
        raise UnknownNameError("variant", name, list(variants)) from None


def select_variants(names: list[str] | None, directory: Path = loader.BUNDLED_DIR) -> list[Variant]:
    """``None``, ``[]`` or ``['all']`` -> every variant; else each name, validated (comma lists allowed).
    An empty name (``''``, ``'a,,b'``) is an unknown variant, not "all"."""
    flat = [n.strip() for item in (names or []) for n in item.split(",")]
    if not flat or flat == ["all"]:
        return list(load_variants(directory).values())
    variants = load_variants(directory)
    if "all" in flat and "all" not in variants:
        raise UsageError(f"variant 'all' selects every variant and takes no others (got {', '.join(flat)}); give "
                         "'all' alone, or name the variants")
    unknown = [n for n in flat if n not in variants]
    if unknown:
        raise UnknownNameError("variant", unknown[0], [*variants, "all"])
    return [variants[n] for n in dict.fromkeys(flat)]


def resolve_config(variant: Variant, arch: Arch, req: ConfigRequest) -> AttentionConfig:
    """The full specialisation of ``variant`` on ``arch`` for a request: defaults filled in, backend options
    that do not apply to the arch dropped (so they never split the cache or the baseline)."""
    if req.dtype not in DTYPES:
        raise UnknownNameError("dtype", req.dtype, DTYPES)

    caps = dict(variant.caps)
    # the shape's and arch's defaults (decode tiles, per-arch prefill tiles) come before the variant's own
    tuned = shape_defaults(variant, arch.vendor, arch.name, req.shape, req.head_dim)
    defaults = variant.defaults_on(arch, req.head_dim, req.causal)

    def pick(name: str) -> Any:
        asked = getattr(req, name)
        if asked is not None:  # what the user asked for, as asked: a variant that cannot honour it refuses it
            return asked
        value = tuned.get(name, defaults.get(name))
        if name in caps and value is not None and value > caps[name]:
            return caps[name]
        return value

    backend_options = backend_of(arch).facts.options  # the other backends' are None here: they mean nothing on it

    def option(name: str) -> Any:
        return pick(name) if name in backend_options else None

    # a knob asked for goes to the variants that take it; the others keep their defaults
    own = {k: v for k, v in req.extra if k in variant.knobs}
    extra = {k: v for k, v in defaults.items() if k not in _CONFIG_FIELDS} | own
    # an option every backend reads, always; a backend's own, only on its archs
    launch = {o.name: pick(o.name) if o.vendor is None else option(o.name) for o in LAUNCH_OPTIONS}
    cfg = AttentionConfig(
        block_m=pick("block_m"), block_n=pick("block_n"), head_dim=req.head_dim, dtype=req.dtype,
        causal=req.causal, **launch, extra=tuple(sorted(extra.items())), shape=req.shape,
    )
    if req.num_stages is not None and cfg.block_n is not None:  # asked for: refused when the arch cannot hold it
        refusal = stages_refusal(cfg.num_stages, cfg.block_n, cfg.head_dim, arch.name)
        if refusal:
            raise UsageError(refusal)
    return cfg


_CONFIG_FIELDS = {"block_m", "block_n", "head_dim", "dtype", "causal", *LAUNCH_FIELDS, "shape"}


def check_knobs(req: ConfigRequest, variants: list[Variant]) -> None:
    """A --knob no selected variant takes is a usage error naming who takes what."""
    taken = {k for v in variants for k in v.knobs}
    unknown = [k for k, _ in req.extra if k not in taken]
    if unknown:
        offers = "; ".join(f"{v.name}: {', '.join(v.knobs)}" for v in variants if v.knobs) or "none"
        raise UsageError(f"no selected variant takes the knob {unknown[0]!r}; knobs by variant: {offers}")
