"""``vgprscope report compare|explain|third-party|triton-upgrade|upstream-regressions|bench``: the committed reports, each built by
a library call (``vgprscope.library.reports``) and written to ``--out`` (default reports/)."""

from __future__ import annotations

from pathlib import Path

import typer

from .app import app
from .common import ReflowedHelp, err, handles_errors
from .options import (
    AutotuneDecodeOpt, AutotuneTargetsOpt, BudgetSOpt, CacheDirArg, CaptureOpt, ConfigOpt, CudaGraphDecodeOpt,
    FrontierSettingsOpt, JobsOpt, PresetOpt, RepMsOpt, ReportArchOpt, ReportDirOpt, StrategiesOpt, TmaOpt,
    TritonOpt, VariantOpt,
)

report_app = typer.Typer(cls=ReflowedHelp, help="Write the committed reports (reports/): each names the command that reproduces it.",
                         no_args_is_help=True)
app.add_typer(report_app, name="report")


def _names(values: list[str] | None) -> list[str]:
    from ..library.selection import names

    return list(names(values, "arch"))


def _wrote(paths: list[Path]) -> None:
    for p in paths:
        err(f"wrote {p}")


@report_app.command("compare")
@handles_errors
def compare_cmd(arch: ReportArchOpt = None, out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None,
                frontier_settings: FrontierSettingsOpt = "production,seeds") -> None:
    """The strategies with their frontier: compare-<arch>.md and its chart.

    Seed 002's tradeoff table as measured, the spills at every occupancy level, `compare --frontier`, and a
    chart of spills against occupancy level."""
    from ..core.errors import UsageError
    from ..library.reports.compare import ARCHS, SETTINGS, compare_report

    chosen = [s.strip() for s in frontier_settings.split(",") if s.strip()]
    known = [s.name for s in SETTINGS]
    if any(s not in known for s in chosen):
        raise UsageError(f"--frontier-settings {frontier_settings!r}: allowed: {', '.join(known)}, comma-separated")
    for a in _names(arch) or ARCHS:
        _wrote(compare_report(a, out, jobs=jobs, frontier_settings=chosen))


@report_app.command("explain")
@handles_errors
def explain_cmd(arch: ReportArchOpt = None, out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """Where the baseline's registers go: explain-<arch>.md.

    `vgprscope explain` of the bundled baseline at the seeds' config and the AMD production default."""
    from ..library.reports.explain import ARCHS, explain_report

    for a in _names(arch) or ARCHS:
        _wrote(explain_report(a, out, jobs=jobs))


@report_app.command("third-party")
@handles_errors
def third_party_cmd(out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """liger-kernel's kernels on each arch: third-party-liger-kernel.md.

    Its Triton kernels as its own ops launch them, captured on the CPU and compiled for each arch (needs
    liger-kernel and torch: the test extra)."""
    from ..library.reports.third_party import third_party_report

    _wrote(third_party_report(out, jobs=jobs))


@report_app.command("triton-upgrade")
@handles_errors
def triton_upgrade_cmd(triton: TritonOpt = None, variant: VariantOpt = None, capture: CaptureOpt = None,
                       arch: ReportArchOpt = None, config: ConfigOpt = None, out: ReportDirOpt = Path("reports"),
                       jobs: JobsOpt = None) -> None:
    """Every release of a range: triton-upgrade-history.md and triton-upgrade.png.

    The same kernels under every release: each step judged by the gate's rules, each kernel's history and the
    chart (the data of reports/triton-upgrade.md)."""
    from ..core.errors import UsageError
    from ..library.reports.triton_upgrade import triton_upgrade_report
    from .progress import compile_progress

    if not triton:
        raise UsageError("report triton-upgrade needs the releases: --triton 3.4.0..3.9.0, or several --triton")
    with compile_progress() as progress:
        _wrote(triton_upgrade_report(out, triton=triton, variant=variant, capture=capture, arch=_names(arch),
                                     config=config, jobs=jobs, on_progress=progress))


@report_app.command("scan-cache")
@handles_errors
def scan_cache_cmd(directory: CacheDirArg = None, triton: TritonOpt = None, arch: ReportArchOpt = None,
                   out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """A Triton cache another machine wrote, as scan reads it: scan-DIR.md.

    The stored rows (registers and memory from each cubin, spill bytes with their source) and, with --arch,
    the TTIR retargeted by the release that wrote it (--triton)."""
    from ..core.errors import UsageError
    from ..library.reports.scan_cache import scan_cache_report
    from .progress import compile_progress

    if directory is None:
        raise UsageError("report scan-cache needs the cache directory: vgprscope report scan-cache DIR")
    if triton and len(triton) > 1:
        raise UsageError(f"report scan-cache takes one --triton; given: {', '.join(triton)}")
    with compile_progress() as progress:
        _wrote(scan_cache_report(directory, out, triton=triton[0] if triton else None, arch=_names(arch),
                                 jobs=jobs, on_progress=progress))


@report_app.command("upstream-regressions")
@handles_errors
def upstream_regressions_cmd(out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """Upstream reports of a Triton upgrade through `vgprscope diff`: upstream-regressions.md.

    The diffs of the committed captures of upstream kernels (Primus-Turbo, aiter, vLLM), each under the two
    releases its report names (installed on first use), with each side's records."""
    from ..library.reports.upstream_regressions import upstream_regressions_report
    from .progress import compile_progress

    with compile_progress() as progress:
        _wrote(upstream_regressions_report(out, jobs=jobs, on_progress=progress))


@report_app.command("bench")
@handles_errors
def bench_cmd(preset: PresetOpt = None, strategies: StrategiesOpt = None, rep_ms: RepMsOpt = 200.0,
              budget_s: BudgetSOpt = 2.0, autotune_targets: AutotuneTargetsOpt = False, tma: TmaOpt = False,
              cuda_graph_decode: CudaGraphDecodeOpt = False, autotune_decode: AutotuneDecodeOpt = "",
              out: ReportDirOpt = Path("reports")) -> None:
    """On a GPU, timings against the targets: bench-<gpu>.md, its CSV and charts.

    The presets timed beside torch SDPA, the targets of issues 5 and 13 and by how much any is missed."""
    from ..library.reports.bench import bench_report

    _wrote(bench_report(out, presets=preset or (), rep_ms=rep_ms, budget_s=budget_s,
                        strategies=",".join(strategies or ["all"]), autotune_targets=autotune_targets, tma=tma,
                        cuda_graph_decode=cuda_graph_decode, autotune_decode=autotune_decode))
