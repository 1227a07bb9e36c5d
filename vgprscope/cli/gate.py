"""``vgprscope check`` and ``vgprscope baseline save``: the CI register-regression gate.

Exit codes of ``check``: 0 no regression, 1 at least one regression (or any change with
``--fail-on-change``), 2 cannot compare (no, unreadable or corrupt baseline, schema or Triton version
mismatch, an arch the installed Triton cannot target) with a one-line reason.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import UsageError, VgprscopeError
from .app import app
from .capture import CaptureOpt
from .common import WideOpt
from .common import ArchOpt, JobsOpt, KernelDirOpt, NoCacheOpt, OutputOpt, VariantOpt, emit, err, handles_errors

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
    "scratch_bytes:+10%, occupancy:-1, arch_vgpr:exact, sgpr:off")]


def _on_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _settings(config, baseline, variant, arch, kernel_dir, rules=(), capture=None):
    from ..gateconfig import load_gate_config

    return load_gate_config(config).with_overrides(variant, arch, kernel_dir, baseline, rules or (), capture)


def _compile(cfg, jobs, no_cache):
    from .progress import compile_progress

    with compile_progress() as progress:
        return cfg.set.compile(jobs=jobs, use_cache=not no_cache, on_progress=progress)


def _variant_files(cfg) -> dict[str, str]:
    """variant -> its kernel file relative to the working directory, for annotations on the PR diff."""
    cwd = Path.cwd().resolve()
    out = {}
    for v in cfg.set.selected_variants():
        try:
            out[v.name] = v.file.resolve().relative_to(cwd).as_posix()
        except ValueError:  # outside the repository: an annotation without a file
            pass
    return out


def _part(cfg, variant, arch):
    """With --variant / --arch a run covers part of the set: which baseline entries belong to that part
    (the others are kept by `save` and are not "missing" for `check`). None: the whole set."""
    if not (variant or arch):
        return None
    variants = {v.name for v in cfg.set.selected_variants()} if variant else None
    archs = set(cfg.set.archs) if arch else None
    return lambda e: (variants is None or e.variant in variants) and (archs is None or e.arch in archs)


def _shown(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


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
    """
    from ..baseline import Baseline, load_baseline, save_baseline
    from ..compile.engine import triton_version

    from ..fsutil import check_writable

    cfg = _settings(config, baseline, variant, arch, kernel_dir, capture=capture)
    check_writable(cfg.baseline)  # before minutes of compiling, not after
    cfg.set.check_targets()
    tv = triton_version()
    entries = _compile(cfg, jobs, no_cache)
    if entries and all(e.status != "ok" for e in entries):  # a baseline of failures gates nothing
        from .common import nothing_compiled

        err(nothing_compiled([e.status for e in entries]) + f"; {_shown(cfg.baseline)} was not written")
        raise typer.Exit(1)
    new = Baseline.of(entries, tv, cfg.set.describe())
    part = _part(cfg, variant, arch)
    if part is not None and cfg.baseline.exists():
        old = load_baseline(cfg.baseline)
        if old.triton_version != tv:
            raise UsageError(f"{cfg.baseline} was compiled with Triton {old.triton_version}, this is {tv}: save the "
                             "whole set (without --variant / --arch) rather than mix versions")
        new = old.merged(new, part)
    save_baseline(cfg.baseline, new)
    failed = [e for e in entries if e.status != "ok"]
    if failed:
        err(f"{len(failed)} of {len(entries)} entries did not compile or cannot launch; saved with their status")
    err(f"wrote {_shown(cfg.baseline)}: {len(new.entries)} entries, Triton {tv}")


@app.command()
@handles_errors
def check(
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    variant: VariantOpt = None,
    arch: ArchOpt = None,
    rule: RuleOpt = None,
    fail_on_change: Annotated[bool, typer.Option(
        "--fail-on-change", help="Fail on any change: improvements, new and missing entries too")] = False,
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

    Spills, scratch and LDS may not grow; VGPRs, SGPRs, registers only within the tolerance (default 0).

    Occupancy may not drop. Change a rule per metric or per variant: --rule, or \\[tool.vgprscope.rules].
    """
    try:
        result, cfg, entries = _check(config, baseline, variant, arch, rule, fail_on_change, allow_version_change,
                                      kernel_dir, jobs, no_cache, capture)
    except VgprscopeError as exc:
        if format in FOR_PEOPLE:
            _append_summary(f"## vgprscope check could not compare\n\n{exc}\n")
            if _on_actions():
                from ..gate_report import annotation

                print(annotation("error", "vgprscope check cannot compare", str(exc)))
        raise
    _report(result, cfg, entries, format, output, wide)
    raise typer.Exit(result.exit_code)


def _check(config, baseline, variant, arch, rule, fail_on_change, allow_version_change, kernel_dir, jobs, no_cache,
           capture=None):
    from ..baseline import check_triton_version, compare, load_baseline
    from ..compile.engine import triton_version

    cfg = _settings(config, baseline, variant, arch, kernel_dir, rule, capture)
    base = load_baseline(cfg.baseline)
    tv = triton_version()
    note = check_triton_version(base, tv, allow_version_change)
    cfg.set.check_targets()
    cfg.rules.check_variants([*cfg.set.labels(), *(e.variant for e in base.entries.values())])
    entries = _compile(cfg, jobs, no_cache)
    part = _part(cfg, variant, arch)
    result = compare(base, entries, cfg.rules, in_scope=part, fail_on_change=fail_on_change,
                     current_triton=tv, notes=[note] if note else [])
    return result, cfg, entries


def _report(result, cfg, entries, fmt: GateFormat, output: Path | None, wide: bool = False) -> None:
    from .. import gate_report
    from ..report.machine import compile_only

    machine = compile_only()
    where = _shown(cfg.baseline)
    render = {
        GateFormat.table: lambda: gate_report.to_table(result, machine.fields(), where, wide=wide),
        GateFormat.md: lambda: gate_report.to_markdown(result, machine.line(), where),
        GateFormat.json: lambda: gate_report.to_json(result, machine.as_dict(), where),
        GateFormat.benchmark_json: lambda: gate_report.to_benchmark_json(entries),
    }
    emit(render[fmt](), output)
    if fmt not in FOR_PEOPLE:
        err(gate_report.summary(result))
        return
    _append_summary(gate_report.to_markdown(result, machine.line(), where))
    if _on_actions():
        for line in gate_report.annotations(result, _variant_files(cfg)):
            print(line)  # workflow commands are read from stdout
    if output is not None:
        err(gate_report.summary(result))


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
