"""``python -m tools.reports compare|explain|third-party|triton-upgrade|scan-cache|upstream-regressions|loop-diff|bench|ecosystem``:
the repository's committed reports, each built by a function of this package and written to ``--out``
(default reports/). A development command, run from the repository root; not part of the wheel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vgprscope.cli.common import OneLineErrors, err, handles_errors, nonempty_names
from vgprscope.cli.options import (
    BudgetSOpt,
    CacheDirArg,
    CaptureOpt,
    ConfigOpt,
    JobsOpt,
    PresetOpt,
    RepMsOpt,
    StrategiesOpt,
    TritonOpt,
    VariantOpt,
)

# the options only these commands take (the shared ones are vgprscope's own, from vgprscope.cli.options)
ReportDirOpt = Annotated[Path, typer.Option("--out", help="The directory the report's files are written to")]
ReportArchOpt = Annotated[list[str] | None, typer.Option(
    "--arch", "-a", callback=nonempty_names, help="The archs to write a report for, repeatable \\[default: the "
    "committed reports' archs]")]
FrontierSettingsOpt = Annotated[str, typer.Option(
    "--frontier-settings", help="The settings whose frontier is compiled (production, seeds; the others get the "
    "compare table only)")]
AutotuneTargetsOpt = Annotated[bool, typer.Option(
    "--autotune-targets", help="Also autotune every variant at the target cases (B4 H32 N4096 D128, causal and not)")]
TmaOpt = Annotated[bool, typer.Option(
    "--tma", help="Also time knob tma=1 (K/V through tensor descriptors) against pointer loads at the prefill "
    "target cases (baseline) and the decode target cases (split-k)")]
CudaGraphDecodeOpt = Annotated[bool, typer.Option(
    "--cuda-graph-decode", help="Time the decode cases (Nq <= 16) again as CUDA graph replays, variants and SDPA "
    "alike")]
AutotuneDecodeOpt = Annotated[str, typer.Option(
    "--autotune-decode", help="Comma-separated variants to autotune at the decode target cases")]

WorkDirOpt = Annotated[Path, typer.Option("--work", help="Where the GPU run keeps each workload's caches and files")]
DeadlineOpt = Annotated[float, typer.Option(
    "--deadline", help="Seconds the whole GPU run may take; what is still running then is stopped and archived")]
OnlyOpt = Annotated[list[str] | None, typer.Option(
    "--only", callback=nonempty_names, help="Run only these workloads, repeatable \\[default: all]")]
InterpretOpt = Annotated[bool, typer.Option(
    "--interpret", help="Check the run itself on a CPU: Triton's interpreter, each workload's CPU sizes (the "
    "workloads that have them)")]
AnalyzeOnlyOpt = Annotated[bool, typer.Option(
    "--analyze-only", help="Only the analyses again, of the captures an earlier run left in --work")]
ScanTimeoutOpt = Annotated[float, typer.Option(
    "--scan-timeout", help="Seconds each cache's scan may take while collecting (a slower one is a row saying so)")]
ResultsArg = Annotated[Path, typer.Argument(
    help="The ecosystem run's collected results (tests/fixtures/ecosystem), or with --collect the GPU run's "
         "returned archives")]
CollectOpt = Annotated[list[Path] | None, typer.Option(
    "--collect", help="First read the GPU run's archives in this directory into the results directory (cuobjdump "
    "of each cubin, scan of each cache); repeatable: a later directory's archives over the earlier's (a second "
    "device call's NAME-analyze.tar.xz, ecosystem-cpu's NAME-cpu.tar.xz)")]
CpuOutOpt = Annotated[Path, typer.Option("--out", help="The directory the archives (NAME-cpu.tar.xz) are written to")]
CpuWorkOpt = Annotated[Path, typer.Option("--work", help="Where each workload's capture and analyses are written "
                                          "before they are archived")]
CpuTritonOpt = Annotated[str, typer.Option(
    "--triton", "-t", help="The Triton release to compile with: the GPU machine's (installed once into the user's "
    "toolchain store)")]
CpuArchOpt = Annotated[list[str] | None, typer.Option(
    "--arch", "-a", callback=nonempty_names, help="The archs to analyse, repeatable \\[default: gfx942, gfx950]")]

app = typer.Typer(cls=OneLineErrors, help="Write the committed reports (reports/): each names the command that "
                  "reproduces it.", no_args_is_help=True, add_completion=False)


def _names(values: list[str] | None) -> list[str]:
    from vgprscope.library.selection import names

    return list(names(values, "arch"))


def _wrote(paths: list[Path]) -> None:
    for p in paths:
        err(f"wrote {p}")


@app.command("compare")
@handles_errors
def compare_cmd(arch: ReportArchOpt = None, out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None,
                frontier_settings: FrontierSettingsOpt = "production,seeds") -> None:
    """The strategies with their frontier: compare-<arch>.md and its chart.

    Seed 002's tradeoff table as measured, the spills at every occupancy level, `compare --frontier`, and a
    chart of spills against occupancy level."""
    from vgprscope.core.errors import UsageError

    from .compare import ARCHS, SETTINGS, compare_report

    chosen = [s.strip() for s in frontier_settings.split(",") if s.strip()]
    known = [s.name for s in SETTINGS]
    if any(s not in known for s in chosen):
        raise UsageError(f"--frontier-settings {frontier_settings!r}: allowed: {', '.join(known)}, comma-separated")
    for a in _names(arch) or ARCHS:
        _wrote(compare_report(a, out, jobs=jobs, frontier_settings=chosen))


@app.command("explain")
@handles_errors
def explain_cmd(arch: ReportArchOpt = None, out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """Where the baseline's registers go: explain-<arch>.md.

    `vgprscope explain` of the bundled baseline at the seeds' config and the AMD production default."""
    from .explain import ARCHS, explain_report

    for a in _names(arch) or ARCHS:
        _wrote(explain_report(a, out, jobs=jobs))


