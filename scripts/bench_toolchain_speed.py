"""Time toolchains (issue 20) and write them into reports/tool-speed.md (the "toolchain-speed" section; with
--reuse the "toolchain-reuse" section).

    python scripts/bench_toolchain_speed.py [--release 3.8.0] [--runs 7] [--workers 2]
    python scripts/bench_toolchain_speed.py --reuse [--release 3.8.0] [--arch gfx942,sm_90] [--calls 2] [--runs 7]
                                            [--checkout DIR ...]

1. Creating the toolchain of one release, cold (an empty toolchain store): once with uv on PATH, once
   without (venv + pip). Both install from the package index this machine's pip / uv are configured with.
2. `vgprscope diff --triton RELEASE --triton INSTALLED` on the bundled defaults with an empty compile cache,
   `--jobs 1` and `--jobs N`: the compiles under both toolchains share the cores.
3. The same diff again (warm: nothing compiles; target < 1 s), median of --runs.
4. The same diff, cold, on a Dask LocalCluster of --workers single-threaded workers (`--scheduler`): the
   workers find the release in the same toolchain store; its rows are compared with the local run's.

--reuse (issue 36): consecutive ``vgprscope.analyze(triton=RELEASE)`` calls in one process (a library user's loop,
a notebook). Each run is a fresh process making ``--calls`` calls of ``analyze`` on one bundled config under the
release, ``use_cache=False`` (every call compiles: what a call costs beyond its compiles is its workers). A call
past the first finds the release's ``--serve`` workers that the first started (one pool per toolchain per process),
where each call once started its own (each imports that Triton). ``--checkout DIR`` (repeatable): the source trees
to time side by side, their runs alternating so that all see the same machine (default: this checkout); an older
checkout is timed by putting it first on PYTHONPATH under this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _speed import REPORT, ROOT, clean_env, load_note, timed, wait_for_quiet, write_section  # noqa: E402


def _without_uv(path: str) -> str:
    return os.pathsep.join(d for d in path.split(os.pathsep) if not (Path(d) / "uv").exists())


def _rows(out) -> list[dict]:
    """The diff's CSV: one row per entry and metric, both sides, the change, the verdict."""
    import csv
    import io

    return list(csv.DictReader(io.StringIO(out.stdout)))


def _numbers(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(r.values()) for r in rows)


# one process: the calls, each call's wall time printed as a JSON list
CALLS = r"""
import json, sys, time
import vgprscope

release, archs, calls = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
walls = []
for _ in range(calls):
    t0 = time.perf_counter()
    records = vgprscope.analyze(variant="baseline", arch=archs, block_m=64, block_n=32, head_dim=64, num_warps=4,
                                num_stages=1, triton=release, jobs=len(archs), use_cache=False).records
    walls.append(time.perf_counter() - t0)
    if not all(r.ok and r.triton_version == release for r in records):
        sys.exit(f"a row did not compile under {release}: {[r.status for r in records]}")
print(json.dumps(walls))
"""


def _git_of(checkout: Path) -> str:
    out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                         text=True)
    return out.stdout.strip() or "?"


def _run(checkout: Path, args: argparse.Namespace) -> list[float]:
    env = clean_env(PYTHONPATH=str(checkout))
    done = subprocess.run([sys.executable, "-c", CALLS, args.release, args.arch, str(args.calls)],
                          capture_output=True, text=True, env=env, cwd="/")
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {done.stderr.strip()[-2000:]}")
    walls: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return walls


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"


def reuse(args: argparse.Namespace) -> None:
    checkouts = [c.resolve() for c in args.checkout or [ROOT]]

    sys.path.insert(0, str(ROOT))
    from vgprscope.compile.toolchains import release
    from vgprscope.report.machine import compile_only

    release(args.release, print)  # installed before any run is timed
    cores = os.cpu_count() or 1
    load = wait_for_quiet(cores)
    runs: dict[Path, list[list[float]]] = {c: [] for c in checkouts}
    for _ in range(args.runs):
        for c in checkouts:
            runs[c].append(_run(c, args))
    rows = []
    for c in checkouts:
        first = [r[0] for r in runs[c]]
        later = [w for r in runs[c] for w in r[1:]]
        whole = [sum(r) for r in runs[c]]
        rows.append(f"| {_git_of(c)} | {_spread(first)} | {_spread(later) if later else '-'} | {_spread(whole)} |")
    section = f"""
## Consecutive `analyze(triton=...)` calls in one process (issue 36)

Machine: {compile_only().line()}; {cores} cores ({os.uname().machine}); {load_note(load, cores)}

Reproduce: `python scripts/bench_toolchain_speed.py --reuse --release {args.release} --arch {args.arch} --calls {args.calls} \
--runs {args.runs}{''.join(' --checkout ' + ('.' if c == ROOT else 'OLD_CHECKOUT') for c in checkouts if args.checkout)}`

{args.calls} calls of `vgprscope.analyze(variant="baseline", arch=[{args.arch}], <one config>, triton="{args.release}",
use_cache=False)` in one fresh process, {args.runs} runs (checkouts alternating): each call compiles one kernel per
arch on as many workers. Wall time, median (min-max).

| checkout | first call | each later call | the process's calls together |
|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("toolchain-reuse", section, args.out)
    print(section)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default="3.8.0", help="the other release (the installed one is the second side)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=REPORT)
    ap.add_argument("--reuse", action="store_true", help="consecutive analyze(triton=...) calls in one process")
    ap.add_argument("--arch", default="gfx942,sm_90", help="--reuse: comma list, one compile (and worker) per arch")
    ap.add_argument("--calls", type=int, default=2, help="--reuse: analyze calls per process")
    ap.add_argument("--checkout", type=Path, action="append", help="--reuse: a source tree to time (repeatable)")
    args = ap.parse_args()
    if args.reuse:
        reuse(args)
        return

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
