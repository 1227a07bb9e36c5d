"""The register gate's run: the configuration (``gate.config``, pure data) with the caller's overrides, resolved
once into a frozen ``GateRun`` (its sources read, the part of the set named, what compiles it); its set
compiled here (the gate package compiles nothing), the baseline read and the diff taken. ``vgprscope.check``
returns the verdict, its exit code ``core.exit_codes``'."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import TritonUnavailableError
from ..core.paths import shown_path
from ..flashattn.config import ConfigRequest
from ..flashattn.source import VariantSource
from ..flashattn.variants import Variant
from ..sources.base import Source

if TYPE_CHECKING:
    from ..gate.baseline import Entry
    from ..gate.config import GateConfig
    from ..gate.diff import GateResult
    from .results import BaselineSaveResult
    from .tasks import Selection


def load_config(config: Path | None = None, cwd: Path | None = None) -> GateConfig:
    """The gate's configuration (``gate.config.load_gate_config``), its sources' keys the registry's."""
    from ..gate.config import load_gate_config
    from .registry import SOURCES

    return load_gate_config(config, cwd, sources=tuple(SOURCES))


BUNDLED = "the bundled FlashAttention variants"


def bundled_note(cfg: GateConfig) -> str:
    """The header's line where the bundled variants are compiled because nothing else is configured."""
    why = (f"{shown_path(cfg.source)} [tool.vgprscope] names no capture, kernel_dir or variants"
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


@dataclass(frozen=True)
class GateRun:
    """One run of the gate, resolved once before anything compiles (``GateRun.of``): the configuration with
    the caller's options on top, its sources read (``registry.read``, once: the rules' names, the sweep, the
    baseline's description and the kernels' files all ask these), the part of the set named, and what
    compiles it."""

    config: GateConfig
    sources: tuple[Source, ...]
    requests: tuple[ConfigRequest, ...]  # the set's config tables as the variants' requests
    # a part of the set named on the command line (variants, archs): which baseline entries the run covers
    part_variants: frozenset[str] | None = None
    part_archs: frozenset[str] | None = None
    named: bool = False  # the kernels were named (by the caller or the configuration): no bundled note
    toolchain: Any = None  # a ``compile.toolchains.Toolchain`` compiling the set (None: the installed Triton)
    preview: bool = False  # ``toolchain`` named (--triton): the baseline's other Triton version is the point
    fail_on_change: bool = False
    allow_version_change: bool = False
    jobs: int | None = None
    use_cache: bool = True
    cache_dir: Path | str | None = None
    on_progress: Callable[[int, int], None] | None = field(default=None, compare=False)

    @classmethod
    def of(cls, *, config: Path | None = None, baseline: Path | None = None, variant: Sequence[str] | None = None,
           arch: Sequence[str] | None = None, rule: Sequence[str] = (), sources: Mapping[str, Path] | None = None,
           allow_missing: bool = False, strict: bool = False, **how: Any) -> GateRun:
        """The configuration (``config``, default the nearest pyproject.toml's [tool.vgprscope]) with the
        caller's options on top (``sources``: a source's keyword -> its path), its set completed with the
        variants' default configs and checked (before anything compiles), and its sources read. ``how``:
        the other fields (``toolchain``, ``jobs``, ...)."""
        cfg = load_config(config).with_overrides(variant, arch, baseline, rule or (), sources, allow_missing, strict)
        run = cls.from_config(cfg, named=bool(variant), **how)
        if arch:
            run = replace(run, part_archs=frozenset(run.config.set.archs))
        return replace(run, part_variants=frozenset(v.name for v in run.variants())) if variant else run

    @classmethod
    def from_config(cls, cfg: GateConfig, named: bool = False, **how: Any) -> GateRun:
        """A configuration's whole set: its configs (the variants' default ones where it has none) checked as
        requests, and its sources read. ``named``: the caller named the kernels."""
        from ..flashattn import defaults as attention_defaults
        from . import registry

        if not cfg.set.configs:
            cfg = replace(cfg, set=replace(cfg.set, configs=attention_defaults.DEFAULT_CONFIGS))
        requests = tuple(attention_defaults.requests(cfg.set.configs, cfg.where))
        read = registry.read(cfg.set.source_paths(), cfg.set.variants, requests, launch_grid=False)
        return cls(cfg, read, requests, named=named or bool(cfg.set.variants) or bool(cfg.set.sources), **how)

    def variants(self) -> list[Variant]:
        """The variants the set compiles (every variant of the kernel directory when none is named; none where
        a source is given alone)."""
        return next((s.selected() for s in self.sources if isinstance(s, VariantSource)), [])

    def labels(self) -> list[str]:
        """The names rows of this set carry first: variant names and the captured kernels' labels."""
        return list(dict.fromkeys(n for source in self.sources for n in source.names()))

    def files(self) -> dict[tuple[str, str], str]:
        """(label, kernel) -> the file that defines the kernel, the first source's where two say."""
        out: dict[tuple[str, str], str] = {}
        for source in self.sources:
            for key, file in source.files().items():
                out.setdefault(key, file)
        return out

    def in_scope(self) -> Callable[[Entry], bool] | None:
        """With variants or archs named, a run covers part of the set: which baseline entries belong to that
        part (the others are kept by `save` and are not judged by `check`). None: the whole set."""
        if self.part_variants is None and self.part_archs is None:
            return None
        variants, archs = self.part_variants, self.part_archs
        return lambda e: (variants is None or e.variant in variants) and (archs is None or e.arch in archs)

    def triton_version(self) -> str:
        """The version of the Triton compiling the set."""
        from ..compile.engine import triton_version

        return self.toolchain.version if self.toolchain is not None else triton_version()

    def selection(self) -> Selection:
        """What the sweep compiles: the set's sources on its archs for its requests, each variant also on the
        archs it declares it is written for (VARIANT['archs']: ws-regalloc on sm_90) unless the command line
        named the archs."""
        from .tasks import Selection

        s = self.config.set
        return Selection(self.sources, tuple(s.archs), self.requests,
                         (self.toolchain,) if self.toolchain is not None else (), own_archs=s.own_archs)

    def described(self) -> dict[str, Any]:
        """The set as the baseline file records it: the variants and the config tables as given (where variants
        compile), the archs, and the file name of each other source."""
        from .registry import DEFAULT

        s = self.config.set
        with_variants = any(isinstance(src, VariantSource) for src in self.sources)
        out = {"variants": list(s.variants) or (["all"] if with_variants else []), "archs": list(s.archs),
               "configs": [dict(c) for c in s.configs] if with_variants else []}
        return out | {k: p.name for k, p in s.source_paths().items() if k != DEFAULT}


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


def compile_set(run: GateRun) -> list[Entry]:
    """The set's entries: the sweep the run describes, in one engine (the gate's set is its own: no grid
    guard, its size is the configuration's)."""
    from ..gate.baseline import entries_of
    from .tasks import sweep

    return entries_of(sweep(run.selection(), jobs=run.jobs, use_cache=run.use_cache, cache_dir=run.cache_dir,
                            yes=True, on_progress=run.on_progress))


def run_check(run: GateRun) -> tuple[GateResult, list[Entry]]:
    """The gate: the baseline (refused when it cannot be compared), the set compiled and compared entry by
    entry. With ``run.preview`` (``--triton``), the baseline's other Triton version is the point: a note, no
    error."""
    from ..gate.baseline import check_triton_version, load_baseline
    from ..gate.diff import judge

    cfg = run.config
    base = load_baseline(cfg.baseline)
    tv = run.triton_version()
    if run.preview and base.triton_version != tv:
        note: str | None = (f"Triton {tv} (--triton) against a baseline compiled with Triton "
                            f"{base.triton_version}: {_direction(base.triton_version, tv)}")
    else:
        note = check_triton_version(base, tv, run.allow_version_change)
    check_targets(cfg.set.archs, run.toolchain)
    cfg.rules.check_variants([*run.labels(), *(e.variant for e in base.entries.values())])
    entries = compile_set(run)
    notes = [n for n in (note, None if run.named else bundled_note(cfg)) if n]
    result = judge(base, entries, cfg.rules, in_scope=run.in_scope(), accept_missing=cfg.accepts_missing,
                   fail_on_change=run.fail_on_change, current_triton=tv, notes=notes)
    return result, entries


def save(run: GateRun) -> BaselineSaveResult:
    """``baseline save``: the set compiled (by ``run.toolchain`` when given) and written to the baseline file,
    replacing the entries of the part named (``variant`` / ``arch``) and keeping the rest. A set with no
    entry is a UsageError; a set of failures only is not written (``written`` None)."""
    from ..core.errors import UsageError
    from ..core.fsutil import check_writable
    from ..gate.baseline import Baseline, save_baseline
    from .results import BaselineSaveResult

    cfg = run.config
    check_writable(cfg.baseline)  # before minutes of compiling, not after
    check_targets(cfg.set.archs, run.toolchain)
    tv = run.triton_version()
    entries = compile_set(run)
    if not entries:
        raise UsageError(f"the gate's set is empty (no variant, kernel or launch to compile): a baseline of nothing "
                         f"gates nothing; {shown_path(cfg.baseline)} was not written")
    if all(e.status != "ok" for e in entries):  # a baseline of failures gates nothing
        return BaselineSaveResult(tuple(entries), None, cfg.baseline, tv, cfg)
    description = run.described()
    if run.toolchain is not None and run.toolchain.settings:  # what the numbers were compiled with
        description |= {"settings": dict(run.toolchain.settings)}
    new = Baseline.of(entries, tv, description)
    written = save_baseline(cfg.baseline, new, replaces=run.in_scope())
    return BaselineSaveResult(tuple(entries), written, cfg.baseline, tv, cfg)
