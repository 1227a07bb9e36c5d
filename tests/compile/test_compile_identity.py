"""The cache key covers everything a compile depends on (and the compile time limit):
an environment variable Triton or LLVM reads, inherited from the shell as much as given with --set; the
toolchain's own files, not only its version; failures from the toolchain's own files are never cached and
stop the run with one line; kernels compiled from a capture's snapshot are cached and keep the user's file
and line numbers; a compile that runs past its limit is a row, never a hang."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from capture_helpers import cli, gone_library

from vgprscope import runtime
from vgprscope.compile import identity, toolchains
from vgprscope.compile.cache import CompileCache
from vgprscope.compile.engine import Engine, ToolchainBrokenError, toolchain_identity
from vgprscope.core.archs import get_arch
from vgprscope.core.errors import UsageError
from vgprscope.flashattn.config import ConfigRequest
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import load_variants, resolve_config
from vgprscope.runtime import protocol

KERNEL = '''
import triton
import triton.language as tl

VARIANT = {"name": "mine", "strategy": "a user's kernel", "seed": "-", "trades": "-", "kernels": ["k"],
           "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit
def k(X, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < n, other=1.0)
    t = x[:, None] + tl.arange(0, 16)[None, :].to(tl.float32)
    tl.store(Y + i, tl.sum(tl.exp(t) * tl.sin(t), axis=1), mask=i < n)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    return [{"name": "k", "fn": k, "args": {"X": "*fp32", "Y": "*fp32", "n": 1000},
             "constexprs": {"BLOCK": cfg["block_m"] * 4}}]
'''


def _tasks(directory: Path, engine: Engine, arch: str = "gfx942", toolchain: toolchains.Toolchain | None = None):
    v = load_variants(directory.resolve())["mine"]
    a = get_arch(arch)
    tasks = variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine)
    return [t.under(toolchain) for t in tasks] if toolchain is not None else tasks


def _compile(directory: Path, cache: CompileCache, arch: str = "gfx942", toolchain=None, jobs: int = 1):
    engine = Engine(jobs, cache)
    (row,) = engine.compile(_tasks(directory, engine, arch, toolchain))
    return row


# ------------------------------------------------------------------------------- item 5: the environment

@pytest.mark.parametrize("name, value", [("DISABLE_LLVM_OPT", "1"), ("TRITON_DEFAULT_FP_FUSION", "0")])
def test_a_setting_inherited_from_the_shell_is_part_of_the_key(kernel_dir, tmp_path, monkeypatch, name, value):
    """A variable exported in the shell reaches the compile as --set does: a run with it and a plain run
    never serve each other's numbers (DISABLE_LLVM_OPT=1 showed 512 VGPRs for the plain run)."""
    cache = CompileCache(tmp_path / "cache")
    plain = _compile(kernel_dir, cache)
    monkeypatch.setenv(name, value)
    assert identity.keyed_environment((identity.triton_dir(),)) == {name: value}
    with_it = _compile(kernel_dir, cache)
    assert not with_it.cached and with_it.ok
    assert _compile(kernel_dir, cache).cached  # keyed: the same setting again is a hit
    monkeypatch.delenv(name)
    again = _compile(kernel_dir, cache)
    assert again.cached and again.usage == plain.usage
    fresh = _compile(kernel_dir, CompileCache(tmp_path / "fresh"))
    assert again.usage == fresh.usage
    if name == "DISABLE_LLVM_OPT":  # the setting changes this compile: proof that it reached the compiler
        assert with_it.usage != plain.usage


def test_the_keyed_environment_is_what_the_toolchains_triton_reads():
    """Names come from each release's knobs.py and the families its C++ side reads; where Triton keeps its
    own files and what every worker sets itself are not keyed, nor a value equal to the worker's default."""
    here = identity.triton_dir()
    names = identity.knob_names(here)
    assert {"TRITON_DEFAULT_FP_FUSION", "AMDGCN_USE_BUFFER_OPS", "TRITON_PTXAS_PATH", "PTXAS_OPTIONS"} <= names
    env = {"DISABLE_LLVM_OPT": "1", "MLIR_ENABLE_DUMP": "1", "TRITON_CACHE_DIR": "/x", "TRITON_INTERPRET": "1",
           "TRITON_DEFAULT_FP_FUSION": "1", "HOME": "/root", "PATH": "/bin", "USE_IR_LOC": "ttir"}
    assert identity.keyed_environment((here,), env) == {"DISABLE_LLVM_OPT": "1", "MLIR_ENABLE_DUMP": "1",
                                                         "USE_IR_LOC": "ttir"}


