"""Measure the tool's own speed and write it into reports/tool-speed.md (the "startup" section; with --floors the
"floors" section).

    python scripts/bench_tool_speed.py [--runs 7] [--cold-runs 3] [--old /path/to/other/venv/bin/python]
    python scripts/bench_tool_speed.py --floors [--cold-runs 3] [--runs 7] [--release 3.8.0]

--floors measures each command against the floor of what it does, side by side in one run: a cold `analyze` of
the bundled set and a cold `scan` of an Inductor cache against `triton.compile` of the same jobs (CPU time), a cold
`scan` of a cubin cache against cuobjdump over the same cubins, warm `diff` and history on a capture whose module
imports torch (under 1 s).

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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _speed import REPORT, ROOT, clean_env, load_note, measured, timed, wait_for_quiet, write_section  # noqa: E402


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


def same_rows(old: list[dict], new: list[dict]) -> str:
    """Whether two sides' rows agree (status and usage of each variant x arch x config), comparing the usage
    fields both report; otherwise which rows or fields differ, and the fields only one side reports."""
    a, b = _numbers(old), _numbers(new)
    if a.keys() != b.keys():
        return f"**no**: rows only there {sorted(map(str, a.keys() - b.keys()))}, only here {sorted(map(str, b.keys() - a.keys()))}"
    differ: set[str] = set()
    only: dict[str, set[str]] = {"here": set(), "there": set()}
    for k, (status_a, ua) in a.items():
        status_b, ub = b[k]
        if status_a != status_b:
            differ.add("status")
        ua, ub = ua or {}, ub or {}
        only["here"] |= ub.keys() - ua.keys()
        only["there"] |= ua.keys() - ub.keys()
        differ |= {f for f in ua.keys() & ub.keys() if ua[f] != ub[f]}
    extra = "; ".join(f"fields only {side}: {', '.join(sorted(fs))}" for side, fs in only.items() if fs)
    verdict = "yes" if not differ else f"**no**, they differ in {', '.join(sorted(differ))}"
    return verdict + (f" ({extra}, not compared)" if extra else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--old", help="the Python of another vgprscope installation to time side by side")
    ap.add_argument("--out", type=Path, default=REPORT)
    ap.add_argument("--variant", help="time analyze on these variants only (comma list; both sides): the same "
                                      "selection where the other side lacks a variant")
    ap.add_argument("--floors", action="store_true",
                    help="each command against its floor (cold analyze and an Inductor scan against triton.compile, "
                         "a cubin scan against cuobjdump, warm diff and history): the report's floors section")
    ap.add_argument("--release", default="3.8.0", help="--floors: the other Triton of the warm diff and history")
    ap.add_argument("--inductor-cache", type=Path,
                    help="only the Inductor scan's row, of this tarball of an Inductor cache (its inductor/ "
                         "directory), against triton.compile of the same kernels; printed, the report left as is")
    args = ap.parse_args()
    if args.inductor_cache:
        with tempfile.TemporaryDirectory(prefix="vgprscope-floors-") as tmp_:
            tmp = Path(tmp_)
            print(inductor_floor([sys.executable, "-m", "vgprscope"], clean_env(TRITON_CACHE_DIR=str(tmp / "tc")),
                                 tmp, args.inductor_cache, args.cold_runs))
        return
    if args.floors:
        section = floors_section(args)
        write_section("floors", section, args.out)
        print(section)
        return
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
        same = same_rows(rows["old"], this_rows)
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
            f"The two give the same rows (status and usage of each variant x arch x config): {same}.", ""])
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


# ---- --floors: each command against the floor of what it does, side by side in one run (issue 37) -----------

# Run as ``python -c FLOOR_COMPILE JOBS.json``: triton.compile of each job, one process, nothing else: the
# compiler's own cost (the compile worker's environment and the launch's ASTSource, as a worker builds them).
FLOOR_COMPILE = r"""
import json, os, sys, tempfile
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from vgprscope.runtime import current, protocol, scratch, snapshot
from vgprscope.runtime.compile import _function_source, _lld_for, _snapshot_reason
for job in json.load(open(sys.argv[1])):
    (kind, source), = job["source"].items()
    t = job["target"]
    target = GPUTarget(t["backend"], t["arch"], t["warp_size"])
    with protocol.compile_env(job.get("settings")):
        backend = make_backend(target)
        if t["backend"] == "hip":
            _lld_for(backend)
        if kind == "function":
            # the current file (imported, or read statically where it does not import), as the worker does; a
            # module vgprscope reads but never runs (Inductor's generated ones) from its source text
            if _snapshot_reason(source) is None:
                fn, _ = current.function(source, static_only=source.get("load") == "static")
                if source.get("snapshot"):
                    snapshot.bind_recorded_names(fn, json.loads(source["snapshot"]))
            else:
                fn = snapshot.load_snapshot(json.loads(source["snapshot"]), scratch.worker_dir())
            src = _function_source(fn, job, backend)
        else:
            f = tempfile.NamedTemporaryFile("w", suffix="." + source["suffix"], delete=False)
            f.write(source["text"]); f.close(); src = f.name
        try:
            triton.compile(src, target=target, options=dict(job.get("options") or {}))
        except Exception as exc:  # a compile vgprscope reports as a failed row fails here too
            print(f"{type(exc).__name__}", file=sys.stderr)
