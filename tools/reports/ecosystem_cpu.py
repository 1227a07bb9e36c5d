"""The ecosystem run's captures analysed for the AMD archs on a CPU machine: what the GPU machine's call had no
time left for, or made before a fix. Each workload's committed capture (tests/fixtures/ecosystem/NAME.json.gz)
goes through ``vgprscope analyze --capture ... --format json`` under the GPU machine's Triton, one arch at a
time; the analyses and their steps are archived as ``OUT/NAME-cpu.tar.xz``, which ``ecosystem --collect`` reads
over the GPU run's archives (``--collect GPU_OUT --collect OUT``).

    python -m tools.reports ecosystem-cpu tests/fixtures/ecosystem --out CPU_OUT --only fla-core --only flag-gems
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import shutil
import sys
import tarfile
import time
from collections.abc import Sequence
from pathlib import Path

from .ecosystem import AMD_ARCHS, WORKLOADS, _Run

# The GPU machine installed the libraries' wheels with `pip install --target /tmp/site` (its image has no network).
# Read here, those paths are a site-packages directory of a machine where the library is not installed: each
# kernel compiles from the capture's snapshot, as for a user whose machine lacks the library (FlagGems needs a
# GPU to import). tests/project/test_ecosystem.py reads the capture the same way.
GPU_TARGET = "/tmp/site/"
SITE_PACKAGES = "/opt/gpu-machine/lib/python3.12/site-packages/"


def capture_of(results: Path, name: str) -> dict:
    """The workload's committed capture, its libraries' files where pip installs them (``SITE_PACKAGES``)."""
    with gzip.open(results / f"{name}.json.gz", "rt") as f:
        capture = json.load(f)["capture"]
    return json.loads(json.dumps(capture).replace(GPU_TARGET, SITE_PACKAGES))


def analyze_on_cpu(results: Path, out: Path, work: Path, *, only: Sequence[str] = (),
                   archs: Sequence[str] = AMD_ARCHS, triton: str = "3.6.0", jobs: int | None = None) -> list[Path]:
    """Each chosen workload's capture analysed for ``archs`` here (under Triton ``triton``, the GPU machine's),
    archived as ``out/NAME-cpu.tar.xz`` with the steps' commands and seconds; the archives written."""
    out.mkdir(parents=True, exist_ok=True)
    repo = Path(__file__).resolve().parents[2]
    written = []
    for w in WORKLOADS:
        if (only and w.name not in only) or not (results / f"{w.name}.json.gz").is_file():
            continue
        wdir = work / w.name
        shutil.rmtree(wdir, ignore_errors=True)
        wdir.mkdir(parents=True)
        (wdir / "capture.json").write_text(json.dumps(capture_of(results, w.name)))
        # vgprscope's compiles go to a Triton cache of their own; the compile cache is the caller's
        env = dict(os.environ) | {"TRITON_CACHE_DIR": str(wdir / "vgprscope-triton"), "TRITON_INTERPRET": "0"}
        run = _Run(float("inf"))
        steps = {}
        for arch in archs:
            steps[f"analyze-{arch}"] = run.step(
                [sys.executable, "-m", "vgprscope", "analyze", "--capture", str(wdir / "capture.json"), "--arch", arch,
                 "--triton", triton, "--format", "json", "-o", str(wdir / f"analyze-{arch}.json"),
                 *(["--jobs", str(jobs)] if jobs else [])], wdir / f"analyze-{arch}.log", env, repo)
        machine = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": platform.processor() or
                   platform.machine(), "cores": os.cpu_count(), "load": round(os.getloadavg()[0], 1),
                   "triton": triton}
        (wdir / "status-cpu.json").write_text(json.dumps({"steps": steps, "machine": machine}, indent=1))
        path = out / f"{w.name}-cpu.tar.xz"
        tmp = path.with_suffix(".part")
        with tarfile.open(tmp, "w:xz") as tar:
            for f in sorted(wdir.glob("analyze-*.json")) + [wdir / "status-cpu.json"]:
                tar.add(f, arcname=f"{w.name}/{f.name}")
        tmp.replace(path)
        written.append(path)
    return written
