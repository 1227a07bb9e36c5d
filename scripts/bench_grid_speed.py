"""Time a 500-compile config grid on the local process pool and on a 2-worker Dask LocalCluster, and write
the result into reports/tool-speed.md (between the grid-speed markers; the rest of the file is kept).

    python scripts/bench_grid_speed.py [--workers 2] [--out reports/tool-speed.md]

Both runs are the same fresh `python -m vgprscope analyze` command with an empty compile cache; the Dask run
adds `--scheduler` pointing at a LocalCluster of ``--workers`` single-threaded worker processes started here.
The load average before and after each run is recorded: on a machine shared with other work the timings
include that contention, and the report says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from _speed import QUIET_LOAD_PER_CORE, wait_for_quiet  # noqa: E402

# 2 BLOCK_M x 2 BLOCK_N x 5 head dims x 5 waves_per_eu x 5 num_warps = 500 specialisations of the baseline on
# gfx942; small tiles keep each compile short, so the grid measures the pool more than one heavy compile
GRID = ["--variant", "baseline", "--arch", "gfx942", "--block-m", "16,32", "--block-n", "16,32",
        "--head-dim", "16,32,48,64,80", "--waves-per-eu", "0,1,2,3,4", "--num-warps", "1,2,4,8,16",
        "--num-stages", "1"]
# --quick: 50 of them (2 BLOCK_M x 5 head dims x 5 waves_per_eu, 4 warps), for a machine too busy for 500
QUICK = ["--variant", "baseline", "--arch", "gfx942", "--block-m", "16,32", "--block-n", "16",
         "--head-dim", "16,32,48,64,80", "--waves-per-eu", "0,1,2,3,4", "--num-warps", "4", "--num-stages", "1"]
BEGIN, END = "<!-- grid-speed -->", "<!-- /grid-speed -->"


# The grid's own two workers keep the load near 2 while they run, so only the load before the first run says
# whether other work shared the machine (_speed.wait_for_quiet waits for a quiet start).


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, list[dict], tuple[float, float]]:
    before = os.getloadavg()[0]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = os.getloadavg()[0]
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return wall, json.loads(out.stdout)["rows"], (before, after)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "tool-speed.md")
    ap.add_argument("--quick", action="store_true", help="the 50-compile grid instead of the 500-compile one")
    args = ap.parse_args()
    grid = QUICK if args.quick else GRID

    from distributed import LocalCluster

    from vgprscope.core.fsutil import atomic_write
    from vgprscope.report.machine import compile_only

    exe = [sys.executable, "-m", "vgprscope", "analyze", *grid, "--yes", "--format", "json"]
    base_env = dict(os.environ)
    base_env.pop("TRITON_INTERPRET", None)
    results = {}
    cores = os.cpu_count() or 1
    start_load = wait_for_quiet(cores)
    with tempfile.TemporaryDirectory() as local_cache, tempfile.TemporaryDirectory() as dask_cache:
        results["local"] = run(exe + ["--jobs", str(args.workers)], base_env | {"VGPRSCOPE_CACHE_DIR": local_cache})
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            results["dask"] = run(exe + ["--scheduler", cluster.scheduler_address],
                                  base_env | {"VGPRSCOPE_CACHE_DIR": dask_cache})
        warm = run(exe, base_env | {"VGPRSCOPE_CACHE_DIR": dask_cache})

    rows = results["local"][1]
    n = len({r["config_key"] for r in rows})
    ok = sum(r["status"] == "ok" for r in rows)
    compile_sum = sum(r["compile_seconds"] for r in rows)
    same = [(r["config_key"], r["status"], r["usage"]) for r in rows] == \
        [(r["config_key"], r["status"], r["usage"]) for r in results["dask"][1]]
    shared = start_load > QUIET_LOAD_PER_CORE * cores
    machine = compile_only()
    table = "\n".join(
        f"| {name} | {wall:.1f} s | {n / wall:.2f} | {lb:.1f} / {la:.1f} |"
        for name, (wall, _, (lb, la)) in ((f"local process pool, `--jobs {args.workers}`", results["local"]),
                                          (f"Dask LocalCluster, {args.workers} workers x 1 thread, `--scheduler`",
                                           results["dask"])))
    section = f"""{BEGIN}
## A {n}-compile config grid: local pool and Dask

Machine: {machine.line()}; {cores} cores ({os.uname().machine}); 1-minute load average {start_load:.2f} when the runs began{" (**other work was running**: the times include it)" if shared else " (idle)"}

Reproduce: `python scripts/bench_grid_speed.py --workers {args.workers}{' --quick' if args.quick else ''}` (needs the `distributed` extra)

Grid: `vgprscope analyze {' '.join(grid)}`: {n} specialisations, {ok} ok rows (the rest are rows with the
compiler's or the variant's reason); the sum of the single compiles' own times is {compile_sum:.0f} s.
Each run is a fresh process with an empty compile cache.

| run | wall | compiles/s | load average before / after |
|---|---|---|---|
{table}
| re-run after the Dask run (the client wrote the cache) | {warm[0]:.1f} s | - | {warm[2][0]:.1f} / {warm[2][1]:.1f} |

The Dask run's rows equal the local run's (status and usage of every row): {"yes" if same else "**no**"}.
Both runs use {args.workers} worker processes on the same {cores} cores, so Dask is not expected to be faster
here: its row is the cost of the scheduler round trips; it pays off when the workers are other machines.
{END}
"""
    text = args.out.read_text() if args.out.exists() else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + section.rstrip("\n") + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    atomic_write(args.out, text)
    print(section)


if __name__ == "__main__":
    main()
