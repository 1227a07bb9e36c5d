"""``vgprscope check`` and ``vgprscope baseline save``: the CI register-regression gate.

The gate package (vgprscope.gate) holds the configuration as data, the baseline file, the diff and the
report; this module compiles the set (the sweep), hands the records over, and owns the exit codes of
``check``: 0 the gate passed, 1 it failed (a regression, a baseline entry the run no longer produces
unless accepted, or any change with ``--fail-on-change``), 2 nothing could be compared (no, unreadable,
corrupt or empty baseline, an empty set, schema or Triton version mismatch, an arch the installed Triton
cannot target) with a one-line reason.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import TritonUnavailableError, UsageError, VgprscopeError
from .app import app
from .capture import CaptureOpt
from .common import ArchOpt, JobsOpt, KernelDirOpt, NoCacheOpt, OutputOpt, VariantOpt, WideOpt, emit, err, handles_errors

baseline_app = typer.Typer(help="Save the register baseline that `vgprscope check` compares against.",
                           no_args_is_help=True)
app.add_typer(baseline_app, name="baseline")


class GateFormat(str, Enum):
    table = "table"
    md = "md"
    json = "json"
    benchmark_json = "benchmark-json"  # github-action-benchmark's customSmallerIsBetter


# Formats for people: only these add to the GitHub job summary and print workflow commands; the others
# are data for a program and stay pure.
FOR_PEOPLE = (GateFormat.table, GateFormat.md)


ConfigOpt = Annotated[Optional[Path], typer.Option(
    "--config", help="TOML file with the gate's settings (\\[tool.vgprscope] or top-level keys) "
    "\\[default: the nearest pyproject.toml]")]
BaselineOpt = Annotated[Optional[Path], typer.Option(
    "--baseline", "-b", help="Baseline file \\[default: vgprscope-baseline.json beside the config]")]
RuleOpt = Annotated[Optional[list[str]], typer.Option(
    "--rule", "-r", help="\\[VARIANT:]METRIC:TOLERANCE, repeatable: vgpr_total:+4, split-k:vgpr_total:+8, "
    "registers:+4 (vgpr_total on AMD, regs on NVIDIA), scratch_bytes:+10%, occupancy:-1, arch_vgpr:exact, sgpr:off")]
AllowMissingOpt = Annotated[bool, typer.Option(
    "--allow-missing", help="Baseline entries this run does not produce do not fail (they are still listed); "
    "or allow_missing = true / [\"PATTERN\", ...] in \\[tool.vgprscope]")]


def _on_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


# ---- the set: from configuration data to what is compiled ----------------------------------------------

def _settings(config, baseline, variant, arch, kernel_dir, rules=(), capture=None, allow_missing=False):
    """The configuration with the command line on top, its set completed with the variants' default
    configs, and the config tables checked (exit 2 before anything compiles)."""
    from dataclasses import replace

    from ..attention import gate as attention_gate
    from ..gate.config import load_gate_config

    cfg = load_gate_config(config).with_overrides(variant, arch, kernel_dir, baseline, rules or (), capture,
                                                  allow_missing)
    if not cfg.set.configs:
        cfg = replace(cfg, set=replace(cfg.set, configs=attention_gate.DEFAULT_CONFIGS))
    attention_gate.requests(cfg.set.configs, cfg.where)
    return cfg


def _selected_variants(gate_set):
    """The variants the set compiles (every variant of the kernel directory when none is named)."""
    from ..attention import loader
    from ..attention.variants import select_variants

    if not gate_set.with_variants:
        return []
    directory = gate_set.kernel_dir.resolve() if gate_set.kernel_dir else loader.BUNDLED_DIR
    return select_variants(list(gate_set.variants), directory)


def _labels(gate_set) -> list[str]:
    """The names rows of this set carry first: variant names and the captured kernels' labels."""
    names = [v.name for v in _selected_variants(gate_set)]
    if gate_set.capture is not None:
        from ..capture.model import load_capture

        names += [k.label for k in load_capture(gate_set.capture).kernels]
    return list(dict.fromkeys(names))