# ------------------------------------------------------------------------ item 6: the toolchain's own files

def _farm(src: Path, dst: Path, copy: tuple[str, ...] = ("__init__.py",)) -> None:
    """A Triton package made of links to ``src``'s files (directories made anew, so a file can be removed
    or replaced here), with the files named in ``copy`` copied (edited in the tests)."""
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            if str(rel / f) in copy:
                shutil.copy2(Path(root) / f, dst / rel / f)
            else:
                os.symlink(Path(root) / f, dst / rel / f)


def _fake_env(tmp_path: Path, name: str = "env") -> tuple[Path, Path]:
    """A Python environment whose Triton is the installed one's files (linked), not the installed package."""
    env = tmp_path / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next(env.glob("lib/python*/")) / "site-packages"
    here = identity.triton_dir()
    _farm(here, site / "triton")
    for info in here.parent.glob("triton-*.dist-info"):  # its backends are found through the entry points
        shutil.copytree(info, site / info.name)
    return env, site / "triton"


def test_a_toolchain_rebuilt_at_the_same_version_is_not_served_old_entries(kernel_dir, tmp_path, monkeypatch):
    """A --triton PATH environment whose files change at the same version string (a rebuild)
    compiles again; its identity is its files, read by stat, not its path and version only."""
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "store"))
    env, triton_dir = _fake_env(tmp_path)
    tc = toolchains.environment(str(env))
    assert tc.version == toolchains.triton_version()
    before = toolchain_identity(tc.id)
    cache = CompileCache(tmp_path / "cache")
    first = _compile(kernel_dir, cache, toolchain=tc)
    assert first.ok and not first.cached, first.status
    assert _compile(kernel_dir, cache, toolchain=tc).cached
    # a rebuild: a file of its backends replaced by another of the same version string
    compiler = triton_dir / "backends" / "amd" / "compiler.py"
    text = compiler.read_text()
    compiler.unlink()
    compiler.write_text(text + "\n# rebuilt\n")
    tc = toolchains.environment(str(env))
    after = toolchain_identity(tc.id)
    assert after.fingerprint != before.fingerprint and after.directory == before.directory
    rebuilt = _compile(kernel_dir, cache, toolchain=tc)
    assert not rebuilt.cached and rebuilt.usage == first.usage


def test_an_editable_triton_is_fingerprinted_where_it_imports_from(tmp_path, monkeypatch):
    """A source build installed in development mode: Triton is not in site-packages but where a .pth file
    points; its identity follows those files (the probe says where they are)."""
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "store"))
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    src = tmp_path / "triton-src" / "python"
    here = identity.triton_dir()
    _farm(here, src / "triton")
    for info in here.parent.glob("triton-*.dist-info"):
        shutil.copytree(info, next(env.glob("lib/python*/")) / "site-packages" / info.name)
    (next(env.glob("lib/python*/")) / "site-packages" / "triton-src.pth").write_text(str(src) + "\n")
    tc = toolchains.environment(str(env))
    before = toolchain_identity(tc.id)
    assert before.directory == src / "triton" and before.fingerprint not in ("", "missing")
    (src / "triton" / "__init__.py").write_text((src / "triton" / "__init__.py").read_text() + "\n# rebuilt\n")
    assert toolchain_identity(toolchains.environment(str(env)).id).fingerprint != before.fingerprint


def test_the_fingerprint_is_cheap_and_follows_every_file(tmp_path):
    d = tmp_path / "triton"
    (d / "_C").mkdir(parents=True)
    (d / "_C" / "libtriton.so").write_bytes(b"x" * 10)
    (d / "__pycache__").mkdir()
    a = identity.fingerprint(d)
    (d / "__pycache__" / "x.pyc").write_bytes(b"1")  # Python's own byte code is no part of it
    assert identity.fingerprint(d) == a
    (d / "_C" / "libtriton.so").write_bytes(b"y" * 11)
    assert identity.fingerprint(d) != a
    (d / "_C" / "libtriton.so").unlink()
    assert identity.fingerprint(d) == "missing"
    assert identity.fingerprint(None) == ""


