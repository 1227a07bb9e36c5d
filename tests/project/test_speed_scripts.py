"""scripts/bench_tool_speed.py --floors: its floor (``triton.compile`` of the jobs a cold ``analyze`` made, in one
process) loads each job's kernel as the compile worker does, so the ratio the report shows compares a command
with the compiler's own cost on the very same kernels (the floor script once called a loader the worker no longer
has, and the report's floors section could not be made)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

from capture_helpers import ROOT

SMALL = ["--variant", "baseline", "--block-m", "64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4",
         "--num-stages", "1", "--arch", "gfx942"]


def test_the_floor_compiles_every_job_a_cold_analyze_made(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    bench = importlib.import_module("bench_tool_speed")
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {
        "VGPRSCOPE_CACHE_DIR": str(cache), "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", *SMALL], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    jobs = bench._jobs_of(cache)
    assert [j["target"]["arch"] for j in json.loads(jobs.read_text())] == ["gfx942"]
    floor = subprocess.run([sys.executable, "-c", bench.FLOOR_COMPILE, str(jobs)], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert floor.returncode == 0 and floor.stderr == "", floor.stderr[-2000:]
    # the measuring wrapper both speed scripts share (scripts/_speed.py): the whole tree's CPU time, read back
    # even where a child's last words on stderr lack their newline
    wall, cpu, _ = bench.measured([sys.executable, "-c", bench.FLOOR_COMPILE, str(jobs)], env, cwd=str(ROOT))
    assert wall > 0 and cpu > 0
    wall, cpu, _ = bench.measured([sys.executable, "-c", "import sys; sys.stderr.write('no newline')"], env)
    assert wall > 0 and cpu > 0
