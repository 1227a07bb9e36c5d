"""Time toolchains (issue 20) and write them into reports/tool-speed.md (the "toolchain-speed" section).

    python scripts/bench_toolchain_speed.py [--release 3.8.0] [--runs 7] [--workers 2]

1. Creating the toolchain of one release, cold (an empty toolchain store): once with uv on PATH, once
   without (venv + pip). Both install from the package index this machine's pip / uv are configured with.
2. `vgprscope diff --triton RELEASE --triton INSTALLED` on the bundled defaults with an empty compile cache,
   `--jobs 1` and `--jobs N`: the compiles under both toolchains share the cores.
3. The same diff again (warm: nothing compiles; target < 1 s), median of --runs.
4. The same diff, cold, on a Dask LocalCluster of --workers single-threaded workers (`--scheduler`): the
   workers find the release in the same toolchain store; its rows are compared with the local run's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _speed import REPORT, clean_env, load_note, timed, wait_for_quiet, write_section  # noqa: E402


def _without_uv(path: str) -> str:
    return os.pathsep.join(d for d in path.split(os.pathsep) if not (Path(d) / "uv").exists())


def _rows(out) -> list[dict]:
    """The diff's CSV: one row per entry and metric, both sides, the change, the verdict."""
    import csv
    import io

    return list(csv.DictReader(io.StringIO(out.stdout)))


def _numbers(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(r.values()) for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default="3.8.0", help="the other release (the installed one is the second side)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=REPORT)
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from distributed import LocalCluster

    from vgprscope.compile.engine import triton_version
    from vgprscope.compile.toolchains import MARKER
    from vgprscope.report.machine import compile_only

    here = triton_version()
    cores = os.cpu_count() or 1
    load = wait_for_quiet(cores)
    has_uv = shutil.which("uv") is not None
    creation = {}
    with tempfile.TemporaryDirectory() as tmp:
        for with_uv in ([True] if has_uv else []) + [False]:
            store = f"{tmp}/store-{'uv' if with_uv else 'pip'}"
            env = clean_env(VGPRSCOPE_TOOLCHAIN_DIR=store)
            if not with_uv:
                env["PATH"] = _without_uv(env.get("PATH", ""))
            code = f"from vgprscope.compile.toolchains import release; release({args.release!r})"
            wall, _ = timed([sys.executable, "-c", code], env)
            marker = next(Path(store).glob(f"triton-{args.release}-*/{MARKER}"))
            size = sum(f.stat().st_size for f in marker.parent.rglob("*") if f.is_file() and not f.is_symlink())
            creation["uv" if with_uv else "venv + pip"] = (wall, json.loads(marker.read_text())["seconds"], size)
        store = f"{tmp}/store-{'uv' if has_uv else 'pip'}"  # kept: the diffs below use it

        diff = [sys.executable, "-m", "vgprscope", "diff", "--triton", args.release, "--triton", here,
                "--format", "csv"]
        ok = (0, 1)  # 1: the diff found a regression, which is a result, not a failure of the run
        cold = {}
        for jobs in (1, cores):
            env = clean_env(VGPRSCOPE_TOOLCHAIN_DIR=store, VGPRSCOPE_CACHE_DIR=f"{tmp}/cache-j{jobs}")
            cold[jobs] = timed(diff + ["--jobs", str(jobs)], env, ok)
        env = clean_env(VGPRSCOPE_TOOLCHAIN_DIR=store, VGPRSCOPE_CACHE_DIR=f"{tmp}/cache-j{cores}")
        warm = [timed(diff, env, ok)[0] for _ in range(args.runs)]

        os.environ["VGPRSCOPE_TOOLCHAIN_DIR"] = store  # the LocalCluster's workers inherit it
        os.environ.pop("TRITON_INTERPRET", None)
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            env = clean_env(VGPRSCOPE_TOOLCHAIN_DIR=store, VGPRSCOPE_CACHE_DIR=f"{tmp}/cache-dask")
            dask = timed(diff + ["--scheduler", cluster.scheduler_address], env, ok)

    rows = _rows(cold[cores][1])
    same_jobs = _numbers(_rows(cold[1][1])) == _numbers(rows)
    same_dask = _numbers(_rows(dask[1])) == _numbers(rows)
    entries = {r["key"] for r in rows}
    results = sorted({r["result"] for r in rows})
    yes = lambda b: "yes" if b else "**no**"  # noqa: E731
    machine = compile_only()
    creation_rows = "\n".join(
        f"| create the Triton {args.release} toolchain, {how}, empty store | {wall:.1f} s (install {sec:.1f} s; "
        f"{size / 2**20:.0f} MB) | once per release | - |" for how, (wall, sec, size) in creation.items())
    section = f"""
## Toolchains: another Triton release beside the installed one (issue 20)

Machine: {machine.line()}; {cores} cores ({os.uname().machine}); {load_note(load, cores)}

Reproduce: `python scripts/bench_toolchain_speed.py --release {args.release} --runs {args.runs} --workers {args.workers}` (needs the `distributed` extra)

Diff: `vgprscope diff --triton {args.release} --triton {here}` on the bundled defaults: {len(entries)} kernels x arch x config (results: {', '.join(results)}).
The installed Triton ({here}) is the second side; the first is the toolchain. Every run is a fresh process;
"cold" is an empty compile cache (the toolchain already installed).

| measurement | value | target | met |
|---|---|---|---|
{creation_rows}
| cold diff, `--jobs 1` | {cold[1][0]:.1f} s | - | - |
| cold diff, `--jobs {cores}` | {cold[cores][0]:.1f} s | faster than `--jobs 1` | {yes(cold[cores][0] < cold[1][0])} |
| cold diff, Dask LocalCluster, {args.workers} workers x 1 thread (`--scheduler`) | {dask[0]:.1f} s | - | - |
| warm diff (nothing compiles), median of {args.runs} (min-max) | {statistics.median(warm):.3f} s ({min(warm):.3f}-{max(warm):.3f}) | < 1 s | {yes(statistics.median(warm) < 1.0)} |

The `--jobs 1`, `--jobs {cores}` and Dask runs give the same rows: {yes(same_jobs and same_dask)}.
The installs come from the package index this machine's pip and uv use (a local mirror here), through their
own download caches (uv links the files its cache already holds: under a second once any release was installed
with it): on a machine that downloads the wheel from PyPI for the first time, add that download. uv is not a dependency of vgprscope: without it on
PATH a toolchain is a `venv` and pip.
"""
    write_section("toolchain-speed", section, args.out)
    print(section)


if __name__ == "__main__":
    main()
