"""The register gate's run: the configuration (``gate.config``, pure data) with the caller's overrides, its
set compiled here (the gate package compiles nothing), the baseline read and the diff taken. Exit codes
stay the CLI's (``cli/check.py``); ``vgprscope.check`` returns the verdict."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import TritonUnavailableError
from .selection import selected_variants, set_sources

if TYPE_CHECKING:
    from .results import BaselineSaveResult
    from ..gate.baseline import Entry
    from ..gate.config import GateConfig, GateSet
    from ..gate.diff import GateResult


def load_config(config: Path | None = None, cwd: Path | None = None) -> GateConfig:
    """The gate's configuration (``gate.config.load_gate_config``), its sources' keys the registry's."""
    from ..gate.config import load_gate_config
    from .registry import SOURCES

    return load_gate_config(config, cwd, sources=tuple(SOURCES))


BUNDLED = "the bundled FlashAttention variants"


def bundled_note(cfg: GateConfig) -> str:
    """The header's line where the bundled variants are compiled because nothing else is configured."""
    why = (f"{shown(cfg.source)} [tool.vgprscope] names no capture, kernel_dir or variants"
           if cfg.source is not None else "no pyproject.toml with [tool.vgprscope] is here")
    return f"kernels: {BUNDLED}, as {why} (--capture, --kernel-dir or --variant choose others)"


