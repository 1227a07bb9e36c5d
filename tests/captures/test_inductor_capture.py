"""torch.compile's kernels: PyTorch Inductor compiles its generated Triton kernels through ``triton.compile``
and launches them with its own launchers. A capture records them at the compile (the hook's
``triton.compile`` wrapper), each config of Inductor's autotuner as its own slot, and analyses them
anywhere from the capture's snapshot of the generated source (Inductor's cache directory is temporary).

The committed capture is a torch.compile'd Llama-style block (RMSNorm, rotary embedding, SDPA attention,
SwiGLU MLP, forward, bf16) captured on an H100 (torch 2.11, Triton 3.6) by ``.ci/gpu_capture_inductor.sh``,
whose registers and shared memory for sm_90 equalled ``cuobjdump -res-usage`` of each of the 12 cubins
Inductor wrote (reports/inductor-capture-h100.md)."""

from __future__ import annotations

import gzip
import os
import sys
from pathlib import Path

import pytest
from capture_helpers import ROOT
from fixture_paths import unpack

from vgprscope.captures.model import load_capture
from vgprscope.captures.run import INDUCTOR_NO_CACHE, capture_env

FIXTURE = ROOT / "tests" / "fixtures" / "inductor_block_h100_capture.json.gz"


@pytest.fixture(scope="module")
def inductor_capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("inductor") / "cap.json"
    path.write_bytes(gzip.open(FIXTURE).read())
    return path


def test_the_capture_holds_each_kernel_inductor_compiled_with_its_configs(inductor_capture):
    cap = load_capture(inductor_capture)
    assert len(cap.launches) == 12 and len(cap.kernels) == 7
    assert {x.origin for x in cap.launches} == {"triton.compile"}
    assert {x.producer["by"] for x in cap.launches} == {"inductor"}
    assert {x.producer["kernel_name"] for x in cap.launches} == {k.qualname for k in cap.kernels}
    tuned = [x for x in cap.launches if x.autotune]
    assert len(tuned) == 10 and {x.autotune["count"] for x in tuned} == {2}
    assert {x.target["backend"] for x in cap.launches} == {"cuda"}
    assert all(k.snapshot for k in cap.kernels)  # the generated source travels with the capture


def test_inductor_kernels_compile_gpu_free_for_amd_and_nvidia_from_the_snapshot(inductor_capture):
    """Every kernel on gfx942 and sm_90, though its generated module is gone and its CUDA-only options
    (launch_pdl) are dropped for the HIP backend; rows are labelled by Inductor's kernel names."""
    import vgprscope

    result = vgprscope.analyze(capture=str(inductor_capture), arch=["gfx942", "sm_90"], jobs=2)
    records = result.records
    assert len(records) == 24
    assert all(r.ok for r in records), sorted({r.status for r in records if not r.ok})
    assert {r.variant for r in records} == {"inductor"}
    assert {r.kernel for r in records} == {k.qualname for k in load_capture(inductor_capture).kernels}


def test_a_capture_has_inductor_compile_again_rather_than_serve_its_caches(tmp_path):
    """A model compiled before is served from Inductor's caches with no triton.compile call: the captured
    command runs with TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 unless the user set it."""
    assert capture_env(tmp_path, {})[INDUCTOR_NO_CACHE] == "1"
    assert capture_env(tmp_path, {INDUCTOR_NO_CACHE: "0"})[INDUCTOR_NO_CACHE] == "0"


def test_a_recording_block_has_inductor_compile_again_and_restores_its_setting():
    import torch._inductor.config  # noqa: F401  (the block sees Inductor imported, as a model's process has it)
    import torch.compiler.config as config

    import vgprscope

    before = config.force_disable_caches
    with vgprscope.capture():
        assert config.force_disable_caches is True
    assert config.force_disable_caches == before