@app.command("third-party")
@handles_errors
def third_party_cmd(out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """liger-kernel's kernels on each arch: third-party-liger-kernel.md.

    Its Triton kernels as its own ops launch them, captured on the CPU and compiled for each arch (needs
    liger-kernel and torch: the test extra)."""
    from .third_party import third_party_report

    _wrote(third_party_report(out, jobs=jobs))


@app.command("triton-upgrade")
@handles_errors
def triton_upgrade_cmd(triton: TritonOpt = None, variant: VariantOpt = None, capture: CaptureOpt = None,
                       arch: ReportArchOpt = None, config: ConfigOpt = None, out: ReportDirOpt = Path("reports"),
                       jobs: JobsOpt = None) -> None:
    """Every release of a range: triton-upgrade-history.md and triton-upgrade.png.

    The same kernels under every release: each step judged by the gate's rules, each kernel's history and the
    chart (the data of reports/triton-upgrade.md)."""
    from vgprscope.cli.progress import compile_progress
    from vgprscope.core.errors import UsageError

    from .triton_upgrade import triton_upgrade_report

    if not triton:
        raise UsageError("triton-upgrade needs the releases: --triton 3.4.0..3.9.0, or several --triton")
    with compile_progress() as progress:
        _wrote(triton_upgrade_report(out, triton=triton, variant=variant, capture=capture, arch=_names(arch),
                                     config=config, jobs=jobs, on_progress=progress))


@app.command("scan-cache")
@handles_errors
def scan_cache_cmd(directory: CacheDirArg = None, triton: TritonOpt = None, arch: ReportArchOpt = None,
                   out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """A Triton cache another machine wrote, as scan reads it: scan-DIR.md.

    The stored rows (registers and memory from each cubin, spill bytes with their source) and, with --arch,
    the TTIR retargeted by the release that wrote it (--triton)."""
    from vgprscope.cli.progress import compile_progress
    from vgprscope.core.errors import UsageError

    from .scan_cache import scan_cache_report

    if directory is None:
        raise UsageError("scan-cache needs the cache directory: python -m tools.reports scan-cache DIR")
    if triton and len(triton) > 1:
        raise UsageError(f"scan-cache takes one --triton; given: {', '.join(triton)}")
    with compile_progress() as progress:
        _wrote(scan_cache_report(directory, out, triton=triton[0] if triton else None, arch=_names(arch),
                                 jobs=jobs, on_progress=progress))


@app.command("upstream-regressions")
@handles_errors
def upstream_regressions_cmd(out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """Upstream reports of a Triton upgrade through `vgprscope diff`: upstream-regressions.md.

    The diffs of the committed captures of upstream kernels (Primus-Turbo, aiter, vLLM), each under the two
    releases its report names (installed on first use), with each side's records."""
    from vgprscope.cli.progress import compile_progress

    from .upstream_regressions import upstream_regressions_report

    with compile_progress() as progress:
        _wrote(upstream_regressions_report(out, jobs=jobs, on_progress=progress))


@app.command("loop-diff")
@handles_errors
def loop_diff_cmd(out: ReportDirOpt = Path("reports"), jobs: JobsOpt = None) -> None:
    """What Triton 3.7.1 -> 3.8.0 does to the hot loop on gfx942: loop-diff-gfx942.md.

    `vgprscope diff` of the bundled baseline at the seeds' tile and of Primus-Turbo's grouped GEMM (the committed
    capture), each kernel's hot loop on both sides: its scratch traffic and matrix share per trip."""
    from vgprscope.cli.progress import compile_progress

    from .loop_diff import loop_diff_report

    with compile_progress() as progress:
        _wrote(loop_diff_report(out, jobs=jobs, on_progress=progress))


@app.command("bench")
@handles_errors
def bench_cmd(preset: PresetOpt = None, strategies: StrategiesOpt = None, rep_ms: RepMsOpt = 200.0,
              budget_s: BudgetSOpt = 2.0, autotune_targets: AutotuneTargetsOpt = False, tma: TmaOpt = False,
              cuda_graph_decode: CudaGraphDecodeOpt = False, autotune_decode: AutotuneDecodeOpt = "",
              out: ReportDirOpt = Path("reports")) -> None:
    """On a GPU, timings against the targets: bench-<gpu>.md, its CSV and charts.

    The presets timed beside torch SDPA, the targets of issues 5 and 13 and by how much any is missed."""
    from .bench import bench_report

    _wrote(bench_report(out, presets=preset or (), rep_ms=rep_ms, budget_s=budget_s,
                        strategies=",".join(strategies or ["all"]), autotune_targets=autotune_targets, tma=tma,
                        cuda_graph_decode=cuda_graph_decode, autotune_decode=autotune_decode))


@app.command("ecosystem-run")
@handles_errors
def ecosystem_run_cmd(work: WorkDirOpt = Path("/tmp/vgprscope-ecosystem"), out: ReportDirOpt = Path("ecosystem-out"),
                      deadline: DeadlineOpt = 420.0, only: OnlyOpt = None, jobs: JobsOpt = None,
                      interpret: InterpretOpt = False, analyze_only: AnalyzeOnlyOpt = False) -> None:
    """On a GPU: every ecosystem workload captured through the JIT and analysed, one archive each in --out.

    Five Triton libraries and two torch.compile'd models, as their users run them (tools/reports/ecosystem.py);
    each archive holds the capture, the JIT's caches and the sm_90, gfx942 and gfx950 analyses."""
    from vgprscope.core.errors import UsageError

    from .ecosystem import WORKLOADS, run_all

    known = [w.name for w in WORKLOADS]
    if any(n not in known for n in only or ()):
        raise UsageError(f"--only {', '.join(only or ())}: allowed: {', '.join(known)}")
    summary = run_all(work, out, deadline_s=deadline, only=only or (), jobs=jobs or 8, interpret=interpret,
                      analyze_only=analyze_only)
    done = [n for n, s in summary["workloads"].items() if "error" not in s]
    err(f"ecosystem run: {len(done)} of {len(summary['workloads'])} workloads archived in {out}")


@app.command("ecosystem")
@handles_errors
def ecosystem_cmd(results: ResultsArg, collect: CollectOpt = None, only: OnlyOpt = None,
                  scan_timeout: ScanTimeoutOpt = 900.0, out: ReportDirOpt = Path("reports")) -> None:
    """The ecosystem's fidelity table: ecosystem-<gpu>.md.

    Per workload, the kernels and specialisations the JIT compiled (cubins read with cuobjdump), what the
    capture holds, its sm_90 rows against the cubins, gfx942 and gfx950 with every refusal's reason, and scan
    of the caches against cuobjdump."""
    from .ecosystem_report import collect_results, ecosystem_report

    if collect:
        _wrote(collect_results(collect, results, only or (), scan_timeout))
    _wrote(ecosystem_report(results, out))


@app.command("ecosystem-cpu")
@handles_errors
def ecosystem_cpu_cmd(results: ResultsArg, out: CpuOutOpt = Path("ecosystem-cpu"),
                      work: CpuWorkOpt = Path("/tmp/vgprscope-ecosystem-cpu"), only: OnlyOpt = None,
                      arch: CpuArchOpt = None, triton: CpuTritonOpt = "3.6.0", jobs: JobsOpt = None) -> None:
    """The committed captures analysed here for the AMD archs, one archive each in --out (NAME-cpu.tar.xz).

    Each workload's capture through `vgprscope analyze --capture` under the GPU machine's Triton, from the
    capture's snapshots where the library is not installed; `ecosystem --collect GPU_OUT --collect OUT` puts the
    rows in the report."""
    from vgprscope.core.errors import UsageError

    from .ecosystem import AMD_ARCHS, WORKLOADS
    from .ecosystem_cpu import analyze_on_cpu

    known = [w.name for w in WORKLOADS]
    if any(n not in known for n in only or ()):
        raise UsageError(f"--only {', '.join(only or ())}: allowed: {', '.join(known)}")
    _wrote(analyze_on_cpu(results, out, work, only=only or (), archs=_names(arch) if arch else AMD_ARCHS,
                          triton=triton, jobs=jobs))
