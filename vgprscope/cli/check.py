"""``vgprscope check`` and ``vgprscope baseline save``: the CI register-regression gate.

The gate package (vgprscope.gate) holds the configuration as data, the baseline file, the diff and the
report; the library (``vgprscope.check``, ``vgprscope.baseline_save``) compiles the set and takes the diff;
this module renders the outcome and exits with the result's code (``core.exit_codes``): 0 the gate passed,
1 it failed (a regression, a baseline entry the run no longer produces unless accepted, or any change with
``--fail-on-change``), 2 nothing could be compared (no, unreadable, corrupt or empty baseline, an empty set,
schema or Triton version mismatch, an arch the installed Triton cannot target) with a one-line reason.
"""

from __future__ import annotations

import os

import typer

from ..core.errors import VgprscopeError
from ..core.exit_codes import FAILURE
from ..core.paths import shown_path
from .common import ReflowedHelp, command_line, emit, err, handles_errors
from .options import (
    AllowMissingOpt,
    AllowVersionChangeOpt,
    BaselineOpt,
    Compiles,
    ConfigOpt,
    FailOnChangeOpt,
    GateFormat,
    GateFormatOpt,
    Kernels,
    Output,
    RuleOpt,
    StrictOpt,
    Toolchains,
    bundled,
)

baseline_app = typer.Typer(cls=ReflowedHelp, help="Save the register baseline that `vgprscope check` compares against.",
                           no_args_is_help=True)

# Formats for people: only these add to the GitHub job summary and print workflow commands; the others
# are data for a program and stay pure.
FOR_PEOPLE = (GateFormat.table, GateFormat.md)


def _on_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


# ---- commands -----------------------------------------------------------------------------------------

@baseline_app.command("save")
@handles_errors
@bundled
def save(*, config: ConfigOpt = None, baseline: BaselineOpt = None, kernels: Kernels, run: Compiles,
         tc: Toolchains) -> None:
    """Compile the gate's set and write the baseline `vgprscope check` compares against (atomically).

    With --variant or --arch, only those entries are replaced; the rest of an existing baseline is kept.
    With --triton, that release's numbers (and version) are saved.

    Saves of one file wait for each other, so two saves of different parts at once both land.
    """
    from ..library import api
    from .common import nothing_compiled
    from .progress import compile_progress

    with compile_progress() as progress:
        saved = api.baseline_save(config=config, baseline=baseline, **kernels.library(), **tc.library(),
                                  **run.library(), on_progress=progress)
    if saved.written is None:  # a baseline of failures gates nothing
        err(nothing_compiled([e.status for e in saved.entries]) + f"; {shown_path(saved.path)} was not written")
        raise typer.Exit(FAILURE)
    if saved.failed:
        err(f"{len(saved.failed)} of {len(saved.entries)} entries did not compile or cannot launch; saved with "
            "their status")
    err(f"wrote {shown_path(saved.path)}: {len(saved.written.entries)} entries, Triton {saved.triton_version}")


@handles_errors
@bundled
def check(*, config: ConfigOpt = None, baseline: BaselineOpt = None, kernels: Kernels, rule: RuleOpt = None,
          allow_missing: AllowMissingOpt = False, fail_on_change: FailOnChangeOpt = False, strict: StrictOpt = False,
          allow_version_change: AllowVersionChangeOpt = False, format: GateFormatOpt = GateFormat.table,
          out: Output, run: Compiles, tc: Toolchains) -> None:
    """Recompile the gate's set and compare with the baseline: exit 1 on a regression, 2 if not comparable.

    Entries are compared by slot (a variant's request, an autotune config, a launch): a changed config is compared with the slot's old one.

    What costs time fails: spills, scratch and spill instructions may not grow, occupancy may not drop, registers, SGPRs and LDS may not cross an occupancy step or the arch's maximum (a growth within the step is `changed`, with its headroom, and passes; --strict: tolerance 0 on every count); a baseline entry the run no longer produces fails unless --allow-missing.

    Change a rule per metric or per variant: --rule, or \\[tool.vgprscope.rules].

    With --triton X, the baseline is compared with X's compiles: a preview of the upgrade (the Triton versions differ there by design).
    """
    from ..library import api
    from .progress import compile_progress

    try:
        with compile_progress() as progress:
            checked = api.check(config=config, baseline=baseline, **kernels.library(), rule=rule,
                                allow_missing=allow_missing, fail_on_change=fail_on_change, strict=strict,
                                allow_version_change=allow_version_change, **tc.library(), **run.library(),
                                on_progress=progress)
    except VgprscopeError as exc:
        if format in FOR_PEOPLE:
            _append_summary(f"## vgprscope check could not compare\n\n{exc}\n")
            if _on_actions():
                from ..gate.report import annotation

                print(annotation("error", "vgprscope check cannot compare", str(exc)))
        raise
    code = checked.exit_code
    _report(checked, format, out, code)
    raise typer.Exit(code)


def _report(checked, fmt: GateFormat, out: Output, code: int) -> None:
    from ..gate import report

    result, cfg, entries, machine, output, wide = (checked.result, checked.config, checked.entries, checked.machine,
                                                   out.output, out.wide)
    where = shown_path(cfg.baseline)
    # the machine line names the Triton that compiled the rows (``--triton 3.6.0``), not only the installed one
    machine = machine.for_rows([result.current_triton])
    render = {
        GateFormat.table: lambda: report.to_table(result, machine.fields(), where, wide=wide),
        GateFormat.md: lambda: report.to_markdown(result, machine.line(), where),
        GateFormat.json: lambda: report.to_json(result, machine.as_dict(), where, exit_code=code),
        GateFormat.benchmark_json: lambda: report.to_benchmark_json(entries),
        GateFormat.sarif: checked.to_sarif,
        GateFormat.html: lambda: checked.to_html(command=command_line()),
    }
    emit(render[fmt](), output)
    if fmt not in FOR_PEOPLE:
        err(report.summary(result))
        return
    _append_summary(report.to_markdown(result, machine.line(), where))
    if _on_actions():
        for line in report.workflow_annotations(result, checked.locations()):
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


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.add_typer(baseline_app, name="baseline")
    app.command()(check)