def _backend_dir(backend: str) -> Path | None:
    """Where the installed Triton keeps a backend, found without importing triton (None: cannot tell)."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("triton")
    except importlib.metadata.PackageNotFoundError:
        return None
    from ..backends import backend_named

    return Path(dist.locate_file(f"triton/backends/{backend_named(backend).triton_dir}"))


def _check_targets(archs) -> None:
    """Every arch must be one the installed Triton can compile for (checked before compiling)."""
    from ..archs import ARCHS, get_arch

    for name in archs:
        a = get_arch(name)
        if not a.triton_target:
            targets = [x.name for x in ARCHS.values() if x.triton_target]
            raise TritonUnavailableError(f"the installed Triton cannot target {a.name}; drop it from the "
                                         f"gate's archs (allowed: {', '.join(targets)})")
        backend = _backend_dir(a.backend)
        if backend is not None and not backend.exists():
            raise TritonUnavailableError(f"the installed Triton has no {a.backend} backend ({backend}); it "
                                         f"cannot target {a.name}")


def _compile(cfg, jobs, no_cache):
    """The set's entries: the sweep the configuration describes, run here (the gate compiles nothing)."""
    from ..attention import gate as attention_gate
    from ..gate.baseline import entries_of
    from ..sweep import run_sweep
    from .progress import compile_progress

    s = cfg.set
    with compile_progress() as progress:
        records = run_sweep(list(s.variants), list(s.archs), attention_gate.requests(s.configs, cfg.where),
                            jobs=jobs, use_cache=not no_cache, kernel_dir=s.kernel_dir, on_progress=progress,
                            capture=s.capture)
    return entries_of(records)


def _legacy(cfg):
    """How a schema-1 baseline's entries get their slots: as the sources derive Record.slot."""
    from ..attention import gate as attention_gate
    from ..gate.baseline import LegacySlots
    from ..sources.capture import launch_slot

    def slot_of_launch(config, ordinal: int) -> str:
        from types import SimpleNamespace

        # launch_slot reads a launch's autotune pick and argument types: the config holds both
        at = config.autotune
        x = SimpleNamespace(args=[{"name": a.name, "type": a.type} for a in config.args], autotune=None if at is None
                            else {"index": at.index, "count": at.count, "declared": at.declared, "key": list(at.key)})
        return launch_slot(x, ordinal)  # type: ignore[arg-type]

    captured = {}
    if cfg.set.capture is not None:
        from ..sources.capture import launch_config, load_capture

        # each launch's slot as the capture source numbers them (the ordinal among a kernel's launches of
        # the same argument types), by its config's hash
        seen: dict[tuple, int] = {}
        for x in load_capture(cfg.set.capture).launches:
            ordinal = 0
            if not x.autotune:
                group = (x.kernel.key(), tuple(a["type"] for a in x.args))
                ordinal = seen[group] = seen.get(group, -1) + 1
            captured[(x.kernel.label, x.kernel.qualname, launch_config(x).key())] = launch_slot(x, ordinal)
    return LegacySlots(attention_gate.variant_slot, slot_of_launch, captured)


def _variant_files(cfg) -> dict[str, str]:
    """variant -> its kernel file relative to the working directory, for annotations on the PR diff."""
    cwd = Path.cwd().resolve()
    out = {}
    for v in _selected_variants(cfg.set):
        try:
            out[v.name] = v.file.resolve().relative_to(cwd).as_posix()
        except ValueError:  # outside the repository: an annotation without a file
            pass
    return out


def _part(cfg, variant, arch):
    """With --variant / --arch a run covers part of the set: which baseline entries belong to that part
    (the others are kept by `save` and are not judged by `check`). None: the whole set."""
    if not (variant or arch):
        return None
    variants = {v.name for v in _selected_variants(cfg.set)} if variant else None
    archs = set(cfg.set.archs) if arch else None
    return lambda e: (variants is None or e.variant in variants) and (archs is None or e.arch in archs)


