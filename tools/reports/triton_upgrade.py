"""The data of reports/triton-upgrade.md: the same kernels under every Triton release of a range, each step's
verdict by the gate's rules, each kernel's history table and the chart.

    python -m tools.reports triton-upgrade --triton 3.4.0..3.9.0 --variant all \
        --capture reports/capture-liger-kernel.json --arch gfx942 --arch gfx950 --arch sm_90

writes ``triton-upgrade-history.md`` (the step table and the history table) and ``triton-upgrade.png``; the
report's reading of them (the largest regressions, the upstream reports) is written by a person.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

COMMAND = "python -m tools.reports triton-upgrade"


def steps(result: Any, config: Path | None = None) -> list[tuple[str, str]]:
    """(step, what the gate says) for each pair of consecutive toolchains of a history (``AnalyzeResult``),
    judged by the rules of the gate's configuration, as `vgprscope diff` judges one step."""
    from vgprscope.analysis.diff.core import SidesDiff
    from vgprscope.gate.baseline import Baseline, entries_of
    from vgprscope.gate.diff import judge
    from vgprscope.library.gate import load_config

    rules = load_config(config).rules
    sides = list(result.toolchains)
    by_side: dict[str, list[Any]] = {tc.label: [] for tc in sides}
    for r in result.records:
        by_side.setdefault(r.toolchain or sides[0].label, []).append(r)
    archs = tuple(dict.fromkeys(r.arch for r in result.records))
    out = []
    for a, b in zip(sides, sides[1:]):
        before, after = by_side[a.label], by_side[b.label]
        gate = judge(Baseline.of(entries_of(before), a.version), entries_of(after), rules,
                       current_triton=b.version)
        summary = SidesDiff(a, b, archs, gate, (), tuple(before), tuple(after)).summary()
        out.append((f"{a.label} -> {b.label}", summary.split(": ", 1)[1]))
    return out


def command_line(triton: Sequence[str], variant: Sequence[str] | None, capture: Path | None,
                 arch: Sequence[str] | None) -> str:
    parts = [COMMAND, *(f"--triton {t}" for t in triton), *(f"--variant {v}" for v in variant or ()),
             *([f"--capture {capture}"] if capture else []), *(f"--arch {a}" for a in arch or ())]
    return " ".join(parts)


def triton_upgrade_report(out: Path, *, triton: Sequence[str], variant: Sequence[str] | None = None,
                          capture: Path | None = None, arch: Sequence[str] | None = None, config: Path | None = None,
                          jobs: int | None = None, on_progress: Any = None) -> list[Path]:
    """Compile the selection under every release of ``triton`` (a range, or several) and write
    ``out/triton-upgrade-history.md`` and ``out/triton-upgrade.png``; the files written."""
    from vgprscope.analysis.history import view as history_view
    from vgprscope.core.errors import UsageError
    from vgprscope.core.fsutil import atomic_write
    from vgprscope.library.api import analyze
    from vgprscope.report.formats import md_table

    result = analyze(variant=list(variant or []) or None, capture=capture, arch=list(arch or []) or None,
                     triton=list(triton), jobs=jobs, on_progress=on_progress)
    if len(result.toolchains) < 2:
        raise UsageError("the Triton upgrade report compares releases: give a range (--triton 3.4.0..3.9.0) or "
                         "several --triton")
    rows = result.history()
    history = history_view.to_markdown(rows, result.machine).split("\n\n", 2)[2]  # the machine line is above
    compiled = sum(1 for r in result.records)
    text = "\n".join([
        "# Registers per Triton release: the data", "",
        f"Machine: {result.machine.line()}", "",
        f"Reproduce: `{command_line(triton, variant, capture, arch)}`", "",
        f"{len(rows)} kernel x config x arch rows under {len(result.toolchains)} releases ({compiled} compiles). "
        "Each step: the later release judged by the gate's rules against the earlier one, as `vgprscope diff "
        "--triton A --triton B` judges it.", "",
        md_table(["step", "what the gate says"], [list(s) for s in steps(result, config)]),
        "## Every row, release by release", "",
        history,
    ])
    out.mkdir(parents=True, exist_ok=True)
    md = out / "triton-upgrade-history.md"
    atomic_write(md, text)
    png = history_view.plot(rows, out / "triton-upgrade.png")
    return [md, Path(png)]
