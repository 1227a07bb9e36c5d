"""The gate's configuration, as pure data: which set `baseline save` and `check` compile, where the
baseline lives, the rules, and which missing entries are accepted. Read from ``[tool.vgprscope]`` in the
nearest ``pyproject.toml`` or from a file given by ``--config`` (the same table, or the same keys at the top
level of a ``vgprscope.toml``). Nothing here compiles or loads a kernel: the caller turns the set into
compile jobs (``vgprscope.library.gate``) and checks the config tables with the variants' own rules
(``vgprscope.flashattn.defaults``, which also hands the caller the default set). The sources' keys
(``kernel_dir``, ``capture``, ...) are the caller's to name (``sources=``: the library's registry of sources,
``vgprscope.library.registry``); each is a path relative to the file.

```toml
[tool.vgprscope]
baseline = "vgprscope-baseline.json"   # relative to the file this is read from
variants = ["all"]                     # or names
archs = ["gfx90a", "gfx942", "sm_80"]
kernel_dir = "kernels"                 # optional: your own variants instead of the bundled ones (a source)
capture = "vgprscope-capture.json"     # optional: your own kernels as `vgprscope capture` recorded them (a source)
configs = [{}, {block_m = 64}]        # the variants' config requests; {} = each variant's defaults
allow_missing = ["old_kernel/*"]       # optional: missing baseline entries that do not fail (true: all)
strict = false                         # optional: true gives every count tolerance 0 (as --strict)
source_url = "https://github.com/ORG/REPO/blob/{commit}/{path}#L{line}"   # optional: HTML reports link there

[tool.vgprscope.rules]
registers = "+4"                       # vgpr_total on AMD, regs on NVIDIA
"split-k:vgpr_total" = "+8"
occupancy = "-0"
```
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.archs import DEFAULT_ARCHS, get_arch
from ..core.errors import UsageError
from ..core.fsutil import why_not
from .rules import Rule, RuleSet, parse_rule, parse_tolerance

if TYPE_CHECKING:  # the baseline's reader is loaded where a baseline is read: not by analyze's project lookup
    from .baseline import Entry

# the baseline's file, relative to the configuration's file (or the working directory without one)
DEFAULT_BASELINE = "vgprscope-baseline.json"


def _tomllib() -> Any:
    """Python's TOML reader (tomli before 3.11), loaded where a file is read; None where there is none."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:  # pragma: no cover - Python 3.10
        import tomli

        return tomli
    except ModuleNotFoundError:  # pragma: no cover
        return None

PYPROJECT = "pyproject.toml"
_KEYS = ("baseline", "variants", "archs", "configs", "rules", "allow_missing", "strict", "source_url")


def _keys(sources: Sequence[str]) -> tuple[str, ...]:
    """Every key a file may hold: the gate's own, the sources' after the archs."""
    return (*_KEYS[:3], *sources, *_KEYS[3:])


@dataclass(frozen=True)
class GateSet:
    """What the gate compiles: variants x archs x configs, and its sources' files. Empty ``variants``
    means every variant; empty ``configs`` means the variants' default set (the caller's to supply)."""

    variants: tuple[str, ...] = ()
    archs: tuple[str, ...] = DEFAULT_ARCHS
    # the variants' config requests as tables ({"block_m": 64}; {} = each variant's defaults), in order
    configs: tuple[Mapping[str, Any], ...] = ()
    # (key, path) of each source given (kernel_dir = "kernels", capture = "vgprscope-capture.json", ...)
    sources: tuple[tuple[str, Path], ...] = ()
    # each variant also on the archs it declares it is written for (VARIANT['archs']: ws-regalloc on sm_90),
    # beside ``archs``; off when the command line names the archs
    own_archs: bool = True

    def source_paths(self) -> dict[str, Path]:
        return dict(self.sources)


