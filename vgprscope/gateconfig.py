"""The gate's configuration: which set `baseline save` and `check` compile, where the baseline lives, and
the rules. Read from ``[tool.vgprscope]`` in the nearest ``pyproject.toml`` or from a file given by
``--config`` (the same table, or the same keys at the top level of a ``vgprscope.toml``).

```toml
[tool.vgprscope]
baseline = "vgprscope-baseline.json"   # relative to the file this is read from
variants = ["all"]                     # or names
archs = ["gfx90a", "gfx942", "sm_80"]
kernel_dir = "kernels"                 # optional: your own variants instead of the bundled ones
capture = "vgprscope-capture.json"     # optional: your own kernels as `vgprscope capture` recorded them
configs = [{}, {head_dim = 64, block_m = 64}]   # ConfigRequest fields; {} = each variant's defaults

[tool.vgprscope.rules]
vgpr_total = "+4"
"split-k:vgpr_total" = "+8"
occupancy = "-0"
```
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from . import loader
from .archs import ARCHS, DEFAULT_ARCHS, AmdArch, get_arch
from .baseline import DEFAULT_BASELINE, Entry, Rule, RuleSet, parse_rule, parse_tolerance
from .errors import TritonUnavailableError, UsageError
from .records import DTYPES
from .variants import ConfigRequest, Variant, select_variants

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None

PYPROJECT = "pyproject.toml"
_KEYS = ("baseline", "variants", "archs", "kernel_dir", "configs", "rules", "capture")


# Each variant at its defaults on the reference prefill shape, and one grouped-query decode shape (Llama 3 8B's
# 32 query heads over 8 K/V heads, one query row, 8k keys): the packed decode kernels and their tiles.
DEFAULT_CONFIGS: tuple[ConfigRequest, ...] = (ConfigRequest(), ConfigRequest(shape=(1, 32, 1, 8192, 8)))


@dataclass(frozen=True)
class GateSet:
    """What the gate compiles: variants x archs x configs. Empty ``variants`` means every variant."""

    variants: tuple[str, ...] = ()
    archs: tuple[str, ...] = DEFAULT_ARCHS
    configs: tuple[ConfigRequest, ...] = DEFAULT_CONFIGS
    kernel_dir: Path | None = None
    # a capture file (vgprscope capture): its specialisations join the set; alone when no variants are named
    capture: Path | None = None

    @property
    def with_variants(self) -> bool:
        """Whether the set compiles variants: named ones, a kernel directory, or (no capture) the bundled ones."""
        return self.capture is None or bool(self.variants) or self.kernel_dir is not None

    def labels(self) -> list[str]:
        """The names rows of this set carry first: variant names and the captured kernels' labels."""
        names = [v.name for v in self.selected_variants()]
        if self.capture is not None:
            from .capture.model import load_capture

            names += [k.label for k in load_capture(self.capture).kernels]
        return list(dict.fromkeys(names))

    def describe(self) -> dict[str, Any]:
        """The set as the baseline file records it: configs with only the fields that were given."""
        default = asdict(ConfigRequest())
        configs = []
        for c in self.configs:
            given = {k: v for k, v in asdict(c).items() if v != default[k]}
            given |= {"extra": dict(c.extra)} if "extra" in given else {}
            given |= {"shape": list(c.shape)} if "shape" in given else {}
            configs.append(given)
        out = {"variants": list(self.variants) or (["all"] if self.with_variants else []), "archs": list(self.archs),
               "configs": configs if self.with_variants else []}  # configs are the variants' requests
        return out | ({"capture": self.capture.name} if self.capture is not None else {})

    def check_targets(self) -> None:
        """Every arch must be one the installed Triton can compile for (checked before compiling)."""
        for name in self.archs:
            arch = get_arch(name)
            if isinstance(arch, AmdArch) and not arch.triton_target:
                targets = [a.name for a in ARCHS.values() if getattr(a, "triton_target", True)]
                raise TritonUnavailableError(f"the installed Triton cannot target {arch.name}; drop it from the "
                                             f"gate's archs (allowed: {', '.join(targets)})")
            backend = _backend_dir(arch.backend)
            if backend is not None and not backend.exists():
                raise TritonUnavailableError(f"the installed Triton has no {arch.backend} backend ({backend}); it "
                                             f"cannot target {arch.name}")

    def compile(self, jobs: int | None = None, use_cache: bool = True, on_progress=None) -> list[Entry]:
        from .sweep import run_sweep

        records = run_sweep(list(self.variants), list(self.archs), list(self.configs), jobs=jobs,
                            use_cache=use_cache, kernel_dir=self.kernel_dir, on_progress=on_progress,
                            capture=self.capture)
        return [Entry.from_record(r) for r in records]

    def selected_variants(self) -> list[Variant]:
        """The variants this set compiles (every variant of the kernel directory when none is named)."""
        if not self.with_variants:
            return []
        directory = self.kernel_dir.resolve() if self.kernel_dir else loader.BUNDLED_DIR
        return select_variants(list(self.variants), directory)


