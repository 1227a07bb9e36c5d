"""Measure the tool's own speed and write reports/tool-speed.md.

    python scripts/bench_tool_speed.py [--runs 7] [--out reports/tool-speed.md]

1. `vgprscope --help`: median wall time of several runs (target < 0.3 s: no triton / torch import).
2. The single-threaded compile time of every row of `vgprscope analyze` on its defaults (`--jobs 1`,
   empty cache): the sum of the rows' compile seconds.
3. A cold `vgprscope analyze` on the defaults with all cores and an empty cache (target: at most
   1.15 x (sum of single-threaded compile times / cores) + 2 s).
4. The same command again with the cache warm (target < 1 s).
Every run is a fresh process, as a user would type it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return dt, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "tool-speed.md")
    args = ap.parse_args()

    from vgprscope.fsutil import atomic_write
    from vgprscope.report.machine import compile_only

    exe = [sys.executable, "-m", "vgprscope"]
    cores = os.cpu_count() or 1
    base_env = dict(os.environ)
    base_env.pop("TRITON_INTERPRET", None)

    helps = sorted(timed(exe + ["--help"], base_env)[0] for _ in range(args.runs))
    help_median = statistics.median(helps)

    with tempfile.TemporaryDirectory() as single, tempfile.TemporaryDirectory() as par:
        env1 = base_env | {"VGPRSCOPE_CACHE_DIR": single}
        wall1, out1 = timed(exe + ["analyze", "--jobs", "1", "--format", "json"], env1)
        rows = json.loads(out1.stdout)["rows"]
        compile_sum = sum(r["compile_seconds"] for r in rows)

        envp = base_env | {"VGPRSCOPE_CACHE_DIR": par}
        cold, outp = timed(exe + ["analyze", "--format", "json"], envp)
        warm_runs = sorted(timed(exe + ["analyze", "--format", "json"], envp)[0] for _ in range(args.runs))
        warm = statistics.median(warm_runs)
        cold_rows = json.loads(outp.stdout)["rows"]

    budget = 1.15 * compile_sum / cores + 2.0
    ok = lambda b: "yes" if b else "**no**"  # noqa: E731
    machine = compile_only()
    statuses = sorted({r["status"] for r in cold_rows})
    text = f"""# vgprscope: speed of the tool itself

Machine: {machine.line()}; {cores} cores ({os.uname().machine})

Reproduce: `python scripts/bench_tool_speed.py --runs {args.runs}`

`vgprscope analyze` on its defaults is {len(rows)} rows ({len({(r['variant'], r['arch']) for r in rows})} variant x arch
compiles); row statuses: {', '.join(statuses)}.

| measurement | value | target | met |
|---|---|---|---|
| `vgprscope --help`, median of {args.runs} (min-max) | {help_median:.3f} s ({helps[0]:.3f}-{helps[-1]:.3f}) | < 0.3 s | {ok(help_median < 0.3)} |
| sum of single-threaded compile times (`--jobs 1`) | {compile_sum:.2f} s (whole run {wall1:.2f} s) | - | - |
| cold `vgprscope analyze`, {cores} jobs, empty cache | {cold:.2f} s | <= 1.15 x {compile_sum:.2f} / {cores} + 2 = {budget:.2f} s | {ok(cold <= budget)} |
| warm re-run (cache hit), median of {args.runs} (min-max) | {warm:.3f} s ({warm_runs[0]:.3f}-{warm_runs[-1]:.3f}) | < 1 s | {ok(warm < 1.0)} |

Each figure is the wall time of a fresh `python -m vgprscope ...` process. The cold run pays for starting
{min(cores, len(rows))} worker processes and importing Triton in each; the compiles themselves are the
same as in the single-threaded run.
"""
    atomic_write(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
