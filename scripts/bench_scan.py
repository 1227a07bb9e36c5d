"""How long `vgprscope scan` takes on a Triton cache of N kernels (issue: 1,000 kernels in seconds).

Fills a cache with real compiles of the bundled baseline kernel (gfx942 and sm_90: what a GPU run leaves),
copies each entry N times under distinct hashes (a cache of N kernels of that size), then times
`vgprscope scan` on it cold (empty vgprscope cache) and warm (second run), for the AMD and the NVIDIA
entries separately: an AMD entry is read from its AMDGCN text; an NVIDIA entry needs cuobjdump and one
`ptxas -v` of its PTX (the spill bytes are only in ptxas' log).

    python scripts/bench_scan.py --amd 1000 --nvidia 100

With ``--cache DIR``: a cache a GPU run wrote, side by side in one run: cold `vgprscope scan DIR` (its table; ``--format csv`` too, which reads every loop figure) against
`cuobjdump -res-usage` over the same cubins, one process each (the floor of reading them), wall and CPU time of
every process each starts, medians of ``--runs``.

    python scripts/bench_scan.py --cache /path/to/triton-cache --runs 3

A cache like fla-core's on the H100 (its 316 compiles, Triton 3.6.0's, made GPU-free: triton.compile writes
TRITON_CACHE_DIR without a device):

    gzip -dc tests/fixtures/fla_gpu_h100_capture.json.gz > fla.json
    TRITON_CACHE_DIR=fla-cache vgprscope analyze --capture fla.json --arch sm_90 --triton 3.6.0 --no-cache -o rows.csv
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _speed import measured  # noqa: E402


def fill(base: Path) -> dict[str, Path]:
    env = {**os.environ, "TRITON_CACHE_DIR": str(base), "VGPRSCOPE_CACHE_DIR": str(base.parent / "vc-fill"),
           "TRITON_INTERPRET": "0"}
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", "--variant", "baseline", "--arch", "gfx942",
                           "--arch", "sm_90", "--no-cache", "--format", "csv"], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"filling the cache failed: {done.stderr[-500:]}")
    out = {}
    for d in base.iterdir():
        meta = next((f for f in d.glob("*.json") if not f.name.startswith("__grp__")), None)
        if meta is not None and (d / f"__grp__{meta.name}").exists():
            out[json.loads(meta.read_text())["target"]["backend"]] = d
    return out


def replicate(entry: Path, dest: Path, n: int) -> None:
    dest.mkdir(parents=True)
    for i in range(n):
        d = dest / f"{entry.name[:40]}{i:012d}"
        shutil.copytree(entry, d)
        for grp in d.glob("__grp__*.json"):
            doc = json.loads(grp.read_text())
            doc["child_paths"] = {k: str(d / Path(v).name) for k, v in doc["child_paths"].items()}
            grp.write_text(json.dumps(doc))


def timed_scan(cache: Path, vcache: Path) -> tuple[float, str]:
    env = {**os.environ, "VGPRSCOPE_CACHE_DIR": str(vcache)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vgprscope", "scan", str(cache), "--format", "csv"],
                          capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"scan failed: {done.stderr[-500:]}")
    return took, done.stderr.strip().splitlines()[-1]


def against_cuobjdump(cache: Path, runs: int, csv: bool = True) -> dict[str, object]:
    """Cold scans of ``cache`` (its table, and CSV: every loop figure, unless ``csv`` is False) and cuobjdump
    over its cubins, side by side."""
    import statistics

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from vgprscope.runtime.stored import _nvidia_tool

    cubins = sorted(cache.rglob("*.cubin"))
    floor_cmd = ["bash", "-c", 'for c in "$@"; do "$0" -res-usage "$c" > /dev/null; done', _nvidia_tool("cuobjdump"),
                 *map(str, cubins)]
    scans = [("scan", [])] + ([("scan --format csv", ["--format", "csv"])] if csv else [])
    sides: dict[str, list[tuple[float, float]]] = {**{side: [] for side, _ in scans}, "cuobjdump": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for side, extra in scans:
                env = {**os.environ, "VGPRSCOPE_CACHE_DIR": f"{tmp}/{i}-{len(extra)}"}
                env.pop("TRITON_INTERPRET", None)
                sides[side].append(measured([sys.executable, "-m", "vgprscope", "scan", str(cache), *extra], env,
                                              ok=(0, 1))[:2])
            sides["cuobjdump"].append(measured(floor_cmd, dict(os.environ))[:2])
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in sides.items()}
    floor = med["cuobjdump"]
    return {"cubins": len(cubins), "cores": os.cpu_count(), "load": os.getloadavg()[0], "runs": runs,
            **{k: {"wall_s": round(w, 2), "cpu_s": round(c, 2), "wall_x": round(w / floor[0], 1),
                   "cpu_x": round(c / floor[1], 1)} for k, (w, c) in med.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--amd", type=int, default=1000)
    ap.add_argument("--nvidia", type=int, default=100)
    ap.add_argument("--cache", type=Path, help="a Triton cache to time against cuobjdump over its cubins")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-csv", action="store_true", help="with --cache: the table's scan only (no CSV side, which "
                    "disassembles every cubin)")
    args = ap.parse_args()
    if args.cache is not None:
        print(json.dumps(against_cuobjdump(args.cache, args.runs, not args.no_csv), indent=1))
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        entries = fill(tmp / "base")
        figures = {}
        for backend, n in (("hip", args.amd), ("cuda", args.nvidia)):
            if n <= 0:
                continue
            cache = tmp / f"cache-{backend}"
            replicate(entries[backend], cache, n)
            vcache = tmp / f"vc-{backend}"
            cold, summary = timed_scan(cache, vcache)
            warm, _ = timed_scan(cache, vcache)
            figures[backend] = {"entries": n, "cold_s": round(cold, 2), "warm_s": round(warm, 2),
                                "summary": summary, "cores": os.cpu_count()}
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