# What torch does with each compile while force_disable_caches is on (compile_fx's with_fresh_cache_if_config,
# called by every torch.compile'd graph's compile): a temporary Inductor cache made inside Inductor's directory,
# with Triton's cache inside it, left there. The script writes what a compile writes in both, and where they were.
FRESH = r"""
import os, sys, time
import torch._inductor.config as config
from torch._inductor.compile_fx import with_fresh_cache_if_config

assert config.force_disable_caches
with with_fresh_cache_if_config():
    inductor, triton = os.environ["TORCHINDUCTOR_CACHE_DIR"], os.environ["TRITON_CACHE_DIR"]
    os.makedirs(os.path.join(inductor, "ab"))
    open(os.path.join(inductor, "ab", "cabgenerated.py"), "w").write("# a generated module")
    os.makedirs(os.path.join(triton, "HASH"))
    open(os.path.join(triton, "HASH", "k.cubin"), "wb").write(b"x" * 1000)
open(sys.argv[1], "w").write(inductor)
if len(sys.argv) > 2:
    time.sleep(60)
"""


def _listing(*dirs: Path) -> list[str]:
    return sorted(str(p) for d in dirs for p in d.rglob("*"))


@pytest.fixture
def user_dirs(tmp_path) -> tuple[Path, Path, dict[str, str]]:
    """The user's Inductor and Triton cache directories, each holding what an earlier run left."""
    inductor, triton = tmp_path / "torchinductor_alice", tmp_path / "triton-cache"
    (inductor / "fxgraph" / "ab").mkdir(parents=True)
    (inductor / "fxgraph" / "ab" / "entry").write_text("x")
    (triton / "OLDHASH").mkdir(parents=True)
    (triton / "OLDHASH" / "k.cubin").write_text("x")
    env = {"TORCHINDUCTOR_CACHE_DIR": str(inductor), "TRITON_CACHE_DIR": str(triton), "TRITON_INTERPRET": "0"}
    env.pop(INDUCTOR_NO_CACHE, None)
    return inductor, triton, env


def test_a_capture_leaves_the_users_inductor_and_triton_caches_as_they_were(tmp_path, user_dirs):
    """The compiles capture forces make their temporary caches in a directory of capture's own, removed at the
    end: the user's TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR list the same files before and after."""
    from capture_helpers import cli

    inductor, triton, env = user_dirs
    before = _listing(inductor, triton)
    used = tmp_path / "used"
    env = {**{k: v for k, v in os.environ.items() if k != INDUCTOR_NO_CACHE}, **env}
    done = cli("capture", "-o", str(tmp_path / "cap.json"), "--", sys.executable, "-c", FRESH, str(used), env=env)
    assert used.exists(), done.stderr[-2000:]  # the command ran, with force_disable_caches on
    assert "launched no Triton kernel" in done.stderr
    assert _listing(inductor, triton) == before
    fresh = Path(used.read_text())
    assert not fresh.exists() and not fresh.is_relative_to(inductor)  # capture's own directory, gone with it


def test_a_capture_stopped_by_ctrl_c_removes_the_forced_compiles_directory(tmp_path, user_dirs):
    import signal
    import subprocess
    import time

    inductor, triton, env = user_dirs
    before = _listing(inductor, triton)
    used = tmp_path / "used"
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", "capture", "-o", str(tmp_path / "cap.json"), "--",
                             sys.executable, "-c", FRESH, str(used), "wait"],
                            env={**{k: v for k, v in os.environ.items() if k != INDUCTOR_NO_CACHE}, **env},
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not used.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert used.exists(), "the captured command never started"
    fresh = Path(used.read_text())
    assert fresh.is_dir()
    os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C, to the whole foreground group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert not fresh.exists()
    assert _listing(inductor, triton) == before


