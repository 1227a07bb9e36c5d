"""Grids on a Dask cluster: a 1-worker LocalCluster compiles what the local pool compiles, the client writes
the cache (a re-run on the local pool is warm), and an unreachable scheduler is one line and exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

distributed = pytest.importorskip("distributed")

from vgprscope.cli.app import _register, app  # noqa: E402

_register()
SMALL = ["--variant", "baseline", "--block-m", "32,64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4",
         "--num-stages", "1", "--arch", "gfx942"]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def _usage(doc):
    return [(r["config"]["block_m"], r["status"], r["usage"]) for r in doc["rows"]]


def test_a_grid_on_a_local_cluster_equals_the_local_pool_and_warms_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VGPRSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        remote = run("analyze", *SMALL, "--scheduler", cl.scheduler_address, "-f", "json")
    assert remote.exit_code == 0, remote.output
    doc = json.loads(remote.stdout)
    assert [r["cached"] for r in doc["rows"]] == [False, False]
    assert all(r["status"] == "ok" for r in doc["rows"])
    # the client wrote the cache: the same grid on the local pool compiles nothing and reads the same rows
    local = run("analyze", *SMALL, "-f", "json")
    assert local.exit_code == 0, local.output
    again = json.loads(local.stdout)
    assert [r["cached"] for r in again["rows"]] == [True, True]
    assert _usage(again) == _usage(doc)


def test_an_unreachable_scheduler_is_one_line_and_exit_2(monkeypatch):
    from vgprscope.compile import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    res = run("analyze", *SMALL, "--scheduler", "tcp://127.0.0.1:9")
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in lines[0]
    assert "Traceback" not in res.output


def _vgprscope(*args: str, env: dict[str, str] | None = None):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "vgprscope", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_a_malformed_scheduler_address_is_one_line_promptly():
    """`--scheduler 'not a url'` printed its line, then a Client's traceback 20 s later as it closed at exit."""
    import time

    t0 = time.monotonic()
    done = _vgprscope("analyze", *SMALL, "--scheduler", "not a url")
    elapsed = time.monotonic() - t0
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "'not a url'" in lines[0] and "HOST:PORT" in lines[0], done.stderr
    assert elapsed < 15, elapsed


def _another_triton() -> bool:
    from vgprscope.runtime import worker

    worker.triton_version = lambda: "3.0.0"  # what a worker with another Triton installed answers
    return True


def test_a_worker_of_another_triton_is_refused_in_one_line(tmp_path):
    """Refused rightly, but after a 25-line tornado traceback for each compile the refusal cancelled."""
    grid = ["--variant", "baseline", "--arch", "gfx942", "--block-m", "16,32,64,128", "--block-n", "16,32,64",
            "--head-dim", "64,128"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cl:
        with distributed.Client(cl.scheduler_address) as client:
            assert all(client.run(_another_triton).values())
        done = _vgprscope("analyze", *grid, "--scheduler", cl.scheduler_address,
                          env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "a compile worker runs Triton 3.0.0" in lines[0], done.stderr