"""

def _jobs_of(cache: Path) -> Path:
    """The compile jobs a run put in its (empty before) vgprscope cache, as a JSON list beside it: a stored
    cubin's entry is a read, not a compile, and is left out."""
    jobs = []
    for p in sorted(cache.glob("*/*.json")):
        entry = json.loads(p.read_text())
        if isinstance(entry.get("job"), dict) and "stored" not in entry["job"].get("source", {}):
            jobs.append(entry["job"])
    out = cache.parent / f"{cache.name}-jobs.json"
    out.write_text(json.dumps(jobs))
    return out


def _ratio_rows(pairs: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    """Medians of (wall, cpu) per side."""
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in pairs.items()}


def _against_compile_floor(cmd: list[str], env: dict[str, str], cmd_env: dict[str, str], tmp: Path, name: str,
                           runs: int) -> tuple[dict[str, Any], int]:
    """A cold vgprscope command (an empty vgprscope cache and Triton cache of its own, and ``cmd_env``) and
    ``triton.compile`` of the very jobs it compiled (read back from its cache, one process), alternately, ``runs``
    times: the medians of (wall, CPU) of each side ("run", "floor") and the number of jobs."""
    pairs: dict[str, list[tuple[float, float]]] = {"run": [], "floor": []}
    n_jobs = 0
    for i in range(runs):
        vc = tmp / f"{name}-{i}"
        own = {"VGPRSCOPE_CACHE_DIR": str(vc), "TRITON_CACHE_DIR": str(tmp / f"tc-{name}-{i}")}
        wall, cpu, _ = measured(cmd, env | own | cmd_env)
        pairs["run"].append((wall, cpu))
        jobs = _jobs_of(vc)
        n_jobs = len(json.loads(jobs.read_text()))
        wall, cpu, _ = measured([sys.executable, "-c", FLOOR_COMPILE, str(jobs)],
                                env | {"TRITON_CACHE_DIR": str(tmp / f"tc-{name}-floor-{i}")})
        pairs["floor"].append((wall, cpu))
    return _ratio_rows(pairs), n_jobs


def _triton_cache(tmp: Path, sources: list[list[str]], env: dict[str, str]) -> Path:
    """A Triton cache as a GPU run leaves it, made here without a GPU: ``triton.compile`` writes
    TRITON_CACHE_DIR without a device (each command of ``sources`` run with it set)."""
    cache = tmp / "triton-cache"
    for cmd in sources:
        timed(cmd, env | {"TRITON_CACHE_DIR": str(cache), "VGPRSCOPE_CACHE_DIR": str(tmp / "fill")})
    return cache


