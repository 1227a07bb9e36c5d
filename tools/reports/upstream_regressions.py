"""reports/upstream-regressions.md: `vgprscope diff` on the kernels of upstream reports of a Triton upgrade,
each built from the upstream project's own kernel file and launched with the shapes of its report.

    python -m tools.reports upstream-regressions [--out reports]

reads the committed captures (``reports/upstream-regressions/<case>.capture.json``, written by the launchers
of ``tools/reports/workloads/`` named per case), runs the diff of each case under its two
releases (installed on first use), and writes each side's records (``<case>-<release>.json``, what the CPU
tests judge without the toolchains) and the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMMAND = "python -m tools.reports upstream-regressions"
DIRECTORY = "upstream-regressions"  # under the report directory: the captures and the per-release records
RECORDS_SCHEMA = "vgprscope-records"


@dataclass(frozen=True)
class Case:
    """One upstream report: the kernel, where its source comes from, the step of releases it is about."""

    name: str  # the stem of its files
    title: str
    issue: str  # the upstream thread, owner/repo#number
    arch: str
    before: str  # the release the report says worked
    after: str  # the release it blames
    workload: str  # the launcher's module, captured under TRITON_INTERPRET=1
    source: str  # the command that fetches the upstream kernel files the launcher reads
    launch_args: str  # the launcher's arguments: where that command put the files, then the shapes
    upstream: str  # the thread's own numbers, in its terms
    expected_exit: int  # what the gate should say: 1 a regression, 0 none
    reading: str  # what the compiles say beside the thread's numbers (written by a person, from the records)


WORKLOADS = "tools.reports.workloads"
PRIMUS_SOURCE = ("git clone -q https://github.com/AMD-AGI/Primus-Turbo primus-turbo && "
                 "git -C primus-turbo checkout -q {rev}")
AITER_SOURCE = "git clone -q https://github.com/ROCm/aiter aiter-src && git -C aiter-src checkout -q e4048607"
CASES: tuple[Case, ...] = (
    Case("primus-turbo-grouped-gemm", "Primus-Turbo's variable-K grouped GEMM (MoE dW2), the tile before the fix",
         "AMD-AGI/Primus-Turbo#471", "gfx942", "3.7.1", "3.8.0", f"{WORKLOADS}.primus_turbo_grouped_gemm",
         PRIMUS_SOURCE.format(rev="e29a9b36^"), "primus-turbo",
         "the 256x256x64 tile (8 warps, 2 stages) on Triton 3.8.0: n_regs 256 (maxed), n_spills 65; the kernel "
         "1.68 -> 9.12 ms a launch on an MI300X from 3.7.1 to 3.8.0 (DeepSeek-V2-Lite dW2, G=64, OUT_M=1408, "
         "OUT_N=2048)", 1,
         "Reproduced. 256 VGPRs on both releases (the file's maximum at this launch's 2 waves/SIMD), and "
         "3.8.0 spills 16 times the values of 3.7.1 (4 -> 64, scratch 20 -> 260 B a lane, spill instructions "
         "in the K loop 0 -> 6): the gate fails on the spills alone. The thread counts 65 spills with its own "
         "build of 3.8.0, PyPI's 3.8.0 spills 64 values here. The installed 3.9.0 halves it (31, 128 B)."),
    Case("primus-turbo-grouped-gemm-fix", "Primus-Turbo's grouped GEMM with the fix's tile (BLOCK_K 32)",
         "AMD-AGI/Primus-Turbo#471", "gfx942", "3.7.1", "3.8.0", f"{WORKLOADS}.primus_turbo_grouped_gemm",
         PRIMUS_SOURCE.format(rev="e29a9b36"), "primus-turbo",
         "BLOCK_K=32 on Triton 3.8.0: n_regs 248, n_spills 0, 1.6-3.5x faster than BLOCK_K=64 in the "
         "microbenchmark; the fix of the regression", 0,
         "Reproduced, and the case the default rules were changed for (issue 24 item 9): 244 -> 248 VGPRs at "
         "the same 2 waves/SIMD, nothing spilled on either release. The gate says `changed` with the headroom "
         "left and passes; with `strict = true` (tolerance 0 on every count) it fails, as every rule did "
         "before."),
    Case("aiter-unified-decode", "aiter's unified attention in decode (2D kernel), 8 query heads per K/V head of 128",
         "ROCm/aiter#5137", "gfx950", "3.7.1", "3.8.0", f"{WORKLOADS}.aiter_unified_decode",
         AITER_SOURCE, "aiter-src 128 8 64 512",
         "Triton 3.8 regresses aiter's decode attention on gfx950 (llama3 paged-attention decode about 18% "
         "slower; the GQA decode kernel left in an 'inflated 202-VGPR / occupancy-2 state'); setting "
         "waves_per_eu=2 on the launch recovers 42-43%", 1,
         "The step of #5137 (3.7.1 -> 3.8.0 on gfx950), on the decode kernel serving engines launch "
         "through aiter (vLLM's backend): 3.8.0 gives it 86 fewer VGPRs (218 -> 132) but more than doubles Triton's LDS "
         "(32,768 -> 67,520 B; ROCm/aiter#4918: 3.8 turns on direct-to-LDS async copies by default on "
         "gfx950), and LDS becomes what binds: 2 -> 1 wave/SIMD. The diff names the LDS as the cause; a "
         "register-only view would call this launch better."),
    Case("aiter-pa-decode", "aiter's paged-attention decode, GQA with tl.dot (v1), the kernel #5137 retuned",
         "ROCm/aiter#5137", "gfx950", "3.7.1", "3.8.0", f"{WORKLOADS}.aiter_pa_decode",
         AITER_SOURCE, "aiter-src",
         "the v1 w_dot GQA decode kernel at 202 VGPRs / occupancy 2 under Triton 3.8 (AMD's ROCm build); "
         "waves_per_eu=2 gives it the full 256-VGPR budget: s_waitcnt lgkmcnt(0) 72 -> 50, s_nop 36 -> 9, "
         "llama3 8B/70B/405B decode +43/+43/+42%", 0,
         "Not reproduced with PyPI's releases: the kernel #5137 retuned compiles to 70 VGPRs and 7 waves/SIMD "
         "on both 3.7.1 and 3.8.0 for llama3-8B's decode, far from the 202 VGPRs the thread measured with "
         "AMD's ROCm build of 3.8 (whose LLVM differs from PyPI's). Its LDS doubles too (8,192 -> 16,608 B) "
         "and its SGPRs grow 46 -> 51, both within the level: `changed`, exit 0."),
    Case("vllm-fused-moe", "vLLM's int4 fused MoE (fused_moe_kernel_gptq_awq), Kimi K2.5 on an MI355X",
         "vllm-project/vllm#43153", "gfx950", "3.4.0", "3.6.0", f"{WORKLOADS}.vllm_fused_moe",
         "pip download --no-deps vllm==0.21.0 -d wheels && "
         "unzip -q wheels/vllm-*.whl 'vllm/model_executor/layers/fused_moe/*' -d vllm-wheel", "vllm-wheel",
         "Kimi K2.5 serving 707 -> 390 output tokens/s (TPOT 43.7 -> 79.7 ms) from Triton 3.4 to 3.6 with "
         "nothing else changed; the kernel 'performs significantly worse when compiled by triton 3.6'; fixed by "
         "retuning its tile configs (vllm-project/vllm#44119, 68% of the gap)", 0,
         "Every count says 3.6.0 is the better compile. Six of the eight launches fall by 60-204 VGPRs (3.4.0 "
         "uses all 512 on six), the two BLOCK_N=256 launches stay at 512 on both; every launch "
         "that spilled spills less (to none on two, scratch gone from three), occupancy holds at 1 "
         "wave/SIMD. The SGPRs of four launches grow (+4 to +9, 31-32 -> 36-40, far below the arch's 108): "
         "`changed`, exit 0; before issue 24's rules this was the false alarm that failed the upgrade. What "
         "slowed Kimi K2.5 down is not in the resource counts: the thread fixed it by retuning the tiles for "
         "the new compiler's schedule, which a compile-only tool cannot time. (The installed 3.9.0 spills "
         "nowhere and reaches 2-4 waves/SIMD on six launches.)"),
)


def capture_path(directory: Path, case: Case) -> Path:
    return directory / f"{case.name}.capture.json"


def records_path(directory: Path, case: Case, release: str) -> Path:
    return directory / f"{case.name}-{release}.json"


def commands(case: Case, directory: Path) -> list[str]:
    """The commands that reproduce a case from nothing: the upstream files, the capture, the diff."""
    cap = capture_path(directory, case)
    return [case.source,
            f"TRITON_INTERPRET=1 vgprscope capture -o {cap} -- python -m {case.workload} {case.launch_args}",
            f"vgprscope diff --triton {case.before} --triton {case.after} --capture {cap} --arch {case.arch}"]


def write_records(path: Path, release: str, records: Sequence[Any]) -> None:
    """Each record as ``Record.as_dict`` gives it, less what changes from run to run (compile time, whether
    the cache served it), so that a re-run writes the same file."""
    from vgprscope.core.fsutil import atomic_write

    rows = [{k: v for k, v in r.as_dict().items() if k not in ("compile_seconds", "cached")} for r in records]
    atomic_write(path, json.dumps({"schema": RECORDS_SCHEMA, "triton_version": release, "records": rows},
                                  indent=1) + "\n")


def load_records(path: Path) -> list[Any]:
    """The records of one release of a case, as the report wrote them."""
    from vgprscope.core.errors import UsageError
    from vgprscope.core.records import Record

    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("schema") != RECORDS_SCHEMA:
        raise UsageError(f"{path}: not a records file of this report (schema {RECORDS_SCHEMA!r})")
    return [Record.from_dict(d) for d in data["records"]]


def judge(case: Case, directory: Path, config: Path | None = None) -> Any:
    """The gate's verdict (a ``GateResult``) on the case's committed records: the after release against the
    before one, by the rules of the gate's configuration, as `vgprscope diff` judges them."""
    from vgprscope.gate.baseline import Baseline, entries_of
    from vgprscope.gate.diff import judge as judge_entries
    from vgprscope.library.gate import load_config

    before = load_records(records_path(directory, case, case.before))
    after = load_records(records_path(directory, case, case.after))
    return judge_entries(Baseline.of(entries_of(before), case.before), entries_of(after), load_config(config).rules,
                   current_triton=case.after)


