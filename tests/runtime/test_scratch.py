"""The compile workers' scratch directories: each worker writes in its owner's directory, and a directory
whose owner is gone is removed by the next process that makes one (a killed owner removes nothing itself)."""

from __future__ import annotations

import os
import subprocess
import sys

from vgprscope.runtime import scratch


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_directory_whose_owner_is_gone_is_removed_by_the_next_one_made(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    gone = tmp_path / f"{scratch.PREFIX}{_dead_pid()}-abc"
    (gone / "123").mkdir(parents=True)
    (gone / "123" / "vgprscope_snapshot_0.py").write_text("x = 1\n")
    alive = tmp_path / f"{scratch.PREFIX}{os.getpid()}-def"
    alive.mkdir()
    other = tmp_path / "vgprscope-worker-notapid"  # not named by an owner: not ours to judge
    other.mkdir()
    made = scratch.make()
    assert os.path.dirname(made) == str(tmp_path) and os.path.basename(made).startswith(f"{scratch.PREFIX}{os.getpid()}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name, os.path.basename(made)])
    scratch.remove(made)
    assert not os.path.exists(made)


def test_a_worker_writes_in_its_own_subdirectory_of_its_owners(tmp_path, monkeypatch):
    monkeypatch.setenv(scratch.ENV, str(tmp_path))
    assert scratch.worker_dir() == str(tmp_path / str(os.getpid()))
    assert (tmp_path / str(os.getpid())).is_dir()