def floors(args: argparse.Namespace) -> str:
    exe = [sys.executable, "-m", "vgprscope"]
    runs = args.cold_runs
    yes = lambda b: "yes" if b else "**no**"  # noqa: E731
    rows = _Rows()
    with tempfile.TemporaryDirectory(prefix="vgprscope-floors-") as tmp_:
        tmp = Path(tmp_)
        env = clean_env(TRITON_CACHE_DIR=str(tmp / "tc"))

        # 1. cold analyze (its default table) against triton.compile of the same jobs
        m, n_jobs = _against_compile_floor(exe + ["analyze"], env, {}, tmp, "analyze", runs)
        ratio = m["run"][1] / m["floor"][1]
        rows.append(f"| cold `vgprscope analyze` (bundled set, default archs: {n_jobs} compiles), CPU time | "
                    f"{m['run'][1]:.1f} s (wall {m['run'][0]:.1f} s) | `triton.compile` of the same "
                    f"{n_jobs} jobs, one process: {m['floor'][1]:.1f} s (wall {m['floor'][0]:.1f} s) | "
                    f"**{ratio:.2f}x** | <= 1.10x | {yes(ratio <= 1.10)} |")

        # 2. cold scan of a cubin cache against cuobjdump over the same cubins (one process each)
        cubins_cache = _triton_cache(tmp, [exe + ["analyze", "--arch", "sm_80", "--arch", "sm_90", "--no-cache",
                                                   "--format", "csv"]], env)
        cubins = sorted(cubins_cache.rglob("*.cubin"))
        sys.path.insert(0, str(ROOT))
        from vgprscope.runtime.stored import _nvidia_tool

        cuobjdump = _nvidia_tool("cuobjdump")
        scan: dict[str, list[tuple[float, float]]] = {"scan": [], "floor": []}
        for i in range(runs):
            wall, cpu, _ = measured(exe + ["scan", str(cubins_cache)],
                                     env | {"VGPRSCOPE_CACHE_DIR": str(tmp / f"scan-{i}")})
            scan["scan"].append((wall, cpu))
            loop = ["bash", "-c", 'for c in "$@"; do "$0" -res-usage "$c" > /dev/null; done', cuobjdump,
                    *map(str, cubins)]
            wall, cpu, _ = measured(loop, env)
            scan["floor"].append((wall, cpu))
        m = _ratio_rows(scan)
        ratio = m["scan"][0] / m["floor"][0]
        rows.append(f"| cold `vgprscope scan` of a Triton cache of {len(cubins)} cubins (the bundled set on sm_80 and "
                    f"sm_90, made here), wall | {m['scan'][0]:.2f} s (CPU {m['scan'][1]:.2f} s) | `cuobjdump "
                    f"-res-usage` over the same cubins, one process each: {m['floor'][0]:.2f} s (CPU "
                    f"{m['floor'][1]:.2f} s) | **{ratio:.1f}x** | <= 30x | {yes(ratio <= 30)} |")

        # 3. cold scan of an Inductor cache against triton.compile of the same generated modules
        rows.append(inductor_floor(exe, env, tmp, INDUCTOR_CACHE, runs))

        # 4. warm diff and history on a capture whose module imports torch
        proj = tmp / "proj"
        proj.mkdir()
        (proj / "ops.py").write_text(TORCH_OPS)
        (proj / "run.py").write_text(TORCH_RUN)
        cap = proj / "cap.json"
        venv = clean_env(VGPRSCOPE_CACHE_DIR=str(tmp / "warm"), TRITON_CACHE_DIR=str(tmp / "tc-w"))
        timed(exe + ["capture", "-o", str(cap), "--", sys.executable, "run.py"], venv | {"TRITON_INTERPRET": "1"},
              cwd=str(proj))
        warm_cmds = {
            "diff": ["diff", "--triton", args.release, "--triton", "installed", "--capture", str(cap), "--arch",
                     "gfx942"],
            "history": ["analyze", "--triton", args.release, "--triton", "installed", "--capture", str(cap),
                        "--arch", "gfx942"],
        }
        for cmd in warm_cmds.values():
            timed(exe + cmd, venv, ok=(0, 1), cwd=str(proj))  # cold: fills the cache
            warm = [measured(exe + cmd, venv, cwd=str(proj), ok=(0, 1))[:2] for _ in range(args.runs)]
            walls, cpus = [w for w, _ in warm], [c for _, c in warm]
            med = statistics.median(walls)
            rows.append(f"| warm `vgprscope {cmd[0]}` (`{' '.join(cmd[1:5])} ...`, a capture whose module imports "
                        f"torch), median of {args.runs} | wall {_spread(walls)}, CPU {statistics.median(cpus):.2f} s "
                        f"| - | - | < 1 s wall | {yes(med < 1.0)} |")
    return "\n".join(["| measurement | vgprscope | floor | ratio | target | met |", "|---|---|---|---|---|---|",
                      *rows])