def _backend_dir(backend: str) -> Path | None:
    """Where the installed Triton keeps a backend, found without importing triton (None: cannot tell)."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("triton")
    except importlib.metadata.PackageNotFoundError:
        return None
    folder = {"hip": "amd", "cuda": "nvidia"}[backend]
    return Path(dist.locate_file(f"triton/backends/{folder}"))


@dataclass(frozen=True)
class GateConfig:
    set: GateSet = GateSet()
    baseline: Path = Path(DEFAULT_BASELINE)
    rules: RuleSet = RuleSet()
    source: Path | None = None  # the file it was read from

    def with_overrides(self, variants: Sequence[str] | None = None, archs: Sequence[str] | None = None,
                       kernel_dir: Path | None = None, baseline: Path | None = None,
                       rules: Sequence[str] = (), capture: Path | None = None) -> GateConfig:
        """Command-line options on top of the file: they replace its set parts and add rules after its own."""
        s = self.set
        s = replace(s, variants=_split(variants)) if variants else s
        s = replace(s, archs=tuple(dict.fromkeys(get_arch(a).name for a in _split(archs)))) if archs else s
        s = replace(s, kernel_dir=kernel_dir) if kernel_dir else s
        s = replace(s, capture=capture) if capture else s
        extra = tuple(parse_rule(r) for r in rules)
        return replace(self, set=s, baseline=baseline or self.baseline,
                       rules=RuleSet(self.rules.rules + extra))


def _split(items: Sequence[str]) -> tuple[str, ...]:
    """Repeated and comma-separated option values, in order, each once."""
    return tuple(dict.fromkeys(n.strip() for item in items for n in item.split(",") if n.strip()))


def find_pyproject(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if (d / PYPROJECT).is_file():
            return d / PYPROJECT
    return None


def load_gate_config(config_file: Path | None = None, cwd: Path | None = None) -> GateConfig:
    """The configuration from ``config_file``, else from the nearest pyproject.toml above ``cwd``, else the
    defaults (every bundled variant on gfx90a, gfx942, sm_80 at its defaults; ``vgprscope-baseline.json``
    beside the pyproject.toml, or in ``cwd`` without one). Relative paths are relative to the file."""
    cwd = Path(cwd or Path.cwd())
    if config_file is not None:
        path = Path(config_file)
        table = _read_toml(path)
        section = table.get("tool", {}).get("vgprscope") if "tool" in table else table
        return _from_table(section or {}, path)
    found = find_pyproject(cwd.resolve())
    if found is None:
        return GateConfig(baseline=cwd / DEFAULT_BASELINE)
    section = _read_toml(found).get("tool", {}).get("vgprscope", {})
    return _from_table(section, found)


def _read_toml(path: Path) -> dict[str, Any]:
    if tomllib is None:  # pragma: no cover - Python 3.10 without tomli
        raise UsageError(f"reading {path} needs Python 3.11 or the tomli package; pip install tomli")
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise UsageError(f"config file {path} does not exist") from None
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file {path} is not valid TOML: {exc}") from None


def _from_table(section: Mapping[str, Any], path: Path) -> GateConfig:
    where = f"{path} [tool.vgprscope]" if path.name == PYPROJECT else str(path)
    unknown = [k for k in section if k not in _KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(_KEYS)}")
    root = path.parent
    s = GateSet()
    if "variants" in section:
        s = replace(s, variants=tuple(_names(section["variants"], "variants", where)))
    if "archs" in section:
        s = replace(s, archs=tuple(dict.fromkeys(get_arch(a).name for a in _names(section["archs"], "archs", where))))
    if "kernel_dir" in section:
        s = replace(s, kernel_dir=root / _string(section["kernel_dir"], "kernel_dir", where))
    if "capture" in section:
        s = replace(s, capture=root / _string(section["capture"], "capture", where))
    if "configs" in section:
        configs = section["configs"]
        if not isinstance(configs, list) or not configs:
            raise UsageError(f"{where}: configs must be a non-empty list of tables like {{head_dim = 64}}")
        s = replace(s, configs=tuple(config_request(c, f"{where} configs[{i}]") for i, c in enumerate(configs)))
    baseline = root / _string(section.get("baseline", DEFAULT_BASELINE), "baseline", where)
    return GateConfig(s, baseline, RuleSet(_rules(section.get("rules", {}), where)), path)


def _names(value: Any, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"{where}: {key} must be a non-empty list of names; got {value!r}")
    return value


def _string(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{where}: {key} must be a path string; got {value!r}")
    return value


def _rules(table: Any, where: str) -> tuple[Rule, ...]:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: rules must be a table like {{vgpr_total = \"+4\"}}")
    out = []
    for target, spec in table.items():
        parts = target.split(":")
        if len(parts) > 2 or not all(parts):
            raise UsageError(f"{where}: rule key {target!r} is not allowed; allowed: METRIC or \"VARIANT:METRIC\"")
        out.append(parse_tolerance(parts[-1], spec, parts[0] if len(parts) == 2 else None))
    return tuple(out)


# ConfigRequest fields a config table may set, with the type each takes (bool is not an int here).
_INT_FIELDS = ("block_m", "block_n", "head_dim", "num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim",
               "kpack", "maxnreg")
_CONFIG_KEYS = (*_INT_FIELDS, "dtype", "causal", "extra", "shape")


def config_request(table: Any, where: str) -> ConfigRequest:
    """One ``configs`` table -> ConfigRequest, every value checked (a typo would otherwise compile the
    variant's default silently)."""
    if not isinstance(table, dict):
        raise UsageError(f"{where} must be a table like {{head_dim = 64}}; got {table!r}")
    unknown = [k for k in table if k not in _CONFIG_KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(_CONFIG_KEYS)}")
    for k in _INT_FIELDS:
        if k in table and (isinstance(table[k], bool) or not isinstance(table[k], int) or table[k] < 0):
            raise UsageError(f"{where}: {k} must be a non-negative integer; got {table[k]!r}")
    if "dtype" in table and table["dtype"] not in DTYPES:
        raise UsageError(f"{where}: dtype {table['dtype']!r} is not allowed; allowed: {', '.join(DTYPES)}")
    if "causal" in table and not isinstance(table["causal"], bool):
        raise UsageError(f"{where}: causal must be true or false; got {table['causal']!r}")
    if "extra" in table and not isinstance(table["extra"], dict):
        raise UsageError(f"{where}: extra must be a table of variant knobs like {{num_splits = 4}}")
    shape = table.get("shape")
    if shape is not None and not (isinstance(shape, list) and len(shape) in (4, 5)
                                  and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)
                                  and (len(shape) == 4 or shape[1] % shape[4] == 0)):
        raise UsageError(f"{where}: shape must be [batch, heads, seqlen_q, seqlen_k] or [..., kv_heads] of positive "
                         f"integers, kv_heads dividing heads; got {shape!r}")
    values = dict(table)
    if "extra" in values:
        values["extra"] = tuple(sorted(values["extra"].items()))
    if shape is not None:
        values["shape"] = tuple(shape)
    return ConfigRequest(**values)
