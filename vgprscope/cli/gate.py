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

from ..errors import UsageError, VgprscopeError
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


# ---- the set: the library runs it (vgprscope.library.gate); the CLI maps the outcome to exit codes --------

def _settings(config, baseline, variant, arch, kernel_dir, rules=(), capture=None, allow_missing=False):
    from ..library.gate import settings

    return settings(config, baseline, variant, arch, kernel_dir, rules, capture, allow_missing)


def _selected_variants(gate_set):
    from ..library.gate import selected_variants

    return selected_variants(gate_set)


def _legacy(cfg):
    from ..library.gate import legacy

    return legacy(cfg)


def _compile(cfg, jobs, no_cache):
    from ..library.gate import compile_set
    from .progress import compile_progress

    with compile_progress() as progress:
        return compile_set(cfg, jobs, not no_cache, progress)


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
    from ..library.gate import part

    return part(cfg, variant, arch)


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

    from ..library.gate import check_targets

    cfg = _settings(config, baseline, variant, arch, kernel_dir, capture=capture)
    check_writable(cfg.baseline)  # before minutes of compiling, not after
    check_targets(cfg.set.archs)
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
    from ..library.gate import run_check
    from .progress import compile_progress

    with compile_progress() as progress:
        return run_check(config, baseline, variant, arch, rule, fail_on_change, allow_version_change, kernel_dir,
                         jobs, not no_cache, capture, allow_missing, progress)


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