@dataclass(frozen=True)
class GateConfig:
    set: GateSet = GateSet()
    baseline: Path = Path(DEFAULT_BASELINE)
    rules: RuleSet = RuleSet()
    # fnmatch patterns over entry keys (label/kernel/arch/slot): a missing entry matching one does not fail
    allow_missing: tuple[str, ...] = ()
    source: Path | None = field(default=None, compare=False)  # the file it was read from
    # where the HTML report links a kernel's file and line: {path}, {line}, {commit} filled in ("": the file)
    source_url: str = ""
    keys: tuple[str, ...] = field(default=(), compare=False)  # the keys that file sets (the rest are defaults)

    @property
    def where(self) -> str:
        """How messages name the configuration."""
        if self.source is None:
            return "the default configuration"
        return f"{self.source} [tool.vgprscope]" if self.source.name == PYPROJECT else str(self.source)

    def accepts_missing(self, entry: Entry) -> bool:
        return any(fnmatch.fnmatchcase(entry.key, p) for p in self.allow_missing)

    def with_overrides(self, variants: Sequence[str] | None = None, archs: Sequence[str] | None = None,
                       baseline: Path | None = None, rules: Sequence[str] = (),
                       sources: Mapping[str, Path] | None = None, allow_missing: bool = False,
                       strict: bool = False) -> GateConfig:
        """Command-line options on top of the file: they replace its set parts (a source's path replaces
        the file's for that key) and add rules after its own; ``strict`` turns the file's default rules
        strict (a file's ``strict = true`` stays)."""
        s = self.set
        s = replace(s, variants=_split(variants)) if variants else s
        s = replace(s, archs=tuple(dict.fromkeys(get_arch(a).name for a in _split(archs))),
                    own_archs=False) if archs else s
        if sources:
            s = replace(s, sources=tuple((s.source_paths() | dict(sources)).items()))
        extra = tuple(parse_rule(r) for r in rules)
        ruleset = RuleSet(self.rules.rules + extra, self.rules.strict or strict)
        return replace(self, set=s, baseline=baseline or self.baseline, rules=ruleset,
                       allow_missing=self.allow_missing + (("*",) if allow_missing else ()))


def _split(items: Sequence[str]) -> tuple[str, ...]:
    """Repeated and comma-separated option values, in order, each once."""
    return tuple(dict.fromkeys(n.strip() for item in items for n in item.split(",") if n.strip()))