def test_a_recording_block_leaves_the_users_inductor_cache_as_it_was(tmp_path, user_dirs):
    """``vgprscope.capture()`` forces the compiles inside its block: their temporary caches go to a directory of
    the process's own (removed at its exit); the user's setting is back when the block ends."""
    import subprocess

    inductor, triton, env = user_dirs
    before = _listing(inductor, triton)
    used = tmp_path / "used"
    script = ("import os, sys, runpy, torch._inductor.config\nimport vgprscope\n"
              "with vgprscope.capture():\n"
              f"    sys.argv = ['fresh', {str(used)!r}]\n"
              f"    runpy.run_path({str(tmp_path / 'fresh.py')!r})\n"
              f"assert os.environ['TORCHINDUCTOR_CACHE_DIR'] == {str(inductor)!r}\n")
    (tmp_path / "fresh.py").write_text(FRESH)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**{k: v for k, v in os.environ.items() if k != INDUCTOR_NO_CACHE}, **env})
    assert done.returncode == 0, done.stderr[-2000:]
    fresh = Path(used.read_text())
    assert not fresh.exists() and not fresh.is_relative_to(inductor)
    assert _listing(inductor, triton) == before


def test_kept_sources_put_a_generated_kernels_spill_sites_at_its_modules_own_lines(inductor_capture, tmp_path):
    """``capture --keep-sources DIR``: the generated modules of the captured kernels (in Inductor's temporary
    cache while the command runs) are written into DIR as Inductor laid them out, the capture names the copies,
    and a compile's spill sites are at the module's own lines. The command's run is stood in for by the block's
    modules (tests/fixtures/inductor_block_h100_cache.tar.xz) where the capture recorded them."""
    import json
    import tarfile
    from dataclasses import replace

    from capture_helpers import cli

    from vgprscope.captures.model import save_capture
    from vgprscope.captures.run import kept

    with tarfile.open(ROOT / "tests" / "fixtures" / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, tmp_path / "h100")
    modules = {p.name: p for p in (tmp_path / "h100" / "inductor").glob("*/*.py")}
    cap = load_capture(inductor_capture)
    launches = [replace(x, kernel=replace(x.kernel, file=str(modules[Path(x.kernel.file).name])))
                for x in cap.launches]
    out = kept(launches, tmp_path / "kept")
    files = {x.kernel.file for x in out}
    assert len(files) == 7 and all(Path(f).is_file() and Path(f).is_relative_to(tmp_path / "kept") for f in files)
    assert {Path(f).parent.name + "/" + Path(f).name for f in files} <= \
        {p.parent.name + "/" + p.name for p in modules.values()}
    for x in out:
        snap = json.loads(x.kernel.snapshot)
        fn = snap["functions"][snap["kernel"]]
        assert (fn["file"], fn["line"]) == (x.kernel.file, 18)  # the def line in the module
    path = tmp_path / "kept.json"
    save_capture(path, replace(cap, launches=tuple(out)))
    done = cli("explain", "--capture", str(path), "--arch", "sm_90", "--jobs", "2", env={"COLUMNS": "160"})
    assert done.returncode == 0, done.stderr[-2000:]
    rotary = next(Path(f).name for f in files if "ccvafnxl" in f)  # its XBLOCK=1024 config spills on sm_90
    sites = [ln for ln in done.stdout.splitlines() if rotary in ln or rotary[:12] in ln]
    assert sites, done.stdout[-3000:]
    assert "vgprscope_snapshot_" not in done.stdout


@pytest.mark.gpu
def test_a_gpu_capture_of_a_compiled_block_equals_cuobjdump_of_every_cubin(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_CACHE_DIR": str(tmp_path / "tc"),
           "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"), INDUCTOR_NO_CACHE: "0"}
    cap, rows = tmp_path / "cap.json", tmp_path / "sm90.json"
    done = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", str(cap), "--", sys.executable,
                           str(ROOT / "scripts" / "gpu_inductor_block.py")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", "--capture", str(cap), "--arch", "sm_90",
                           "--format", "json", "-o", str(rows)],
                          env={**env, "TRITON_CACHE_DIR": str(tmp_path / "tc-vgprscope")}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_cubins.py"), str(tmp_path / "tc"),
                           str(rows)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