def _shown(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


# ---- commands -----------------------------------------------------------------------------------------

@baseline_app.command("save")
@handles_errors
def save(
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    variant: VariantOpt = None,
    arch: ArchOpt = None,
    kernel_dir: KernelDirOpt = None,
    jobs: JobsOpt = None,
    no_cache: NoCacheOpt = False,
    capture: CaptureOpt = None,
) -> None:
    """Compile the gate's set and write the baseline `vgprscope check` compares against (atomically).

    With --variant or --arch, only those entries are replaced; the rest of an existing baseline is kept.

    Saves of one file wait for each other, so two saves of different parts at once both land.
    """
    from ..compile.engine import triton_version
    from ..fsutil import check_writable
    from ..gate.baseline import Baseline, save_baseline

    cfg = _settings(config, baseline, variant, arch, kernel_dir, capture=capture)
    check_writable(cfg.baseline)  # before minutes of compiling, not after
    _check_targets(cfg.set.archs)
    tv = triton_version()
    entries = _compile(cfg, jobs, no_cache)
    if not entries:
        raise UsageError(f"the gate's set is empty (no variant, kernel or launch to compile): a baseline of nothing "
                         f"gates nothing; {_shown(cfg.baseline)} was not written")
    if all(e.status != "ok" for e in entries):  # a baseline of failures gates nothing
        from .common import nothing_compiled

        err(nothing_compiled([e.status for e in entries]) + f"; {_shown(cfg.baseline)} was not written")
        raise typer.Exit(1)
    new = Baseline.of(entries, tv, cfg.set.describe())
    written = save_baseline(cfg.baseline, new, replaces=_part(cfg, variant, arch),
                            legacy=lambda: _legacy(cfg))
    failed = [e for e in entries if e.status != "ok"]
    if failed:
        err(f"{len(failed)} of {len(entries)} entries did not compile or cannot launch; saved with their status")
    err(f"wrote {_shown(cfg.baseline)}: {len(written.entries)} entries, Triton {tv}")


@app.command()
@handles_errors
def check(
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    variant: VariantOpt = None,
    arch: ArchOpt = None,
    rule: RuleOpt = None,
    allow_missing: AllowMissingOpt = False,
    fail_on_change: Annotated[bool, typer.Option(
        "--fail-on-change", help="Fail on any change: improvements, changed configs, new and missing entries too")] = False,
    allow_version_change: Annotated[bool, typer.Option(
        "--allow-version-change", help="Compare with a baseline compiled by another Triton version")] = False,
    format: Annotated[GateFormat, typer.Option("--format", "-f", help="Output format")] = GateFormat.table,
    output: OutputOpt = None,
    kernel_dir: KernelDirOpt = None,
    jobs: JobsOpt = None,
    no_cache: NoCacheOpt = False,
    wide: WideOpt = False,
    capture: CaptureOpt = None,
) -> None:
    """Recompile the gate's set and compare with the baseline: exit 1 on a regression, 2 if not comparable.

    Entries are compared by slot (a variant's request, an autotune config, a launch): a changed config is compared with the slot's old one.

    Spills, scratch and LDS may not grow; registers only within the tolerance (default 0); occupancy may not drop; a baseline entry the run no longer produces fails unless --allow-missing.

    Change a rule per metric or per variant: --rule, or \\[tool.vgprscope.rules].
    """
    try:
        result, cfg, entries = _check(config, baseline, variant, arch, rule, fail_on_change, allow_version_change,
                                      kernel_dir, jobs, no_cache, capture, allow_missing)
    except VgprscopeError as exc:
        if format in FOR_PEOPLE:
            _append_summary(f"## vgprscope check could not compare\n\n{exc}\n")
            if _on_actions():
                from ..gate.report import annotation

                print(annotation("error", "vgprscope check cannot compare", str(exc)))
        raise
    code = exit_code(result)
    _report(result, cfg, entries, format, output, wide, code)
    raise typer.Exit(code)


def exit_code(result) -> int:
    """0: the gate passed; 1: at least one entry failed (a regression, a missing entry, or any change with
    --fail-on-change). 2 is an exception's (nothing comparable), mapped by handles_errors."""
    return 0 if result.passed else 1


def _check(config, baseline, variant, arch, rule, fail_on_change, allow_version_change, kernel_dir, jobs, no_cache,
           capture=None, allow_missing=False):
    from ..compile.engine import triton_version
    from ..gate.baseline import check_triton_version, load_baseline
    from ..gate.diff import compare

    cfg = _settings(config, baseline, variant, arch, kernel_dir, rule, capture, allow_missing)
    base = load_baseline(cfg.baseline, lambda: _legacy(cfg))
    tv = triton_version()
    note = check_triton_version(base, tv, allow_version_change)
    _check_targets(cfg.set.archs)
    cfg.rules.check_variants([*_labels(cfg.set), *(e.variant for e in base.entries.values())])
    entries = _compile(cfg, jobs, no_cache)
    result = compare(base, entries, cfg.rules, in_scope=_part(cfg, variant, arch), accept_missing=cfg.accepts_missing,
                     fail_on_change=fail_on_change, current_triton=tv, notes=[note] if note else [])
    return result, cfg, entries


def _report(result, cfg, entries, fmt: GateFormat, output: Path | None, wide: bool, code: int) -> None:
    from ..gate import report
    from ..report.machine import compile_only

    machine = compile_only()
    where = _shown(cfg.baseline)
    render = {
        GateFormat.table: lambda: report.to_table(result, machine.fields(), where, wide=wide),
        GateFormat.md: lambda: report.to_markdown(result, machine.line(), where),
        GateFormat.json: lambda: report.to_json(result, machine.as_dict(), where, exit_code=code),
        GateFormat.benchmark_json: lambda: report.to_benchmark_json(entries),
    }
    emit(render[fmt](), output)
    if fmt not in FOR_PEOPLE:
        err(report.summary(result))
        return
    _append_summary(report.to_markdown(result, machine.line(), where))
    if _on_actions():
        for line in report.annotations(result, _variant_files(cfg)):
            print(line)  # workflow commands are read from stdout
    if output is not None:
        err(report.summary(result))


def _append_summary(text: str) -> None:
    """Add to the GitHub job summary when running under Actions (GITHUB_STEP_SUMMARY names its file)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a") as f:
            f.write(text)
    except OSError as exc:
        err(f"cannot append to GITHUB_STEP_SUMMARY {path}: {exc.strerror}")