def find_pyproject(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if (d / PYPROJECT).is_file():
            return d / PYPROJECT
    return None


def load_gate_config(config_file: Path | None = None, cwd: Path | None = None, *,
                     sources: Sequence[str] = ()) -> GateConfig:
    """The configuration from ``config_file``, else from the nearest pyproject.toml above ``cwd``, else the
    defaults (every bundled variant on gfx90a, gfx942, sm_80, the variants' default configs;
    ``vgprscope-baseline.json`` beside the pyproject.toml, or in ``cwd`` without one). ``sources``: the keys
    naming a source's path (``vgprscope.library.gate.load_config`` gives the registry's). Relative paths are
    relative to the file. A file that cannot be read or used is one UsageError line."""
    cwd = Path(cwd or Path.cwd())
    if config_file is not None:
        path = Path(config_file)
        table = _read_toml(path)
        if "tool" in table:
            return _from_table(_section(table, path, sources), path, sources)
        return _from_table(table, path, sources)
    found = find_pyproject(cwd.resolve())
    if found is None:
        return GateConfig(baseline=cwd / DEFAULT_BASELINE)
    return _from_table(_section(_read_toml(found), found, sources), found, sources)


def _section(table: dict[str, Any], path: Path, sources: Sequence[str]) -> Mapping[str, Any]:
    """``[tool.vgprscope]`` of a parsed file ({} when absent); a ``tool`` or ``tool.vgprscope`` that is
    not a table is an error (it would otherwise be read as no configuration, or crash)."""
    tool = table.get("tool", {})
    if not isinstance(tool, dict):
        raise UsageError(f"{path}: tool must be a table ([tool.vgprscope] ...); got {tool!r}")
    section = tool.get("vgprscope", {})
    if not isinstance(section, dict):
        raise UsageError(f"{path}: tool.vgprscope must be a table ([tool.vgprscope] with keys "
                         f"{', '.join(_keys(sources))}); got {section!r}")
    return section


def _read_toml(path: Path) -> dict[str, Any]:
    tomllib = _tomllib()
    if tomllib is None:  # pragma: no cover - Python 3.10 without tomli
        raise UsageError(f"reading {path} needs Python 3.11 or the tomli package; pip install tomli")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"config file {path} does not exist") from None
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {why_not(exc)}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"config file {path} is not UTF-8 text (TOML must be): byte {exc.start} "
                         f"({data[exc.start]:#04x}) {exc.reason}") from None
    try:
        return dict(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file {path} is not valid TOML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise UsageError(f"config file {path} is nested too deeply to read (arrays or tables within each other "
                         f"thousands of levels down); a configuration is a few levels deep") from None


def _from_table(section: Mapping[str, Any], path: Path, sources: Sequence[str]) -> GateConfig:
    where = f"{path} [tool.vgprscope]" if path.name == PYPROJECT else str(path)
    keys = _keys(sources)
    unknown = [k for k in section if k not in keys]
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(keys)}")
    root = path.parent
    s = GateSet()
    if "variants" in section:
        s = replace(s, variants=tuple(_names(section["variants"], "variants", where)))
    if "archs" in section:
        s = replace(s, archs=tuple(dict.fromkeys(get_arch(a).name for a in _names(section["archs"], "archs", where))))
    s = replace(s, sources=tuple((k, root / _string(section[k], k, where)) for k in sources if k in section))
    if "configs" in section:
        configs = section["configs"]
        if not isinstance(configs, list) or not configs or not all(isinstance(c, dict) for c in configs):
            raise UsageError(f"{where}: configs must be a non-empty list of tables like {{block_m = 64}}; "
                             f"got {configs!r}")
        s = replace(s, configs=tuple(configs))
    baseline = root / _string(section.get("baseline", DEFAULT_BASELINE), "baseline", where)
    strict = section.get("strict", False)
    if not isinstance(strict, bool):
        raise UsageError(f"{where}: strict must be true or false; got {strict!r}")
    return GateConfig(s, baseline, RuleSet(_rules(section.get("rules", {}), where), strict),
                      _allow_missing(section.get("allow_missing", False), where), path,
                      _source_url(section.get("source_url", ""), where), tuple(section))


def _source_url(value: Any, where: str) -> str:
    """A URL template with ``{path}`` (and optionally ``{line}``, ``{commit}``): nothing else in braces."""
    import string

    if not isinstance(value, str):
        raise UsageError(f"{where}: source_url must be a string like "
                         "\"https://github.com/ORG/REPO/blob/{{commit}}/{{path}}#L{{line}}\"; got {value!r}")
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
    except ValueError as exc:
        raise UsageError(f"{where}: source_url {value!r} is not a template: {exc}") from None
    if value and ("path" not in names or names - {"path", "line", "commit"}):
        raise UsageError(f"{where}: source_url must name {{path}} and may name {{line}} and {{commit}}, nothing "
                         f"else; got {value!r}")
    return value


def _names(value: Any, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"{where}: {key} must be a non-empty list of names; got {value!r}")
    return value


def _string(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{where}: {key} must be a path string; got {value!r}")
    return value


def _allow_missing(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, bool):
        return ("*",) if value else ()
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise UsageError(f"{where}: allow_missing must be true, false or a list of entry patterns like "
                     f"\"old_kernel/*\" (VARIANT/KERNEL/ARCH/SLOT); got {value!r}")


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


def source_url_of(config_file: Path | None = None, cwd: Path | None = None) -> str:
    """``source_url`` of ``config_file`` or the nearest pyproject.toml's ``[tool.vgprscope]`` ("" where none):
    the one key an HTML report reads, whatever else the table holds."""
    path = Path(config_file) if config_file is not None else find_pyproject(Path(cwd or Path.cwd()).resolve())
    if path is None:
        return ""
    table = _read_toml(path)
    section = table.get("tool", {}).get("vgprscope", {}) if isinstance(table.get("tool"), dict) else table
    if not isinstance(section, dict):
        return ""
    return _source_url(section.get("source_url", ""), str(path))
