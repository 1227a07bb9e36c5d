"""One pool of compile workers per toolchain per process: every engine (every ``analyze(triton=...)``) reuses
the same ``--serve`` workers, a larger job count grows the pool without replacing them, Ctrl-C kills it and the
next run makes a new one, a changed environment gets workers started in it, and a library user's process ends
with no worker and no scratch directory left. The toolchain is this test environment's own Python as an
environment toolchain (no install: the same code path as a release's)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from vgprscope.compile import toolchains
from vgprscope.compile.cache import CompileCache
from vgprscope.compile.engine import Engine, toolchain_identity
from vgprscope.compile.executors import ToolchainPool
from vgprscope.core.archs import get_arch
from vgprscope.flashattn.config import ConfigRequest
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import load_variants, resolve_config
from vgprscope.runtime import scratch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the workers' /proc entries")

KERNEL = '''
import triton
import triton.language as tl

VARIANT = {"name": "mine", "strategy": "a user's kernel", "seed": "-", "trades": "-", "kernels": ["k"],
           "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit
def k(X, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + i, i, mask=i < n)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    return [{"name": "k", "fn": k, "args": {"X": "*fp32", "n": 1000}, "constexprs": {"BLOCK": cfg["block_m"]}}]
'''


@pytest.fixture()
def own_python(tmp_path, monkeypatch) -> toolchains.Toolchain:
    """This environment's Python as a toolchain, with no pool of it left by another test."""
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "store"))
    tc = toolchains.environment(sys.executable)
    left = ToolchainPool._pools.get(tc.id)
    if left is not None:
        left.close()
    return tc


def _pool(tc: toolchains.Toolchain) -> ToolchainPool:
    """The pool engines use now (its state: the toolchain's identity, as the engine reads it)."""
    return ToolchainPool.get(tc, 1, toolchain_identity(tc.id).key())


def _pids(pool: ToolchainPool) -> set[int]:
    return {p.pid for p in pool._procs if p.poll() is None}


def _alive(pid: int) -> bool:
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


def _compile(directory: Path, tc: toolchains.Toolchain, cache: CompileCache, *, jobs: int = 1,
             block_m: tuple[int, ...] = (64,), **engine_kw):
    """The kernel at each ``block_m``, compiled under ``tc`` by a new engine."""
    engine = Engine(jobs, cache, **engine_kw)
    v = load_variants(directory.resolve())["mine"]
    arch = get_arch("gfx942")
    tasks = variant_tasks([(v, resolve_config(v, arch, ConfigRequest(block_m=b)), arch, "") for b in block_m], engine)
    return engine.compile([t.under(tc) for t in tasks])


def test_two_engines_under_one_toolchain_use_the_same_workers(kernel_dir, own_python, tmp_path):
    """Each ``--serve`` worker imports its Triton (seconds): a second run in the process sends its compiles to the
    workers the first started, not to new ones."""
    first = _compile(kernel_dir, own_python, CompileCache(tmp_path / "a"))
    pool = _pool(own_python)
    started = _pids(pool)
    second = _compile(kernel_dir, own_python, CompileCache(tmp_path / "b"))  # another cache: compiled again
    assert [r.ok for r in first + second] == [True, True] and not second[0].cached
    assert _pool(own_python) is pool and len(started) == 1 and _pids(pool) == started


def test_a_larger_job_count_grows_the_pool_and_keeps_its_workers(own_python, monkeypatch):
    pool = _pool(own_python)
    assert pool.ask({"op": "nothing"})["error"] == "unknown request 'nothing'"
    (first,) = _pids(pool)
    assert _pool(own_python) is pool and pool.size == 1  # a smaller ask keeps it as it is
    grown = ToolchainPool.get(own_python, 2, pool.state)
    assert grown is pool and pool.size == 2
    # each request keeps its worker until both have one: they run at once only on two threads
    both = threading.Barrier(2, timeout=60)
    put_back = pool._put_back
    monkeypatch.setattr(pool, "_put_back", lambda proc, healthy: (both.wait(), put_back(proc, healthy)))
    answers = [f.result(timeout=120) for f in [pool.submit(None, {"op": "nothing"}) for _ in range(2)]]
    assert [a["error"] for a in answers] == ["unknown request 'nothing'"] * 2
    assert first in _pids(pool) and len(_pids(pool)) == 2