def exit_code(passed: bool, compared: int) -> int:
    """`vgprscope diff`'s exit code (``core.exit_codes.of_gate``): 2 when nothing compiled on both sides, else 1 on
    a regression."""
    from vgprscope.core.exit_codes import of_gate

    return of_gate(compared > 0, passed)


def _sides_table(sides: Sequence[tuple[str, Sequence[Any]]]) -> list[str]:
    """Each launch's counts under every release, the releases of one launch side by side."""
    from vgprscope.report.formats import md_table
    from vgprscope.report.rows import fmt_lds, fmt_regs, fmt_scratch, fmt_sgpr, fmt_spills_full, occupancy_label

    by_launch: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for release, records in sides:
        for r in records:
            by_launch.setdefault((r.kernel, r.config.key()), []).append((release, r))
    rows = [[r.kernel, r.config.short(), release, fmt_regs(r), fmt_spills_full(r), fmt_scratch(r), fmt_lds(r),
             fmt_sgpr(r), occupancy_label(r)] for launch in by_launch.values() for release, r in launch]
    return md_table(["kernel", "config", "Triton", "VGPRs", "spills", "scratch (B)", "LDS (B)", "SGPRs",
                     "occupancy"], rows).splitlines()


def _diff_markdown(md: str) -> list[str]:
    """The diff's markdown under a case's heading: its headings one level down, its machine line left to the
    report's."""
    out = []
    for line in md.splitlines():
        if line.startswith("Machine: "):
            continue
        out.append("#" + line if line.startswith("#") else line)
    return out


