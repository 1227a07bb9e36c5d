"""What `vgprscope capture` adds to the wall time of the user's command (issue: at most 10 %).

Runs COMMAND alone and under `vgprscope capture` alternately, REPEATS times each, and prints the median
wall times and the overhead. Default command: the liger-kernel ops script of the third-party report, with
`--stock-interpreter` under TRITON_INTERPRET=1 (the ops Triton's interpreter runs without capture's fixes,
so the command also runs alone).

    # CPU, Triton's interpreter (the figure in reports/tool-speed.md)
    TRITON_INTERPRET=1 python scripts/bench_capture_overhead.py --repeats 5
    # GPU machine (JIT path): the same without TRITON_INTERPRET
    python scripts/bench_capture_overhead.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children): on a shared machine the CPU time is
    the steadier figure, the wall time the one the issue names."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-500:]}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("command", nargs="*", help="the command to time [default: python -m tools.reports.workloads.liger_ops]")
    args = ap.parse_args()
    interpreting = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
    command = args.command or [sys.executable, "-m", "tools.reports.workloads.liger_ops",
                               *(["--stock-interpreter"] if interpreting else [])]
    with tempfile.TemporaryDirectory() as tmp:
        captured = [sys.executable, "-m", "vgprscope", "capture", "-o", f"{tmp}/cap.json", "--", *command]
        wall(command)  # warm the file cache and Triton's caches once, for both
        plain, under = [], []
        for _ in range(args.repeats):
            plain.append(wall(command))
            under.append(wall(captured))
        summary = json.loads(Path(f"{tmp}/cap.json").read_text())
    p, c = statistics.median(w for w, _ in plain), statistics.median(w for w, _ in under)
    pc, cc = statistics.median(t for _, t in plain), statistics.median(t for _, t in under)
    fig = {"command": " ".join(command), "interpreter": interpreting,
           "repeats": args.repeats, "plain_s": round(p, 3), "capture_s": round(c, 3),
           "overhead_pct": round(100 * (c - p) / p, 1), "plain_cpu_s": round(pc, 3), "capture_cpu_s": round(cc, 3),
           "cpu_overhead_pct": round(100 * (cc - pc) / pc, 1), "plain_all": [round(w, 3) for w, _ in plain],
           "capture_all": [round(w, 3) for w, _ in under], "launches_recorded": len(summary["launches"]),
           "load_average": [round(x, 1) for x in os.getloadavg()], "cores": os.cpu_count()}
    print(json.dumps(fig, indent=1))
    if args.json:
        args.json.write_text(json.dumps(fig, indent=1) + "\n")


if __name__ == "__main__":
    main()