class _Rows(list):  # type: ignore[type-arg]
    """The table's rows, each also printed as it is measured (a run cut short keeps what it measured)."""

    def append(self, row: str) -> None:
        print(row, flush=True)
        super().append(row)


INDUCTOR_CACHE = ROOT / "tests" / "fixtures" / "inductor_block_h100_cache.tar.xz"

TORCH_OPS = '''import torch  # a user's module imports torch at its top: a warm run must not import it
import triton
import triton.language as tl


@triton.jit
def scale(X, Y, n, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * alpha, mask=i < n)


def run(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), 0.5, BLOCK=256)
    return y
'''

TORCH_RUN = '''import torch
from ops import run

x = torch.randn(1000)
torch.testing.assert_close(run(x), x * 0.5)
'''


def inductor_floor(exe: list[str], env: dict[str, str], tmp: Path, tarball: Path, runs: int) -> str:
    """The table's row of a cold ``vgprscope scan`` of the Inductor cache in ``tarball`` against
    ``triton.compile`` of the same generated kernels, alternately, medians of ``runs``."""
    import tarfile

    with tarfile.open(tarball) as tar:
        tar.extractall(tmp / "inductor", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    inductor = tmp / "inductor" / "inductor"
    # the installed Triton compiles them (no toolchain of the release that wrote the cache at hand), as the floor does
    m, n_ind = _against_compile_floor(exe + ["scan", str(inductor)], env,
                                      {"VGPRSCOPE_TOOLCHAIN_DIR": str(tmp / "no-toolchains")}, tmp, "ind", runs)
    ratio = m["run"][1] / m["floor"][1]
    yes = "yes" if ratio <= 1.20 else "**no**"
    return (f"| cold `vgprscope scan` of an Inductor cache (`{tarball.name}`: {n_ind} compiles), CPU time | "
            f"{m['run'][1]:.1f} s (wall {m['run'][0]:.1f} s) | `triton.compile` of the same generated kernels, "
            f"one process: {m['floor'][1]:.1f} s (wall {m['floor'][0]:.1f} s) | **{ratio:.2f}x** | <= 1.20x | "
            f"{yes} |")


def floors_section(args: argparse.Namespace) -> str:
    sys.path.insert(0, str(ROOT))
    from vgprscope.report.machine import compile_only

    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    table = floors(args)
    return f"""
## Each command against the floor of what it does (issue 37)

Machine: {compile_only().line()}; {cores} cores ({os.uname().machine}); {load_note(load, cores)}. This machine is
shared with other engineers' tests and compiles: absolute times move with their load, so each vgprscope run is
measured beside its floor, alternately, in one run of the script, and the ratios are what to read.

Reproduce: `python scripts/bench_tool_speed.py --floors --cold-runs {args.cold_runs} --runs {args.runs} --release {args.release}`

{table}

CPU time is user + system of every process a command starts (its compile workers, ptxas, nvdisasm, cuobjdump:
the command runs under a child subreaper that reaps them all), medians of {args.cold_runs} alternating cold runs
(an empty vgprscope cache and an empty Triton cache each). The floor of a compile is `triton.compile` of the very
jobs vgprscope compiled (read back from its cache), one after the other in one process, under the compile
worker's environment; a stored cubin's floor is reading its resource usage with cuobjdump. A warm command is the
same command again once the cache holds its compiles: the capture's module imports torch, which a warm run does
not import.
"""


if __name__ == "__main__":
    main()