def test_a_pool_killed_by_ctrl_c_is_replaced_by_the_next_run(kernel_dir, own_python, tmp_path):
    pool = _pool(own_python)
    running: list[tuple[set[int], str | None]] = []

    def interrupt(done: int, total: int) -> None:
        if done:  # a compile answered, the others still running or waiting: Ctrl-C
            running.append((_pids(pool), pool._scratch))
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _compile(kernel_dir, own_python, CompileCache(tmp_path / "a"), jobs=2, block_m=(16, 32, 64, 128),
                 on_progress=interrupt)
    ((killed, made),) = running
    assert killed and made is not None
    assert not os.path.exists(made)  # its scratch went with it
    deadline = time.monotonic() + 10  # killed (SIGKILL), not waited for
    while time.monotonic() < deadline and any(_alive(pid) for pid in killed):
        time.sleep(0.1)
    assert not [pid for pid in killed if _alive(pid)]
    rows = _compile(kernel_dir, own_python, CompileCache(tmp_path / "b"), jobs=2, block_m=(16, 32))
    assert [r.ok for r in rows] == [True, True]
    again = _pool(own_python)
    assert again is not pool and _pids(again) and not _pids(again) & killed


def test_a_setting_unset_after_the_workers_started_is_not_left_in_them(kernel_dir, own_python, tmp_path,
                                                                       monkeypatch):
    """A worker inherits the environment it starts in; the compile's key names the environment of each run. A
    variable the compiler reads, exported when the pool started and unset since, would still be in its workers
    and change compiles keyed without it: the pool of another environment is another pool."""
    monkeypatch.setenv("DISABLE_LLVM_OPT", "1")
    _compile(kernel_dir, own_python, CompileCache(tmp_path / "a"))
    (with_it,) = _pids(_pool(own_python))
    assert b"DISABLE_LLVM_OPT=1" in Path(f"/proc/{with_it}/environ").read_bytes().split(b"\0")
    monkeypatch.delenv("DISABLE_LLVM_OPT")
    _compile(kernel_dir, own_python, CompileCache(tmp_path / "b"))
    (without,) = _pids(_pool(own_python))
    assert without != with_it and not _alive(with_it)
    assert b"DISABLE_LLVM_OPT=1" not in Path(f"/proc/{without}/environ").read_bytes().split(b"\0")


LIBRARY_USER = '''
import json, sys
import vgprscope
from vgprscope.compile import toolchains
from vgprscope.compile.engine import toolchain_identity
from vgprscope.compile.executors import ToolchainPool

seen = []
for cache in ("a", "b"):  # two caches: each call compiles
    result = vgprscope.analyze(kernel_dir=sys.argv[1], arch="gfx942", triton=sys.executable, jobs=1,
                               cache=sys.argv[2] + "/" + cache)
    assert [r.ok for r in result.records] == [True], result.records
    tc = toolchains.environment(sys.executable)
    pool = ToolchainPool.get(tc, 1, toolchain_identity(tc.id).key())
    seen.append(sorted(p.pid for p in pool._procs))
print(json.dumps(seen))
'''


def test_a_library_users_process_reuses_the_workers_and_ends_with_none_left(kernel_dir, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "store")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(LIBRARY_USER), str(kernel_dir), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = json.loads(done.stdout.strip().splitlines()[-1])
    assert first == second and len(first) == 1  # the second call's compile went to the first call's worker
    assert not [pid for pid in first if _alive(pid)]
    assert [p.name for p in tmp.iterdir() if p.name.startswith(scratch.PREFIX)] == []  # its scratch went with it


def _serving(pid: int) -> list[int]:
    """The toolchain workers (``--serve``) among a process's children."""
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if line.rstrip().endswith("--serve")]


def test_ctrl_c_under_a_toolchain_kills_its_workers_and_is_one_line(tmp_path):
    """The CLI's Ctrl-C while another Triton's workers compile (they run in sessions of their own: the terminal's
    Ctrl-C does not reach them): exit 130, one line, no worker left, their scratch directory removed."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "store"),
           "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    grid = ["analyze", "--variant", "baseline", "--arch", "gfx942", "--block-m", "16,32,64", "--block-n", "16,32",
            "--jobs", "2", "--triton", sys.executable]
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", *grid], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(_serving(proc.pid)) < 2 and proc.poll() is None:
            time.sleep(0.2)
        workers = _serving(proc.pid)
        assert len(workers) == 2, "the toolchain's workers did not start"
        time.sleep(1)  # compiling
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
        _, stderr = proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    lines = stderr.splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and lines[0].startswith("vgprscope: interrupted"), stderr[-2000:]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)]
    assert [p.name for p in tmp.iterdir() if p.name.startswith(scratch.PREFIX)] == []
