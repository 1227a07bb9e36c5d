"""Measure the tool's own speed and write it into reports/tool-speed.md (the "startup" section).

    python scripts/bench_tool_speed.py [--runs 7] [--cold-runs 3] [--old /path/to/other/venv/bin/python]

1. `vgprscope --help`: median wall time of several runs (target < 0.2 s: no triton / torch / pandas import).
2. The single-threaded compile time of every row of `vgprscope analyze` on its defaults (`--jobs 1`,
   empty cache): the sum of the rows' compile seconds.
3. A cold `vgprscope analyze` on the defaults with all cores and an empty cache (target: at most
   1.15 x (sum of single-threaded compile times / cores) + 2 s).
4. The same command again with the cache warm (target < 0.3 s).
With --old, the Python of another installation of vgprscope (an older checkout's environment) is timed on
1, 3 and 4 too, its runs alternating with this one's so that both see the same machine, and the cold run's
target becomes "within 5 % of the old one"; its rows are compared with this one's (the same numbers).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _speed import REPORT, clean_env, load_note, timed, wait_for_quiet, write_section  # noqa: E402


def _git_of(python: str) -> str:
    """The commit of the checkout that ``python``'s vgprscope is imported from."""
    where = subprocess.run([python, "-c", "import vgprscope, os; print(os.path.dirname(vgprscope.__file__))"],
                           capture_output=True, text=True, cwd="/").stdout.strip()
    sha = subprocess.run(["git", "-C", where, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    return sha.stdout.strip() or "?"


def _version_of(python: str, dist: str) -> str:
    out = subprocess.run([python, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                         capture_output=True, text=True, cwd="/")
    return out.stdout.strip() or "?"


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} s ({min(xs):.3f}-{max(xs):.3f})"


def _numbers(rows: list[dict]) -> dict:
    return {(r.get("variant"), r.get("arch"), r.get("config_key")): (r.get("status"), r.get("usage")) for r in rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--old", help="the Python of another vgprscope installation to time side by side")
    ap.add_argument("--out", type=Path, default=REPORT)
    ap.add_argument("--variant", help="time analyze on these variants only (comma list; both sides): the same "
                                      "selection where the other side lacks a variant")
    args = ap.parse_args()
    pick = ["--variant", args.variant] if args.variant else []

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from vgprscope.report.machine import compile_only

    cores = os.cpu_count() or 1
    sides = {"this": sys.executable} | ({"old": args.old} if args.old else {})
    exe = {k: [py, "-m", "vgprscope"] for k, py in sides.items()}
    load = wait_for_quiet(cores)
    helps: dict[str, list[float]] = {k: [] for k in sides}
    warm: dict[str, list[float]] = {k: [] for k in sides}
    cold: dict[str, list[float]] = {k: [] for k in sides}
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in sides:  # untimed: writes each side's bytecode cache, as any first run does
            timed(exe[k] + ["--help"], clean_env())
        for _ in range(args.runs):
            for k in sides:
                helps[k].append(timed(exe[k] + ["--help"], clean_env())[0])
        single = clean_env(VGPRSCOPE_CACHE_DIR=f"{tmp}/single")
        wall1, out1 = timed(exe["this"] + ["analyze", *pick, "--jobs", "1", "--format", "json"], single)
        compile_sum = sum(r["compile_seconds"] for r in json.loads(out1.stdout)["rows"])
        for i in range(args.cold_runs):
            for k in sides:
                env = clean_env(VGPRSCOPE_CACHE_DIR=f"{tmp}/{k}-cold-{i}")
                dt, out = timed(exe[k] + ["analyze", *pick, "--format", "json"], env)
                cold[k].append(dt)
                rows[k] = json.loads(out.stdout)["rows"]
        for _ in range(args.runs):
            for k in sides:
                env = clean_env(VGPRSCOPE_CACHE_DIR=f"{tmp}/{k}-cold-0")  # warmed by the first cold run
                warm[k].append(timed(exe[k] + ["analyze", *pick, "--format", "json"], env)[0])

    budget = 1.15 * compile_sum / cores + 2.0
    yes = lambda b: "yes" if b else "**no**"  # noqa: E731
    med = {k: {n: statistics.median(v[k]) for n, v in (("help", helps), ("warm", warm), ("cold", cold))}
           for k in sides}
    this_rows = rows["this"]
    counts: dict[str, int] = {}
    for r in this_rows:  # a refusal's reason is a sentence: named by its first words
        word = r["status"] if r["status"] == "ok" else r["status"].split(":")[0] + " (refused)"
        counts[word] = counts.get(word, 0) + 1
    statuses = [f"{w} x{n}" for w, n in sorted(counts.items())]
    table = [
        "| measurement | this checkout | target | met |", "|---|---|---|---|",
        f"| `vgprscope --help`, median of {args.runs} (min-max) | {_spread(helps['this'])} | < 0.2 s | "
        f"{yes(med['this']['help'] < 0.2)} |",
        f"| sum of single-threaded compile times (`--jobs 1`) | {compile_sum:.2f} s (whole run {wall1:.2f} s) | - | - |",
        f"| cold `vgprscope analyze`, {cores} jobs, empty cache, median of {args.cold_runs} | {_spread(cold['this'])} "
        f"| <= 1.15 x {compile_sum:.2f} / {cores} + 2 = {budget:.2f} s | {yes(med['this']['cold'] <= budget)} |",
        f"| warm re-run (cache hit), median of {args.runs} (min-max) | {_spread(warm['this'])} | < 0.3 s | "
        f"{yes(med['this']['warm'] < 0.3)} |",
    ]
    side_by_side = ""
    if args.old:
        old_sha = _git_of(args.old)
        same = _numbers(rows["old"]) == _numbers(this_rows)
        ratio = med["this"]["cold"] / med["old"]["cold"]
        side_by_side = "\n".join([
            f"Side by side with vgprscope at {old_sha} (`--old {args.old}`), runs alternating; typer "
            f"{_version_of(sys.executable, 'typer')} here, {_version_of(args.old, 'typer')} there:", "",
            f"| measurement | this checkout | {old_sha} | this / old | target | met |", "|---|---|---|---|---|---|",
            *(f"| {what} | {_spread(v['this'])} | {_spread(v['old'])} | {med['this'][n] / med['old'][n]:.2f} | "
              f"{target} | {yes(ok)} |"
              for what, n, v, target, ok in (
                  ("`--help`", "help", helps, "< 0.2 s", med["this"]["help"] < 0.2),
                  ("cold `analyze`", "cold", cold, "within 5 % of old", ratio <= 1.05),
                  ("warm `analyze`", "warm", warm, "< 0.3 s", med["this"]["warm"] < 0.3))),
            "",
            f"The two give the same rows (status and usage of each variant x arch x config): {yes(same)}.", ""])
    machine = compile_only()
    reproduce = f"python scripts/bench_tool_speed.py --runs {args.runs} --cold-runs {args.cold_runs}" + (
        " --old OLD_VENV/bin/python" if args.old else "") + (f" --variant {args.variant}" if args.variant else "")
    section = f"""
## Start-up, cold and warm `analyze`{" of a selection both sides have" if args.variant else ""}

Machine: {machine.line()}; {cores} cores ({os.uname().machine}); {load_note(load, cores)}

Reproduce: `{reproduce}`

`vgprscope analyze` on {"variants " + args.variant if args.variant else "its defaults"} is {len(this_rows)} rows ({len({(r['variant'], r['arch']) for r in this_rows})} variant x arch
compiles); row statuses: {', '.join(statuses)}.

{chr(10).join(table)}

{side_by_side}
Each figure is the wall time of a fresh `python -m vgprscope ...` process. The cold run pays for starting
{min(cores, len(this_rows))} worker processes and importing Triton in each; the compiles themselves are the
same as in the single-threaded run.
"""
    write_section("startup-selected" if args.variant else "startup", section, args.out)
    print(section)


if __name__ == "__main__":
    main()
