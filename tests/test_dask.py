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
