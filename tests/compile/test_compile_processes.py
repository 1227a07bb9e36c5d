"""The compile engine as processes: what a user's module prints goes to stderr, workers die with
their parent, Ctrl-C stops within a second and says so, an unwritable cache is a warning and the results
are still reported, and the compiler's own messages (ptxas, a failed static assertion) reach the row."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

VARIANT = '''
import triton
import triton.language as tl

print("hello from the user's module")  # at import time, as some users' modules do

VARIANT = {"name": "noisy", "strategy": "-", "seed": "-", "trades": "-", "kernels": ["k"],
           "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit
def k(X, n, BLOCK: tl.constexpr, CHECK: tl.constexpr):
    tl.static_assert(CHECK < 100, "CHECK must stay below 100")
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + i, i, mask=i < n)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    return [{"name": "k", "fn": k, "args": {"X": "*fp32", "n": 1000},
             "constexprs": {"BLOCK": cfg["block_m"], "CHECK": cfg["block_n"]}}]
'''


def vgprscope(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vgprscope", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


@pytest.fixture()
def kernel_dir(tmp_path) -> Path:
    d = tmp_path / "kd"
    d.mkdir()
    (d / "noisy.py").write_text(textwrap.dedent(VARIANT))
    return d


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_what_a_users_module_prints_goes_to_stderr(kernel_dir, tmp_path, jobs):
    tmp = _tmpdir(tmp_path)
    done = vgprscope("analyze", "--kernel-dir", str(kernel_dir), "--arch", "gfx942", "-f", "json", "--jobs", jobs,
                     env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp)})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)  # stdout is the JSON document only
    assert [r["status"] for r in doc["rows"]] == ["ok"]
    assert "hello from the user's module" in done.stderr
    assert _scratch_dirs(tmp) == []  # the workers' (or this process's own) scratch directory went with them


def _tmpdir(tmp_path: Path) -> Path:
    """A temporary directory of the test's own (TMPDIR), where the compile workers' scratch directories go."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return tmp


def _scratch_dirs(root: Path) -> list[str]:
    from vgprscope.runtime import scratch

    return sorted(p.name for p in root.iterdir() if p.name.startswith(scratch.PREFIX))


