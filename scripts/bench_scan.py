"""How long `vgprscope scan` takes on a Triton cache of N kernels (issue: 1,000 kernels in seconds).

Fills a cache with real compiles of the bundled baseline kernel (gfx942 and sm_90: what a GPU run leaves),
copies each entry N times under distinct hashes (a cache of N kernels of that size), then times
`vgprscope scan` on it cold (empty vgprscope cache) and warm (second run), for the AMD and the NVIDIA
entries separately: an AMD entry is read from its AMDGCN text; an NVIDIA entry needs cuobjdump and one
`ptxas -v` of its PTX (the spill bytes are only in ptxas' log).

    python scripts/bench_scan.py --amd 1000 --nvidia 100
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--amd", type=int, default=1000)
    ap.add_argument("--nvidia", type=int, default=100)
    args = ap.parse_args()
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