def project_kernels(given: Mapping[str, Any], config: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """What a command compiles in the user's project, as ``check`` does: the kernels and archs the command
    line names, and for what it leaves out, the configuration's (``[tool.vgprscope]``: its capture,
    kernel_dir, variants and archs). ``given``: the library's keywords of the command line (``variant``,
    ``arch``, ``capture``, ``kernel_dir``, ...; None where not given). Returns the keywords to call with and,
    where the bundled variants are compiled because nothing names other kernels, the header's line saying so."""
    from .registry import SOURCES

    cfg = load_config(config)
    out = dict(given)
    named = any(given.get(k) for k in ("variant", *SOURCES))
    if not named:
        if "variants" in cfg.keys:
            out["variant"] = list(cfg.set.variants)
        for key, path in cfg.set.source_paths().items():
            out[key] = str(path)
    if not given.get("arch") and "archs" in cfg.keys:
        out["arch"] = list(cfg.set.archs)
    bundled = not any(out.get(k) for k in ("variant", *SOURCES))
    return out, bundled_note(cfg) if bundled else None


def settings(config: Path | None, baseline: Path | None, variant: Sequence[str] | None, arch: Sequence[str] | None,
             sources: Mapping[str, Path] | None = None, rules: Sequence[str] = (), allow_missing: bool = False,
             strict: bool = False) -> GateConfig:
    """The configuration with the caller's options on top (``sources``: a source's keyword -> its path),
    its set completed with the variants' default configs, and the config tables checked (before anything
    compiles)."""
    from dataclasses import replace

    from ..attention import defaults as attention_defaults

    cfg = load_config(config).with_overrides(variant, arch, baseline, rules or (), sources, allow_missing, strict)
    if not cfg.set.configs:
        cfg = replace(cfg, set=replace(cfg.set, configs=attention_defaults.DEFAULT_CONFIGS))
    attention_defaults.requests(cfg.set.configs, cfg.where)
    return cfg


def labels(gate_set: GateSet) -> list[str]:
    """The names rows of this set carry first: variant names and the captured kernels' labels."""
    return list(dict.fromkeys(n for source in set_sources(gate_set) for n in source.names()))


def described(gate_set: GateSet) -> dict[str, Any]:
    """The set as the baseline file records it: the variants and the config tables as given (where variants
    compile), the archs, and the file name of each other source."""
    from .registry import DEFAULT, SOURCES, uses_default

    paths = gate_set.source_paths()
    with_variants = uses_default(paths, gate_set.variants)
    out = {"variants": list(gate_set.variants) or (["all"] if with_variants else []), "archs": list(gate_set.archs),
           "configs": [dict(c) for c in gate_set.configs] if with_variants else []}
    return out | {k: p.name for k, p in paths.items() if SOURCES.get(k) is not DEFAULT}


def _backend_dir(backend: str) -> Path | None:
    """Where the installed Triton keeps a backend, found without importing triton (None: cannot tell)."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("triton")
    except importlib.metadata.PackageNotFoundError:
        return None
    from ..backends import backend_named

    return Path(str(dist.locate_file(f"triton/backends/{backend_named(backend).facts.triton_dir}")))


def _direction(baseline: str, other: str) -> str:
    """What comparing the baseline with another release is: an upgrade's preview only where it is newer."""
    from ..compile.toolchains import version_tuple

    try:
        newer = version_tuple(other.split("+")[0]) > version_tuple(baseline.split("+")[0])
    except ValueError:  # a development build's version: no order to tell
        return "a comparison of the two releases"
    return "a preview of the upgrade" if newer else "a look at the older release (a downgrade)"


def check_targets(archs: Sequence[str], toolchain: Any = None) -> None:
    """Every arch must be one the installed Triton can compile for (checked before compiling); under another
    toolchain, one Triton can target (that release says what it lacks in its rows)."""
    from ..core.archs import ARCHS, get_arch

    for name in archs:
        a = get_arch(name)
        if not a.triton_target:
            targets = [x.name for x in ARCHS.values() if x.triton_target]
            raise TritonUnavailableError(f"the installed Triton cannot target {a.name}; drop it from the "
                                         f"gate's archs (allowed: {', '.join(targets)})")
        backend = _backend_dir(a.backend) if toolchain is None or toolchain.kind == "installed" else None
        if backend is not None and not backend.exists():
            raise TritonUnavailableError(f"the installed Triton has no {a.backend} backend ({backend}); it "
                                         f"cannot target {a.name}")


def compile_set(cfg: GateConfig, jobs: int | None = None, use_cache: bool = True,
                on_progress: Callable[[int, int], None] | None = None,
                cache_dir: Path | str | None = None, toolchain: Any = None) -> list[Entry]:
    """The set's entries: the sweep the configuration describes, run here (by ``toolchain``, a
    ``compile.toolchains.Toolchain``, when given)."""
    from ..attention import defaults as attention_defaults
    from ..gate.baseline import entries_of
    from .registry import DEFAULT, SOURCES
    from .tasks import Selection, sweep

    s = cfg.set
    sel = Selection.of(list(s.variants), list(s.archs), attention_defaults.requests(s.configs, cfg.where),
                       s.source_paths(), overrides=False, toolchains=(toolchain,) if toolchain is not None else ())
    # the gate's set is its own: no grid guard (its size is the configuration's)
    entries = entries_of(sweep(sel, jobs=jobs, use_cache=use_cache, cache_dir=cache_dir, yes=True,
                               on_progress=on_progress))
    for name, archs in own_archs(s):  # a variant on the archs it is written for, beside the set's
        default = {k: v for k, v in s.source_paths().items() if SOURCES.get(k) is DEFAULT}
        own = Selection.of([name], archs, attention_defaults.requests(s.configs, cfg.where), default,
                           overrides=False, toolchains=sel.toolchains)
        entries += entries_of(sweep(own, jobs=jobs, use_cache=use_cache, cache_dir=cache_dir, yes=True,
                                    on_progress=on_progress))
    return entries


def own_archs(gate_set: GateSet) -> list[tuple[str, list[str]]]:
    """(variant, archs): the archs a variant of the set declares it is written for (VARIANT['archs']) that the
    set's archs lack; none when the set has no variants or the command line named the archs."""
    from .registry import uses_default

    if not (gate_set.own_archs and uses_default(gate_set.source_paths(), gate_set.variants)):
        return []
    out = []
    for v in selected_variants(gate_set):
        extra = [a for a in v.archs if a not in gate_set.archs]
        if extra:
            out.append((v.name, extra))
    return out


def part(cfg: GateConfig, variant: Sequence[str] | None, arch: Sequence[str] | None) -> Callable[[Entry], bool] | None:
    """With variants or archs named, a run covers part of the set: which baseline entries belong to that
    part (the others are kept by `save` and are not judged by `check`). None: the whole set."""
    if not (variant or arch):
        return None
    variants = {v.name for v in selected_variants(cfg.set)} if variant else None
    archs = set(cfg.set.archs) if arch else None
    return lambda e: (variants is None or e.variant in variants) and (archs is None or e.arch in archs)


def run_check(config: Path | None, baseline: Path | None, variant: Sequence[str] | None, arch: Sequence[str] | None,
              rule: Sequence[str] | None, fail_on_change: bool, allow_version_change: bool,
              sources: Mapping[str, Path] | None, jobs: int | None, use_cache: bool, allow_missing: bool = False,
              on_progress: Callable[[int, int], None] | None = None,
              cache_dir: Path | str | None = None, *, toolchain: Any = None,
              preview: bool = False, strict: bool = False) -> tuple[GateResult, GateConfig, list[Entry]]:
    """The gate: the configuration, the baseline (refused when it cannot be compared), the set compiled and
    compared entry by entry. ``toolchain``: the Triton (and settings) that compiles the set; ``preview``: it
    was named (``--triton``), so the baseline's other Triton version is the point, a note and no error."""
    from ..compile.engine import triton_version
    from ..gate.baseline import check_triton_version, load_baseline
    from ..gate.diff import judge

    cfg = settings(config, baseline, variant, arch, sources, rule or (), allow_missing, strict)
    base = load_baseline(cfg.baseline)
    named = bool(variant) or bool(cfg.set.variants) or bool(cfg.set.sources)
    tv = toolchain.version if toolchain is not None else triton_version()
    if preview and base.triton_version != tv:
        note: str | None = (f"Triton {tv} (--triton) against a baseline compiled with Triton "
                            f"{base.triton_version}: {_direction(base.triton_version, tv)}")
    else:
        note = check_triton_version(base, tv, allow_version_change)
    check_targets(cfg.set.archs, toolchain)
    cfg.rules.check_variants([*labels(cfg.set), *(e.variant for e in base.entries.values())])
    entries = compile_set(cfg, jobs, use_cache, on_progress, cache_dir, toolchain)
    notes = [n for n in (note, None if named else bundled_note(cfg)) if n]
    result = judge(base, entries, cfg.rules, in_scope=part(cfg, variant, arch), accept_missing=cfg.accepts_missing,
                     fail_on_change=fail_on_change, current_triton=tv, notes=notes)
    return result, cfg, entries


def save(config: Path | None, baseline: Path | None, variant: Sequence[str] | None, arch: Sequence[str] | None,
         sources: Mapping[str, Path] | None, jobs: int | None, use_cache: bool,
         on_progress: Callable[[int, int], None] | None = None, cache_dir: Path | str | None = None, *,
         toolchain: Any = None) -> BaselineSaveResult:
    """``baseline save``: the set compiled (by ``toolchain`` when given) and written to the baseline file,
    replacing the entries of the part named (``variant`` / ``arch``) and keeping the rest. A set with no
    entry is a UsageError; a set of failures only is not written (``written`` None)."""
    from ..compile.engine import triton_version
    from ..core.errors import UsageError
    from ..core.fsutil import check_writable
    from ..gate.baseline import Baseline, save_baseline
    from .results import BaselineSaveResult

    cfg = settings(config, baseline, variant, arch, sources)
    check_writable(cfg.baseline)  # before minutes of compiling, not after
    check_targets(cfg.set.archs, toolchain)
    tv = toolchain.version if toolchain is not None else triton_version()
    entries = compile_set(cfg, jobs, use_cache, on_progress, cache_dir, toolchain)
    if not entries:
        raise UsageError(f"the gate's set is empty (no variant, kernel or launch to compile): a baseline of nothing "
                         f"gates nothing; {shown(cfg.baseline)} was not written")
    if all(e.status != "ok" for e in entries):  # a baseline of failures gates nothing
        return BaselineSaveResult(tuple(entries), None, cfg.baseline, tv, cfg)
    description = described(cfg.set)
    if toolchain is not None and toolchain.settings:  # what the numbers were compiled with
        description |= {"settings": dict(toolchain.settings)}
    new = Baseline.of(entries, tv, description)
    written = save_baseline(cfg.baseline, new, replaces=part(cfg, variant, arch))
    return BaselineSaveResult(tuple(entries), written, cfg.baseline, tv, cfg)


def shown(path: Path) -> str:
    """A path as the messages show it: relative to the working directory when inside it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