def test_a_failed_static_assertion_is_its_message(kernel_dir, tmp_path):
    done = vgprscope("analyze", "--kernel-dir", str(kernel_dir), "--arch", "sm_90", "--block-n", "128", "-f", "json",
                     env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")})
    (row,) = json.loads(done.stdout)["rows"]
    assert row["status"] == "CompileTimeAssertionFailure: CHECK must stay below 100"


def test_a_ptxas_failure_is_ptxas_own_message():
    """Triton wraps ptxas's stderr between 'Internal Triton PTX codegen error' and its repro command."""
    from vgprscope.runtime.protocol import one_line

    class PTXASError(RuntimeError):
        pass

    exc = PTXASError("PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
                     "ptxas-blackwell fatal   : Unknown option '-bogus-flag'\n\nRepro command: /x/ptxas -v k.ptx\n")
    assert one_line(exc) == "PTXASError: ptxas-blackwell fatal : Unknown option '-bogus-flag'"


def test_a_cap_ptxas_refuses_is_a_row_and_the_compile_leaves_no_file_in_the_temporary_directory(tmp_path):
    """Triton's ptxas step leaves its .ptx in the temporary directory where ptxas fails (a frontier's lowest
    maxnreg levels fail every run), and Triton writes each kernel's IR and binary to its cache directory, which no
    compile reads back: a compile's side files go in a directory of its own, removed after it."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = vgprscope("analyze", "--variant", "baseline", "--arch", "sm_90", "--block-m", "64", "--block-n", "32",
                     "--head-dim", "64", "--num-warps", "4", "--num-stages", "1", "--maxnreg", "16", "-f", "json",
                     env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp)})
    assert done.returncode == 1, done.stderr  # its one row did not compile
    (row,) = json.loads(done.stdout)["rows"]
    assert "Insufficient registers" in row["status"]
    assert [p.name for p in tmp.iterdir()] == []


def test_an_unwritable_cache_is_a_warning_and_the_rows_are_reported(kernel_dir, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    done = vgprscope("analyze", "--kernel-dir", str(kernel_dir), "--arch", "gfx942", "-f", "json",
                     env={"VGPRSCOPE_CACHE_DIR": str(blocker / "cache")})
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in json.loads(done.stdout)["rows"]] == ["ok"]
    warnings = [ln for ln in done.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and warnings[0].startswith("vgprscope: warning: cannot write the compile cache in ")
    assert "VGPRSCOPE_CACHE_DIR" in warnings[0]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


GRID = ["analyze", "--variant", "baseline", "--arch", "gfx942", "--block-m", "16,32,64", "--block-n", "16,32",
        "--head-dim", "64,128", "--jobs", "2"]


def _start(tmp_path: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", *GRID], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache"),
                                 "TMPDIR": str(_tmpdir(tmp_path))})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_children(proc.pid)) < 2:
        time.sleep(0.2)
    assert len(_children(proc.pid)) >= 2, "the compile workers did not start"
    time.sleep(2)  # compiling
    return proc


def test_workers_die_with_their_parent(tmp_path):
    """Killing the analyze process alone (not its group) leaves no compile worker alive."""
    proc = _start(tmp_path)
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)]
    # the killed process could not remove its workers' scratch directory: the next one that makes its own does
    from vgprscope.runtime import scratch

    tmp = _tmpdir(tmp_path)
    (left,) = _scratch_dirs(tmp)
    assert left.split("-")[2] == str(proc.pid)
    assert scratch.sweep(str(tmp)) == [str(tmp / left)] and _scratch_dirs(tmp) == []


def test_ctrl_c_stops_within_a_second_and_says_so(tmp_path):
    proc = _start(tmp_path)
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
    _, stderr = proc.communicate(timeout=30)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 130
    assert "interrupted: stopped the running compiles" in stderr and "Traceback" not in stderr
    assert elapsed < 1.5, elapsed
    assert _scratch_dirs(_tmpdir(tmp_path)) == []  # the killed workers' scratch directory went with the pool


def test_the_pools_scratch_directory_goes_with_the_pool_however_its_workers_end(tmp_path, monkeypatch):
    """A pool's worker ends through os._exit (multiprocessing runs no atexit handler there) or is killed (Ctrl-C,
    a compile past its time limit): the directory the workers write snapshots' modules in is the pool's own,
    removed when the pool is closed, killed, or replaced after a worker died (190 were found left in /tmp)."""
    from vgprscope.compile.executors import Pool
    from vgprscope.runtime import scratch

    Pool.close()  # another test's pool, writing elsewhere
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    try:
        for end in ("close", "kill", "a worker killed"):
            pool = Pool.get(2)
            written = [f.result(timeout=120) for f in [pool.submit(scratch.worker_dir) for _ in range(4)]]
            assert {os.path.dirname(p) for p in written} == {Pool.scratch_dir}
            assert all(os.path.isdir(p) for p in written) and len(_scratch_dirs(tmp_path)) == 1
            if end == "close":
                Pool.close()
            elif end == "kill":
                Pool.kill()
            else:
                for p in list(pool._processes.values()):
                    p.kill()
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not pool._broken:
                    time.sleep(0.1)
                assert Pool.get(2) is not pool  # a broken pool is replaced, its directory removed
                assert _scratch_dirs(tmp_path) == [os.path.basename(Pool.scratch_dir or "")]
                Pool.close()
            assert _scratch_dirs(tmp_path) == [], end
    finally:
        Pool.close()


def test_killing_the_pool_prints_no_traceback_and_settles_every_future(monkeypatch):
    """Ctrl-C kills the local pool with compiles waiting and running, with no thread's traceback after
    "interrupted": the engine leaves its pool's futures to the pool, which cancels what waits (shutdown's
    cancel_futures) and fails what runs (cancelling them from outside would race the pool's manager thread:
    InvalidStateError, KeyError). This checks that kill path in both orders its
    thread can see (the engine's side is test_ctrl_c_stops_within_a_second_and_says_so, end to end)."""
    import threading

    from vgprscope.compile.executors import Pool

    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    for late in (False, True):
        pool = Pool.get(2)
        futures = [pool.submit(time.sleep, 30) for _ in range(12)]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(f.running() for f in futures) < 2:
            time.sleep(0.1)
        manager = pool._executor_manager_thread
        if late:  # the manager thread sees dead workers before the shutdown (a busy machine's order)
            for p in list(pool._processes.values()):
                p.kill()
            time.sleep(1)
        Pool.kill()
        if manager is not None:
            manager.join(timeout=30)
        assert all(f.done() for f in futures)
        assert not all(f.cancelled() for f in futures)  # the running ones failed, not cancelled
    assert raised == []


# two ways an environment refuses torch that is installed: a meta-path finder that raises (as
# tests/project/test_no_torch.py's sitecustomize does) and a None in sys.modules
REFUSE_TORCH = {
    "finder": ("class NoTorch:\n    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] == 'torch':\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, NoTorch())\n"),
    "none": "sys.modules['torch'] = None\n",
}


def _torch_in_binder(own_process: bool, refuse: str = "") -> str:
    """What ``import torch`` gives inside the worker's binder guard, in a fresh interpreter."""
    code = ("import sys\nfrom vgprscope.runtime import compile, protocol\n"
            + REFUSE_TORCH.get(refuse, "")
            + ("protocol.configure()\n" if own_process else "")
            + "with compile._torch_if_missing():\n    import torch\n    inside = hasattr(torch, 'cuda')\n"
            + "print('real' if inside else 'placeholder', 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/",
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_compile_worker_never_imports_torch_for_the_hip_binder():
    """Triton's HIP binder imports torch (is_within_2gb): 1.3 s of every cold compile worker. A worker of its
    own gets a placeholder during the binder and is left without torch; a user's process keeps the real one."""
    pytest.importorskip("torch")
    assert _torch_in_binder(own_process=True) == "placeholder False"
    assert _torch_in_binder(own_process=False) == "real True"


@pytest.mark.parametrize("refuse", sorted(REFUSE_TORCH))
def test_a_user_process_that_refuses_torch_gets_the_placeholder(refuse):
    """A compile in the user's own process (one job: no pool) where torch is refused rather than absent: the
    guard asks whether torch can be imported without letting that question fail the compile (a raising finder
    made every in-process row "No module named 'torch'"), and puts back what refused it afterwards."""
    after = "True" if refuse == "none" else "False"  # the None left in sys.modules, or nothing
    assert _torch_in_binder(own_process=False, refuse=refuse) == f"placeholder {after}"
    assert _torch_in_binder(own_process=True, refuse=refuse) == f"placeholder {after}"


# the first seconds of a cold run, where Ctrl-C can land: the interpreter and the CLI starting, the options
# parsed, the pool starting its workers (forked, each in its initializer), the first compiles
CTRL_C_POINTS = [0.2 + 0.2 * i for i in range(20)]


def _interrupted_cold(tmp_path: Path, after: float) -> tuple[int, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", *GRID], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "VGPRSCOPE_CACHE_DIR": str(tmp_path / f"cache-{after:.2f}")})
    time.sleep(after)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
    try:
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, stdout, stderr


@pytest.mark.slow
def test_ctrl_c_anywhere_in_the_first_seconds_of_a_cold_run_is_one_line_and_130(tmp_path):
    """Ctrl-C while the CLI starts, while the pool forks its workers (before their initializer ignores it)
    or while they compile was a raw KeyboardInterrupt (exit -2), a worker's traceback, or every row "compile
    worker failed: BrokenProcessPool" with exit 1. Whenever it lands it is one line and exit 130.

    Two runs at a time, the longest waits first: this process only sleeps while a run starts, and each run is
    a process group of its own with a cache of its own, its Ctrl-C sent to that group alone at its delay from
    its own start. A cold start keeps at most one core busy in its first seconds (about 0.7 s of CPU a second,
    the CLI and its two workers together), so two of them on CI's two cores still reach each point at about
    the stage one alone reaches."""
    bad = []
    with ThreadPoolExecutor(max_workers=2) as runs:
        ends = list(runs.map(lambda after: (after, *_interrupted_cold(tmp_path, after)),
                             sorted(CTRL_C_POINTS, reverse=True)))
    for after, code, stdout, stderr in sorted(ends):
        lines = stderr.splitlines()
        if code != 130 or stdout or len(lines) != 1 or not lines[0].startswith("vgprscope: interrupted"):
            bad.append((after, code, stderr[-600:]))
    assert bad == [], f"{len(bad)} of {len(CTRL_C_POINTS)} not clean: {bad}"


def test_a_toolchain_worker_whose_parent_is_gone_ends_without_a_traceback():
    """A toolchain's worker (``python <runtime> --serve``) answering after its parent was killed printed a
    BrokenPipeError traceback, and a Ctrl-C to the group gave it a KeyboardInterrupt one: it ends quietly."""
    from vgprscope.runtime import worker_command

    proc = subprocess.Popen(worker_command(sys.executable, "--serve"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        proc.stdin.write(json.dumps({"op": "unknown"}) + "\n")
        proc.stdin.flush()
        assert "unknown request" in proc.stdout.readline()  # serving
        proc.stdout.close()  # the parent is gone: nobody reads the answers
        os.killpg(proc.pid, signal.SIGINT)  # and the Ctrl-C that stopped it reached the worker too
        time.sleep(0.5)
        with contextlib.suppress(BrokenPipeError):  # a worker that died of the Ctrl-C reads no more
            proc.stdin.write(json.dumps({"op": "unknown"}) + "\n")
            proc.stdin.flush()
            proc.stdin.close()
        stderr = proc.stderr.read()
        code = proc.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert stderr == "" and code == 0, (code, stderr)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the worker's environment in /proc")
def test_a_toolchain_pools_workers_write_in_its_scratch_directory_removed_with_it(tmp_path, monkeypatch):
    """Another Triton's workers (``python <runtime> --serve`` subprocesses) get the pool's scratch directory in
    their environment; closing the pool (at exit), or killing it (Ctrl-C), removes it."""
    import triton

    from vgprscope.compile.executors import ToolchainPool
    from vgprscope.compile.toolchains import Toolchain
    from vgprscope.runtime import scratch

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    for end in ("close", "kill"):
        pool = ToolchainPool(Toolchain("environment", triton.__version__, sys.executable), 1)
        answer = pool.ask({"op": "nothing"})  # a worker started and answering
        assert answer["error"] == "unknown request 'nothing'"
        (proc,) = pool._procs
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        (made,) = _scratch_dirs(tmp_path)
        assert f"{scratch.ENV}={tmp_path / made}".encode() in environ
        getattr(pool, end)()
        assert _scratch_dirs(tmp_path) == [], end


def test_the_pool_follows_a_compiler_setting_unset_in_this_process(monkeypatch, tmp_path):
    """The installed Triton's pool forks its workers once and they keep the environment they were forked with;
    the compile's key names the environment of each call. A library user who started compiling with a variable
    the compiler reads (exported, or set in os.environ) and unsets it gets the figures without it: the pool
    forked in another environment is made again, never a compile under a setting since unset, cached under the
    key without it."""
    import vgprscope
    from vgprscope.compile.executors import Pool

    def vgprs(cache: str) -> int:
        (row,) = vgprscope.analyze(variant="baseline", arch="gfx942", block_m=64, block_n=32, head_dim=64,
                                   num_warps=4, num_stages=1, jobs=1, cache=tmp_path / cache).records
        assert row.ok, row.status
        return row.usage.vgpr_total

    monkeypatch.setenv("DISABLE_LLVM_OPT", "1")
    Pool.close()  # the next compile forks the workers with the variable set, as a process started with it does
    unoptimised = vgprs("set")
    monkeypatch.delenv("DISABLE_LLVM_OPT")
    optimised = vgprs("unset")
    Pool.close()
    assert optimised != unoptimised and vgprs("fresh") == optimised
