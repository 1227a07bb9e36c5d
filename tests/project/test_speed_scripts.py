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
from pathlib import Path

import pytest
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


def _profiler(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    return importlib.import_module("profile_ci_tests")


def test_the_ci_profile_puts_each_record_on_one_line_of_its_table(monkeypatch, tmp_path):
    """scripts/profile_ci_tests.py's accounting: a compile job's CPU (its tools included) leaves the process that
    ran it; a job compiled again is apart from the first; the controller is the subreaper's pytest child, its
    workers the controller's execnet children; a process's children that no record holds are its kind's
    "unrecorded children" (named by the command its parent reaped), and what is left is "not attributed"; and
    `.ci/run`'s step stamps give each step's seconds (across midnight too)."""
    prof = _profiler(monkeypatch)
    pytest_main = os.path.join("site-packages", "pytest", "__main__.py")
    records = [
        {"kind": "process", "pid": 10, "ppid": 1, "argv": [pytest_main, "-q"], "self": 2.0, "children": 90.0,
         "torch": False, "role": ""},
        {"kind": "process", "pid": 11, "ppid": 10, "argv": ["-c"], "self": 20.0, "children": 60.0, "torch": True,
         "role": ""},
        {"kind": "process", "pid": 12, "ppid": 11, "argv": ["-c"], "self": 9.0, "children": 1.5, "torch": False,
         "role": "mp"},
        {"kind": "process", "pid": 13, "ppid": 11, "argv": ["/x/vgprscope/__main__.py", "analyze"], "self": 1.0,
         "children": 0.0, "torch": False, "role": ""},
        {"kind": "process", "pid": 14, "ppid": 1, "argv": ["run.py"], "self": 3.0, "children": 0.0, "torch": True,
         "role": ""},
        {"kind": "process", "pid": 15, "ppid": 11, "argv": ["/x/vgprscope/runtime", "--serve"], "self": 0.5,
         "children": 0.0, "torch": False, "role": ""},
        {"kind": "compile", "pid": 12, "self": 4.0, "children": 1.5, "stored": False, "arch": "90", "job": "a"},
        {"kind": "compile", "pid": 12, "self": 3.0, "children": 0.0, "stored": False, "arch": "90", "job": "a"},
        {"kind": "compile", "pid": 11, "self": 1.0, "children": 0.0, "stored": False, "arch": "gfx942", "job": "b"},
        {"kind": "compile", "pid": 12, "self": 0.5, "children": 0.0, "stored": True, "arch": "90", "job": "c"},
        {"kind": "child", "pid": 11, "child": 99, "name": "nvdisasm", "in_job": False, "cpu": 4.0},
        {"kind": "child", "pid": 11, "child": 13, "name": "python -m vgprscope", "in_job": False, "cpu": 1.0},
        {"kind": "child", "pid": 12, "child": 98, "name": "ptxas", "in_job": True, "cpu": 1.5},
    ]
    log = tmp_path / "records.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    a = prof.analyse(log, {"wrapper": 1, "cpu": 100.0, "wall": 60.0})
    assert {k: a[k] for k in ("fresh", "fresh_n", "repeated", "repeated_n", "stored", "stored_n", "tools")} == {
        "fresh": 6.5, "fresh_n": 2, "repeated": 3.0, "repeated_n": 1, "stored": 0.5, "stored_n": 1, "tools": 1.5}
    assert dict(a["by_arch"]) == {"sm_90": 5.5, "gfx942": 1.0}
    assert dict(a["kinds"]) == {
        "pytest's controller": 2.0, "pytest workers (the tests' own work, in-process compiles aside)": 19.0,
        "compile workers, outside their jobs (start-up, imports)": 2.0, "vgprscope commands (CLI processes)": 1.0,
        "scripts that import torch (users' programs, examples)": 3.0}
    # the controller's children beyond its workers' records; a worker's beyond its children's records (a CLI
    # process, a compile worker whose ptxas is its job's, a toolchain worker)
    assert dict(a["unrecorded"]) == {
        "pytest's controller": 10.0, "pytest workers (the tests' own work, in-process compiles aside)": 48.0,
        "compile workers, outside their jobs (start-up, imports)": 0.0, "vgprscope commands (CLI processes)": 0.0,
        "scripts that import torch (users' programs, examples)": 0.0}
    assert a["unattributed"] == pytest.approx(100.0 - 10.0 - 27.0 - 58.0)
    # by command: a child that wrote its own record, or one reaped in a compile job (its tools), is not again
    assert dict(a["by_name"]) == {"nvdisasm": 4.0}
    ci_log = tmp_path / "ci.log"
    ci_log.write_text("== 23:58:00 installs\nCollecting...\n== 23:59:40 ruff, mypy\n== 00:00:05 pytest\n"
                      "random order: --randomly-seed=1\n== 00:08:05 the gate\n== 00:08:35 done\n")
    assert prof.ci_steps(ci_log) == {"installs": 100, "ruff, mypy": 25, "pytest": 480, "the gate": 30}


@pytest.mark.slow
def test_the_ci_profile_counts_a_compile_in_a_pytest_worker_and_takes_its_pth_away(tmp_path):
    """A run of the profiler on a one-test selection: the compile the test makes in its pytest worker (where
    pytest rewrites vgprscope's modules, vgprscope being a pytest plugin) and the CLI process it starts are
    accounted, the report section is written, and the environment's site-packages holds no .pth of it after."""
    if hasattr(sys, "_vgprscope_ci_profile"):
        pytest.skip("this run is itself under scripts/profile_ci_tests.py, whose hooks this process has")
    purelib = Path(subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    before = set(purelib.glob("_vgprscope_ci_profile_*.pth"))
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_one.py").write_text(
        "import subprocess, sys\nimport vgprscope\n\n\ndef test_one():\n"
        "    rows = vgprscope.analyze(variant='baseline', arch='gfx942', block_m=64, block_n=32, head_dim=64,\n"
        "                             num_warps=4, num_stages=1, jobs=1).records\n"
        "    assert [r.status for r in rows] == ['ok']\n"
        "    subprocess.run([sys.executable, '-m', 'vgprscope', '--version'], check=True)\n")
    out, log = tmp_path / "ci-time.md", tmp_path / "records.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTEST_ADDOPTS")}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "profile_ci_tests.py"), "--out", str(out),
                           "--log", str(log), "--", str(suite)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    (job,) = [r for r in records if r["kind"] == "compile"]
    assert job["arch"] == "gfx942" and job["self"] > 0 and not job["stored"]
    assert any(r["kind"] == "process" and r["argv"][:2] == [str(ROOT / "vgprscope" / "__main__.py"), "--version"]
               for r in records)
    # the CLI process, reaped by the test: its parent names it, and its own record holds its CPU time
    assert any(r["kind"] == "child" and r["name"].endswith("-m vgprscope") for r in records)
    text = out.read_text()
    assert text.startswith("<!-- ci-tests -->\n## Where CI's test run spends its CPU") and "1 passed" in text
    assert "first compiles of distinct jobs: 1," in text
    assert set(purelib.glob("_vgprscope_ci_profile_*.pth")) == before