def upstream_regressions_report(out: Path, *, cases: Sequence[Case] = CASES, jobs: int | None = None,
                                on_progress: Any = None) -> list[Path]:
    """Diff each case's committed capture under its two releases; write the per-release records and
    ``out/upstream-regressions.md``; the files written."""
    from vgprscope.compile.toolchains import triton_version
    from vgprscope.core.fsutil import atomic_write
    from vgprscope.library.api import analyze, diff
    from vgprscope.report.formats import md_table

    installed = triton_version()
    directory = out / DIRECTORY
    written: list[Path] = []
    summary: list[list[str]] = []
    body: list[str] = []
    machine = None
    for case in cases:
        result = diff(triton=[case.before, case.after], capture=capture_path(directory, case), arch=[case.arch],
                      jobs=jobs, on_progress=on_progress)
        machine = result.machine
        code = exit_code(result.passed, result.compared)
        today = analyze(capture=capture_path(directory, case), arch=[case.arch], jobs=jobs,
                        on_progress=on_progress).records
        sides = [(case.before, result.records_before), (case.after, result.records_after), (installed, today)]
        for release, records in sides:
            path = records_path(directory, case, release)
            write_records(path, release, records)
            written.append(path)
        summary.append([case.issue, case.title, case.arch, f"{case.before} -> {case.after}", str(code),
                        str(case.expected_exit)])
        body += [f"## {case.title} ({case.issue})", "",
                 f"Upstream's own numbers: {case.upstream}.", "",
                 f"What the compiles say: {case.reading}", "",
                 f"Exit code: **{code}** (expected {case.expected_exit}). Reproduce:", "", "```",
                 *commands(case, directory), "```", "",
                 f"Each launch under both releases and under the installed Triton {installed}:", "",
                 *_sides_table(sides), "",
                 *_diff_markdown(result.markdown()), ""]
    head = ["# Upstream reports of a Triton upgrade, through `vgprscope diff`", "",
            f"Machine: {machine.line() if machine else ''}", "",
            f"Reproduce: `{COMMAND}` (the diffs of the committed captures in `{DIRECTORY}/`; each case below "
            "names the commands that rebuild its capture from the upstream sources).", "",
            *md_table(["upstream", "kernel", "arch", "releases", "exit", "expected"], summary).splitlines(), ""]
    md = out / "upstream-regressions.md"
    atomic_write(md, "\n".join(head + body))
    return [md, *written]