# ------------------------------------------------------------------ item 7: failures from the toolchain

def _fake_release(tmp_path: Path, monkeypatch, version: str = "3.8.0") -> tuple[toolchains.Toolchain, Path]:
    """A release in a store of the test's own, its Triton the installed one's files reporting ``version``."""
    store = tmp_path / "store"
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(store))
    env, triton_dir = _fake_env(store, f"triton-{version}-py{sys.version_info.major}{sys.version_info.minor}")
    init = triton_dir / "__init__.py"
    text = re.sub(r"""__version__ = ['"][^'"]*['"]""", f"__version__ = '{version}'", init.read_text())
    assert f"'{version}'" in text
    init.write_text(text)
    (env / toolchains.MARKER).write_text(json.dumps({"version": version}))
    tc = toolchains.release(version)
    assert Path(tc.python).parent.parent == env
    return tc, triton_dir


def test_a_syntax_error_in_the_toolchains_triton_is_never_cached(kernel_dir, tmp_path, monkeypatch):
    """A SyntaxError in the toolchain's triton/__init__.py was cached as the kernel's verdict and served after
    the toolchain was repaired: now one line naming the toolchain and `toolchains remove`, nothing cached."""
    tc, triton_dir = _fake_release(tmp_path, monkeypatch)
    init = triton_dir / "__init__.py"
    good = init.read_text()
    init.write_text(good + "\ndef broken(:\n")
    cache = CompileCache(tmp_path / "cache")
    with pytest.raises(ToolchainBrokenError) as err:
        _compile(kernel_dir, cache, toolchain=tc)
    line = str(err.value)
    assert "\n" not in line and "Triton 3.8.0 toolchain" in line and "vgprscope toolchains remove 3.8.0" in line
    assert "SyntaxError" in line
    assert not list((tmp_path / "cache").glob("??/*.json"))  # no compile entry (plans are the installed Triton's)
    # the command: one line, exit 2, no traceback
    done = cli("analyze", "--triton", "3.8.0", "--variant", "baseline", "--arch", "gfx942", "--block-m", "64",
               "--block-n", "32", "--head-dim", "64", "--num-stages", "1", "--jobs", "1",
               env={"VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "store"), "VGPRSCOPE_CACHE_DIR": str(tmp_path / "c2")})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (err_line,) = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert "Triton 3.8.0 toolchain" in err_line and "vgprscope toolchains remove 3.8.0" in err_line
    init.write_text(good)
    repaired = _compile(kernel_dir, cache, toolchain=tc)
    assert repaired.ok and not repaired.cached


def test_a_toolchain_file_removed_mid_run_is_an_environment_failure(tmp_path, monkeypatch):
    """`toolchains remove` during a run took the libdevice a compile links: 27 of 64 rows were cached as
    "Failed to parse library ... libdevice". A missing file of the toolchain stops the run, caches nothing."""
    tc, triton_dir = _fake_release(tmp_path, monkeypatch)
    d = tmp_path / "kernels"
    d.mkdir()
    (d / "mine.py").write_text(textwrap.dedent(KERNEL).replace("tl.exp(t) * tl.sin(t)", "tl.erf(t)"))
    load_variants.cache_clear()
    (triton_dir / "backends" / "nvidia" / "lib" / "libdevice.10.bc").unlink()
    cache = CompileCache(tmp_path / "cache")
    with pytest.raises(ToolchainBrokenError) as err:
        _compile(d, cache, arch="sm_90", toolchain=tc)
    assert "Triton 3.8.0 toolchain" in str(err.value) and "toolchains remove 3.8.0" in str(err.value)
    assert not list((tmp_path / "cache").glob("??/*.json"))  # no compile entry (plans are the installed Triton's)


def test_the_worker_tells_a_toolchain_fault_from_a_verdict():
    root = identity.triton_dir()
    assert root is not None
    broken = SyntaxError("invalid syntax")
    broken.filename = str(root / "__init__.py")
    assert protocol.toolchain_fault(broken) and protocol.kind(broken) == protocol.ENVIRONMENT
    gone = RuntimeError(f"Failed to parse library {root}/backends/nvidia/lib/libdevice.none.bc")
    assert protocol.toolchain_fault(gone) and protocol.kind(gone) == protocol.ENVIRONMENT
    verdict = RuntimeError(f"PassManager::run failed in {root}/compiler/compiler.py.")  # the file is there
    assert not protocol.toolchain_fault(verdict) and protocol.kind(verdict) == protocol.COMPILE
    located = RuntimeError(f'error: loc("{root}/language/standard.py":290:0): out of resources')
    assert not protocol.toolchain_fault(located) and protocol.kind(located) == protocol.COMPILE


# ------------------------------------------------------------------------- item 8: snapshot compiles

def test_a_kernel_compiled_from_its_snapshot_is_cached_and_keeps_the_users_lines(tmp_path, monkeypatch):
    """A kernel whose file is gone from this machine compiles from the capture's snapshot: a warm re-run
    compiles nothing, and its line info names the user's file and lines, not the snapshot's temp file."""
    from vgprscope.captures.model import load_capture
    from vgprscope.sources.capture import capture_tasks

    monkeypatch.setenv("VGPRSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    cap_file, moved = gone_library(tmp_path)
    cap = load_capture(cap_file)
    cache = CompileCache(tmp_path / "cache")
    engine = Engine(1, cache)
    tasks = list(capture_tasks(cap, [get_arch("gfx942")]))
    (first,) = engine.compile(tasks)
    assert first.ok and not first.cached and "snapshot" in dict(first.extras)["note"]
    (again,) = Engine(1, cache).compile(tasks)
    assert again.cached and again.usage == first.usage and dict(again.extras)["note"] == dict(first.extras)["note"]
    raw = Engine(1, cache).raw_outputs(tasks[0])
    assert raw is not None
    found = set(re.findall(r'loc\("([^"]+)":(\d+)', raw["ttgir"]))
    assert found and not any("vgprscope_snapshot" in f for f, _ in found)
    triton_files = str(identity.triton_dir())
    files = {(f, n) for f, n in found if not f.startswith(triton_files)}  # tl.sum's own lines are Triton's
    was = tmp_path / "capturing-machine" / "site-packages"  # where the files were when captured
    ops, helpers = was / "gpu_only_ops.py", was / "helpers_for_gpu_only.py"
    assert {Path(f) for f, _ in files} <= {ops, helpers}
    lines = (moved / ops.name).read_text().splitlines()
    for f, n in files:  # each location is a line of the user's file that holds the kernel's code
        if Path(f) == ops:
            assert lines[int(n) - 1].startswith(("    ", "def rms(")), (f, n)
    assert any(Path(f) == ops and "tl.sqrt" in lines[int(n) - 1] for f, n in files)
    assert "vgprscope_snapshot" not in raw["amdgcn"]


def test_a_changed_snapshot_is_a_miss(tmp_path, monkeypatch):
    """The entry of a snapshot compile holds the snapshot's hash: another capture's snapshot compiles anew."""
    from dataclasses import replace

    from vgprscope.captures.model import load_capture
    from vgprscope.sources.capture import capture_tasks

    cap = load_capture(gone_library(tmp_path)[0])
    cache = CompileCache(tmp_path / "cache")
    (task,) = capture_tasks(cap, [get_arch("gfx942")])
    (first,) = Engine(1, cache).compile([task])
    snap = json.loads(task.job.source.snapshot)
    rms = snap["functions"]["gpu_only_ops:rms"]
    rms["source"] = rms["source"].replace("x / r", "x / r * 2.0")
    other = replace(task, job=replace(task.job, source=replace(task.job.source, snapshot=json.dumps(snap))))
    (second,) = Engine(1, cache).compile([other])
    assert first.ok and second.ok and not second.cached


# ------------------------------------------------------------------------------ the compile time limit

SLOW = '''
import triton
import triton.language as tl


@triton.jit
def slow(X, N: tl.constexpr):
    acc = 0.0
    for i in tl.static_range(N):
        acc += i
    tl.store(X, acc)
'''


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_compile_past_its_time_limit_is_a_row_never_cached(tmp_path, monkeypatch, jobs):
    """A compile that would run for minutes (here: a loop the front end unrolls 10**8 times) stops at the
    limit (1 s: the front end would take minutes, so any limit stops it) and is a row with its reason; it is not
    cached."""
    import vgprscope

    monkeypatch.setenv("VGPRSCOPE_COMPILE_TIMEOUT", "1")
    monkeypatch.setenv("VGPRSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "slow_kernel.py").write_text(SLOW)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    mod = importlib.import_module("slow_kernel")
    p = vgprscope.pointer("fp32")
    import time

    t0 = time.monotonic()
    (rec,) = vgprscope.analyze(mod.slow, p, N=10**8, arch="gfx942", jobs=jobs)
    assert time.monotonic() - t0 < 60
    assert not rec.ok and "ran past 1 s" in rec.status and "VGPRSCOPE_COMPILE_TIMEOUT" in rec.status
    # no compile entry (the capture's derivations, kept under plans/, are not a compile's verdict)
    assert not [f for f in (tmp_path / "cache").rglob("??/*.json") if "plans" not in f.parts]
    sys.modules.pop("slow_kernel", None)


def test_a_bad_time_limit_is_one_line(monkeypatch):
    from vgprscope.compile.engine import compile_timeout

    monkeypatch.setenv("VGPRSCOPE_COMPILE_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="VGPRSCOPE_COMPILE_TIMEOUT='soon' is not a number of seconds"):
        compile_timeout()
    monkeypatch.setenv("VGPRSCOPE_COMPILE_TIMEOUT", "")
    assert compile_timeout() == protocol.DEFAULT_TIMEOUT


def test_a_compile_stuck_where_no_signal_reaches_ends_its_worker(tmp_path):
    """A compile stuck in native code (the alarm cannot interrupt it: here it is blocked) ends the worker
    process soon after its limit, with the exit code its pool reports as a compile that would not stop. The
    grace past the limit (10 s) is shortened here to 0.5 s: the same timer ends the process either way."""
    code = textwrap.dedent(f"""
        import signal, sys, time
        sys.path.insert(0, {runtime.BOOT_DIR!r})
        from _vgprscope_boot import load
        load({runtime.DIRECTORY!r}, "protocol")._OWN_PROCESS = True
        guard = load({runtime.DIRECTORY!r}, "guard")
        guard.HARD_STOP_GRACE_S = 0.5
        with guard.deadline(1):
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(120)
    """)
    import time

    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=100)
    assert done.returncode == protocol.TIMEOUT_EXIT == 124, done.stderr
    assert 1.5 <= time.monotonic() - t0 < 60  # not before its limit and grace


TORCH_OPS = '''
import torch  # noqa: F401  (a kernel library that imports torch: a Triton-only toolchain cannot import it)
import triton
import triton.language as tl


@triton.jit
def double(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    tl.store(Y + offs, tl.exp(x) * 2, mask=offs < n)
'''

TORCH_RUN = '''
import sys
import torch

sys.path.insert(0, sys.argv[1])
from torch_ops import double

x = torch.randn(1000)
y = torch.empty_like(x)
double[(4,)](x, y, 1000, BLOCK=256)
print("ok")
'''


def test_a_warm_diff_compiles_nothing_kernels_that_import_torch_included(tmp_path, monkeypatch):
    """A kernel module importing torch is read from its file in a release's environment (Triton alone): the
    warm re-run of the diff compiles nothing on either side (it recompiled, 5-17 s)."""
    import vgprscope

    tc, _ = _fake_release(tmp_path, monkeypatch)
    (tmp_path / "torch_ops.py").write_text(TORCH_OPS)
    (tmp_path / "run_torch.py").write_text(TORCH_RUN)
    cap = tmp_path / "cap.json"
    done = cli("capture", "-o", str(cap), "--", sys.executable, str(tmp_path / "run_torch.py"), str(tmp_path),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr

    def run() -> tuple[list[int], object]:
        totals: list[int] = []
        result = vgprscope.diff(triton=[tc.version, toolchains.triton_version()], capture=str(cap),
                                arch=["gfx942"], jobs=1, cache=str(tmp_path / "cache"),
                                on_progress=lambda done, total: totals.append(total) if done == 0 else None)
        return totals, result

    cold, first = run()
    assert sum(cold) == 2  # one compile per side
    warm, second = run()
    assert sum(warm) == 0  # nothing compiled
    assert first.to_json() == second.to_json()


def test_the_import_environment_follows_what_decides_whether_a_module_imports(tmp_path, monkeypatch):
    """What the cache keeps of a captured kernel (its derivation, a kernel directory's plan) is keyed by whether
    its module imports here: the search path, a distribution installed or removed on it, a start-up file
    refusing a module (a sitecustomize), the GPUs a process sees. The same environment gives the same key."""
    seen = [identity.import_environment()]
    assert identity.import_environment() == seen[0]

    def changed() -> None:
        now = identity.import_environment()
        assert now not in seen
        seen.append(now)

    monkeypatch.syspath_prepend(str(tmp_path))
    changed()
    (tmp_path / "torch-2.13.0.dist-info").mkdir()
    changed()
    (tmp_path / "sitecustomize.py").write_text("import sys\n")
    changed()
    os.utime(tmp_path / "sitecustomize.py", ns=(1, 1))  # another file, whatever its time
    (tmp_path / "sitecustomize.py").write_text("import sys  # refuses torch\n")
    changed()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    changed()


def test_a_snapshot_compile_is_never_served_for_the_files_compile(tmp_path):
    """A kernel compiled from the capture's snapshot where its file was gone, then its file back (the library
    installed again, edited since the capture): the same cache compiles the file, never hands back the
    snapshot's entry."""
    from vgprscope.captures.model import load_capture
    from vgprscope.sources.capture import capture_tasks

    cap_file, moved = gone_library(tmp_path)
    cache = CompileCache(tmp_path / "cache")
    gfx = [get_arch("gfx942")]
    (from_snapshot,) = Engine(1, cache).compile(capture_tasks(load_capture(cap_file), gfx))
    assert from_snapshot.ok and "snapshot" in dict(from_snapshot.extras)["note"]
    back = tmp_path / "capturing-machine"
    moved.parent.rename(back)
    ops = back / "site-packages" / "gpu_only_ops.py"
    # it imports here now (no GPU probe), so its compile is an import's, keyed as the file's
    ops.write_text(ops.read_text().replace("x / r", "x / r * tl.exp(x)").replace(
        'raise RuntimeError("gpu_only_ops needs a GPU to import")', "pass"))
    (from_file,) = Engine(1, cache).compile(capture_tasks(load_capture(cap_file), gfx))
    assert from_file.ok and not from_file.cached and "note" not in dict(from_file.extras)


def _wheel_install(site: Path, files: dict[str, bytes]) -> Path:
    """Triton's files written as an installer writes them: the package, then its RECORD (sha256, size)."""
    import base64
    import hashlib

    rows = []
    for rel, data in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{rel},sha256={digest},{len(data)}")
    info = site / "triton-3.9.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return site / "triton"


def test_a_reinstall_of_the_same_wheel_keeps_the_fingerprint_an_edit_does_not(tmp_path):
    """Installing the same Triton again (an editable reinstall that reinstalls its dependencies, another
    environment) rewrites every file with a new mtime but the same bytes: the same cache entries serve it.
    A file edited after the install is another compiler."""
    import time

    files = {"triton/__init__.py": b"__version__ = '3.9.0'\n", "triton/_C/libtriton.so": b"\x7fELF" + b"x" * 100}
    first = identity.fingerprint(_wheel_install(tmp_path / "a" / "site-packages", files))
    time.sleep(0.01)
    again = _wheel_install(tmp_path / "b" / "site-packages", files)
    assert identity.fingerprint(again) == first
    time.sleep(0.01)
    (again / "__init__.py").write_bytes(b"__version__ = '3.9.1'\n")  # same size, edited after the install
    assert identity.fingerprint(again) != first


def test_the_engine_asks_the_jobs_source_what_it_keeps():
    """A Triton cache entry's outputs stay in that cache: its source says so (``keeps_outputs``), and the engine
    asks the source rather than telling the kinds apart by their dicts (it never names one)."""
    import inspect

    from vgprscope.compile import engine
    from vgprscope.core.job import FunctionSource, IRSource, StoredOutputs

    assert (FunctionSource.keeps_outputs, IRSource.keeps_outputs, StoredOutputs.keeps_outputs) == (True, True, False)
    text = inspect.getsource(engine)
    assert not any(f'"{kind}"' in text for kind in ("stored", "function", "ir"))
