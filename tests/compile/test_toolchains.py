"""Other Triton releases as toolchains: one release is installed once per test session (into
$VGPRSCOPE_TOOLCHAIN_DIR), its counts equal a direct triton.compile under that release for a bundled variant
and for a captured user kernel, `vgprscope diff` exits by the gate's rules on a real difference, and every
bad input is one line, exit 2, with nothing half-made left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from capture_helpers import ROOT, USER_KERNELS, cli

import vgprscope
from vgprscope.compile import toolchains
from vgprscope.compile.engine import triton_version

OTHER = "3.8.0"
SMALL = ["--block-m", "64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4", "--num-stages", "1"]


@pytest.fixture(scope="session")
def other() -> toolchains.Toolchain:
    return toolchains.release(OTHER, print)


def test_a_release_is_installed_once_whole_and_listed(other):
    assert other.version == OTHER and other.kind == "release" and Path(other.python).exists()
    env = Path(other.python).parent.parent
    assert (env / toolchains.MARKER).is_file()
    assert not [p for p in env.parent.iterdir() if ".partial-" in p.name]
    again = toolchains.release(OTHER)  # no install: the marker says it is whole
    assert again == other
    listed = {t.version: size for t, size in toolchains.list_installed()}
    assert listed[OTHER] > 100 * 2**20
    done = cli("toolchains")
    assert done.returncode == 0 and OTHER in done.stdout


# A direct compile in the other release's own interpreter, written out by hand from the launch (what its JIT
# derives), printing the counts the parsers read (they are the standard library only: PYTHONPATH gives them).
DIRECT = r"""
import json, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1])
import importlib, triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

spec = json.loads(sys.argv[2])
fn = getattr(importlib.import_module(spec["module"]), spec["name"])
while not isinstance(fn, triton.runtime.jit.JITFunction):
    fn = fn.fn
out = {}
for arch, target in (("gfx942", GPUTarget("hip", "gfx942", 64)), ("sm_90", GPUTarget("cuda", 90, 32))):
    vendor = "hip" if arch.startswith("gfx") else "cuda"
    attrs = {(fn.arg_names.index(n),): a for n, a in spec["attrs"][vendor].items()}
    src = ASTSource(fn=fn, signature=spec["signature"], constexprs=spec["constexprs"], attrs=attrs)
    k = triton.compile(src, target=target, options=spec["options"])
    if vendor == "hip":
        out[arch] = {"amdgcn": k.asm["amdgcn"], "shared": k.metadata.shared}
    else:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(k.asm["cubin"])
            f.flush()
            text = subprocess.run([knobs.nvidia.cuobjdump.path, "--dump-resource-usage", f.name],
                                  capture_output=True, text=True, check=True).stdout
        out[arch] = {"cuobjdump": text, "name": k.metadata.name}
print(json.dumps(out))
"""


def direct(tc: toolchains.Toolchain, module_dir: Path, spec: dict) -> dict:
    """Registers of the launch compiled directly by the other release (its own interpreter, Triton alone),
    read here by the same parsers."""
    from vgprscope.core.parse.amdgcn import parse_amdgcn
    from vgprscope.core.parse.nvidia import parse_cuobjdump_resources

    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_ALWAYS_COMPILE": "1", "PYTHONPATH": ""}
    done = subprocess.run([tc.python, "-c", DIRECT, str(module_dir), json.dumps(spec)], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {"gfx942": parse_amdgcn(raw["gfx942"]["amdgcn"], raw["gfx942"]["shared"]).vgpr_total,
            "sm_90": parse_cuobjdump_resources(raw["sm_90"]["cuobjdump"], raw["sm_90"]["name"])["REG"]}


def _regs(rec) -> int:
    return rec.usage.vgpr_total if rec.arch.startswith("gfx") else rec.usage.regs


def test_a_captured_kernel_compiles_as_that_release_compiles_it(other, ops_capture):
    cap = ops_capture.path
    records = vgprscope.analyze(capture=cap, arch=["gfx942", "sm_90"], triton=OTHER, jobs=2).records
    adds = {r.arch: r for r in records if r.kernel == "add"}
    assert all(r.ok and r.triton_version == OTHER and r.toolchain == OTHER for r in adds.values())
    want = direct(other, USER_KERNELS, {
        "module": "my_ops", "name": "add",
        "signature": {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        "constexprs": {"BLOCK": 256},
        "attrs": {"hip": {n: [["tt.divisibility", 16], ["tt.pointer_range", 32]] for n in "XYZ"},
                  "cuda": {n: [["tt.divisibility", 16]] for n in "XYZ"}},
        "options": {"num_warps": 4}})
    assert {a: _regs(r) for a, r in adds.items()} == want


def test_a_bundled_variant_compiles_as_that_release_compiles_it(other, tmp_path):
    (amd, nv) = vgprscope.analyze(variant="baseline", arch=["gfx942", "sm_90"], block_m=64, block_n=32, head_dim=64,
                                  num_warps=4, num_stages=1, triton=OTHER, jobs=2).records
    assert amd.ok and nv.ok and amd.triton_version == nv.triton_version == OTHER
    pointers = ("Q", "K", "V", "O")
    strides = [f"stride_{x}{d}" for x in "qkvo" for d in ("b", "h", "m" if x in "qo" else "n")]
    spec = {"module": "vgprscope.kernels.baseline", "name": "attn_fwd",
            "signature": {**{p: "*fp16" for p in pointers}, "sm_scale": "fp32", **{s: "i32" for s in strides},
                          "num_heads": "i32", "kv_group": "constexpr", "seqlen_q": "i32", "seqlen_k": "i32",
                          **{c: "constexpr" for c in ("BLOCK_M", "BLOCK_N", "BLOCK_D", "HEAD_DIM", "CAUSAL", "PACK",
                                                       "QK_FP16", "BLOCK_DK", "TMA")}},
            "constexprs": {"kv_group": 1, "BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_D": 64, "HEAD_DIM": 64,
                           "CAUSAL": False, "PACK": False, "QK_FP16": False, "BLOCK_DK": 0, "TMA": False},
            "attrs": {"hip": {n: [["tt.divisibility", 16]] + ([["tt.pointer_range", 32]] if n in pointers else [])
                              for n in (*pointers, *strides, "num_heads")},
                      "cuda": {n: [["tt.divisibility", 16]] for n in (*pointers, *strides, "num_heads")}},
            "options": {"num_warps": 4, "num_stages": 1}}
    # the bundled kernels import as vgprscope.kernels: a package directory beside vgprscope for the script
    pkg = ROOT / "vgprscope" / "kernels"
    module_dir = ROOT if pkg.exists() else _kernels_as_package(tmp_path)
    assert direct(other, module_dir, spec) == {"gfx942": amd.usage.vgpr_total, "sm_90": nv.usage.regs}


def _kernels_as_package(where: Path) -> Path:
    """A directory in which ``vgprscope.kernels`` is this checkout's kernels/ (as an install maps it); the test's
    own (one made in a toolchain store shared by checkouts pointed at another checkout's, or at one removed)."""
    root = where / "kernels-as-package"
    (root / "vgprscope").mkdir(parents=True)
    (root / "vgprscope" / "__init__.py").write_text("")
    (root / "vgprscope" / "kernels").symlink_to(ROOT / "kernels")
    return root


def test_diff_exits_by_the_gate_rules_on_a_real_difference(other):
    env: dict[str, str] = {}  # the session's compile cache: what each side compiles, not whether it was cached
    sel = ["--variant", "baseline", "--arch", "gfx942", "--jobs", "2"]
    # --strict: any register growth fails (by default one within its occupancy step is a change that passes)
    forward = cli("diff", "--triton", OTHER, "--triton", triton_version(), *sel, "--strict", "-f", "json", env=env)
    backward = cli("diff", "--triton", triton_version(), "--triton", OTHER, *sel, "--strict", "-f", "json", env=env)
    a, b = json.loads(forward.stdout), json.loads(backward.stdout)
    (row_a,), (row_b,) = a["rows"], b["rows"]
    va = next(m for m in row_a["metrics"] if m["metric"] == "vgpr_total")
    vb = next(m for m in row_b["metrics"] if m["metric"] == "vgpr_total")
    assert va["baseline"] == vb["current"] and va["current"] == vb["baseline"] and va["delta"] != 0
    # the release with fewer VGPRs on the after side passes; the other way round fails
    assert {forward.returncode, backward.returncode} == {0, 1}
    worse = forward if forward.returncode == 1 else backward
    assert json.loads(worse.stdout)["diff_summary"].endswith("1 of 1 kernel x arch entry regresses")
    # nothing compiles on either side: nothing comparable
    none = cli("diff", "--triton", OTHER, "--triton", triton_version(), "--variant", "baseline", "--arch", "gfx942",
               "--head-dim", "1000", env=env)
    assert none.returncode == 2 and "nothing could be compared" in none.stderr


def test_a_setting_on_and_off_is_one_command():
    """One release, a compiler setting on the second side: AMD buffer operations turned off."""
    done = cli("diff", "--set", "AMDGCN_USE_BUFFER_OPS=0", "--variant", "baseline", "--arch", "gfx942", *SMALL,
               "-f", "json")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["after"]["settings"] == {"AMDGCN_USE_BUFFER_OPS": "0"} and doc["before"]["settings"] == {}
    (row,) = doc["rows"]
    assert row["status"] == {"baseline": "ok", "current": "ok"}
    assert any(m["delta"] != 0 for m in row["metrics"])  # the setting reaches the compile


@pytest.mark.parametrize("spec, message", [
    ("9.9.9", "not a release with a wheel for Python"),
    ("2.1.0", "older than 3.3.0"),
    ("three", "is not a Triton release number"),
    ("/nonexistent/env", "is neither a Python environment nor an interpreter"),
])
def test_bad_toolchains_are_one_line_and_exit_2(spec, message, tmp_path):
    done = cli("diff", "--triton", spec, "--triton", triton_version(), "--variant", "baseline", "--arch", "gfx942",
               env={"VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "tc")})
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith("vgprscope: installing")]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr
    left = [p for p in (tmp_path / "tc").glob("*") if not p.name.endswith(".lock")] if (tmp_path / "tc").exists() else []
    assert not left  # nothing half-made


def test_an_environment_without_triton_is_one_line(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    done = cli("diff", "--triton", str(tmp_path / "bare"), "--set", "X=1", "--variant", "baseline")
    assert done.returncode == 2 and "has no usable Triton" in done.stderr


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_no_network_is_one_line_and_leaves_nothing(tmp_path, installer):
    """Both installers: uv where it is on PATH, venv + pip (CI's case) where it is not."""
    path = os.environ["PATH"]
    uv = shutil.which("uv")
    if installer == "uv" and uv is None:
        pytest.skip("uv is not on PATH")
    if installer == "pip" and uv is not None:
        path = os.pathsep.join(d for d in path.split(os.pathsep) if not (Path(d) / "uv").exists())
    # no pip.conf either: a machine's extra indexes or find-links would stand in for the network
    env = {"VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "tc"), "PIP_CONFIG_FILE": os.devnull,
           "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "UV_DEFAULT_INDEX": "http://127.0.0.1:9/simple",
           "UV_INDEX_URL": "http://127.0.0.1:9/simple", "UV_NO_CONFIG": "1", "PIP_RETRIES": "1",
           "PIP_TIMEOUT": "2", "UV_OFFLINE": "", "PATH": path}
    done = cli("diff", "--triton", "3.7.0", "--triton", triton_version(), "--variant", "baseline", env=env)
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith("vgprscope: installing")]
    assert len(lines) == 1 and "cannot install Triton 3.7.0: PyPI cannot be reached" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not [p for p in (tmp_path / "tc").glob("*") if not p.name.endswith(".lock")]


@pytest.mark.parametrize("said, message", [
    # pip offline: its retry warning names the connection, then it finds no versions
    ("WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(...: Failed to establish a "
     "new connection: [Errno 111] Connection refused')': /simple/triton/\nERROR: Could not find a version that "
     "satisfies the requirement triton==3.7.0 (from versions: none)\nERROR: No matching distribution found for "
     "triton==3.7.0", "PyPI cannot be reached"),
    # an index that answers but has no wheel for this platform
    ("ERROR: Could not find a version that satisfies the requirement triton==3.7.0 (from versions: none)\n"
     "ERROR: No matching distribution found for triton==3.7.0", "offers no Triton wheel at all for Python"),
    # a version that is not a release: the releases pip saw are the allowed values
    ("ERROR: Could not find a version that satisfies the requirement triton==3.7.7 (from versions: 3.6.0, 3.8.0)\n"
     "ERROR: No matching distribution found for triton==3.7.7", "allowed: 3.6.0, 3.8.0 ("),
    # ... those vgprscope takes (3.3.0 and newer), shortened to their ends when long
    ("ERROR: Could not find a version that satisfies the requirement triton==9 (from versions: 0.4.1, 0.4.2, 1.0.0, "
     "2.0.0, 2.1.0, 3.0.0, 3.1.0, 3.3.0, 3.3.1, 3.4.0, 3.5.0, 3.5.1, 3.6.0, 3.7.0, 3.9.0)",
     "allowed: 3.3.0 to 3.9.0 (8 releases)"),
    # uv's words for the same
    ("  x No solution found when resolving dependencies:\n  `-> Because there is no version of triton==3.7.7 and "
     "you require triton==3.7.7, we can conclude that your requirements are unsatisfiable.",
     "not a release with a wheel for Python"),
    ("error: Request failed after 3 retries\n  Caused by: error sending request for url "
     "(https://pypi.org/simple/triton/)\n  Caused by: dns error: failed to lookup address information",
     "PyPI cannot be reached"),
    ("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
     "the disk is full"),
])
def test_installer_failures_name_the_cause(said, message):
    line = toolchains._pip_failure("3.7.0", said)
    assert message in line and line.startswith("cannot install Triton 3.7.0: ") and "\n" not in line


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    import errno

    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "tc"))

    def full(cmd, version):
        (Path(cmd[-1]) if "venv" in cmd else tmp_path).mkdir(parents=True, exist_ok=True)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(toolchains, "_run", full)
    with pytest.raises(toolchains.ToolchainError, match="the disk is full"):
        toolchains.release("3.7.0")
    assert not [p for p in (tmp_path / "tc").glob("*") if not p.name.endswith(".lock")]


# ---- the store's faults: an install killed mid-way, a toolchain broken in place, a store that cannot be used --

def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _fake_toolchain(store: Path, version: str, marker: str | None = None, python: bool = True) -> Path:
    """A toolchain directory as an install leaves it (its interpreter a link to this one's), made by hand."""
    env = store / toolchains._env_name(version)
    (env / "bin").mkdir(parents=True)
    if python:
        (env / "bin" / "python").symlink_to(sys.executable)
    (env / "lib.bin").write_bytes(b"x" * 2**20)
    (env / toolchains.MARKER).write_text(json.dumps({"version": version}) if marker is None else marker)
    return env


def test_an_interrupted_install_is_listed_removable_and_cleaned_by_the_next_install(tmp_path, monkeypatch):
    """SIGTERM / SIGKILL during an install leaves its scratch directory (about 1 GB): `toolchains` lists it,
    `toolchains remove` deletes it, and the next install removes every one whose process is gone; one whose
    process still runs (an install under way) is listed as such and left alone."""
    store = tmp_path / "tc"
    name = toolchains._env_name("3.7.0")
    dead = store / f".{name}.partial-{_dead_pid()}"
    running = store / f".{name}.partial-{os.getpid()}"
    for d in (dead, running):
        d.mkdir(parents=True)
        (d / "wheel").write_bytes(b"x" * 2**20)
    env = {"VGPRSCOPE_TOOLCHAIN_DIR": str(store)}
    listed = cli("toolchains", env=env)
    assert listed.returncode == 0, listed.stderr
    assert f"{dead}  (left by an interrupted install)" in listed.stdout
    assert f"{running}  (being installed by process {os.getpid()})" in listed.stdout
    removed = cli("toolchains", "remove", "3.7.0", env=env)
    assert removed.returncode == 0, removed.stderr
    assert not dead.exists() and running.exists()

    dead.mkdir()
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(store))

    def no_network(version, env, say):
        raise toolchains.ToolchainError("cannot install Triton 3.7.0: PyPI cannot be reached (no network)")

    monkeypatch.setattr(toolchains, "_create", no_network)
    with pytest.raises(toolchains.ToolchainError):
        toolchains.release("3.7.0")
    assert not dead.exists() and running.exists()


@pytest.mark.parametrize("marker, python, problem", [
    ("{not json", True, "unreadable or names another release"),
    (None, False, "bin/python is missing"),
])
def test_a_broken_toolchain_is_one_line_listed_as_broken_and_removable(tmp_path, marker, python, problem):
    """A toolchain whose marker is garbage was used yet neither listed nor removable; one whose interpreter is
    gone failed every row of every run. Each is one line naming the remedy, listed as broken, and removed."""
    store = tmp_path / "tc"
    env_dir = _fake_toolchain(store, "3.7.0", marker, python)
    env = {"VGPRSCOPE_TOOLCHAIN_DIR": str(store)}
    done = cli("analyze", "--triton", "3.7.0", "--variant", "baseline", "--arch", "gfx942", *SMALL, env=env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Triton 3.7.0 toolchain" in lines[0] and "is broken" in lines[0], done.stderr
    assert problem in lines[0] and "toolchains remove 3.7.0" in lines[0]
    listed = cli("toolchains", env=env)
    assert f"{env_dir}  (broken: " in listed.stdout and problem in listed.stdout, listed.stdout
    removed = cli("toolchains", "remove", "3.7.0", env=env)
    assert removed.returncode == 0, removed.stderr
    assert not env_dir.exists() and not [p for p in store.glob("*3.7.0*") if not p.name.endswith(".lock")]


def test_a_file_where_the_store_must_be_is_one_line_and_exit_2(tmp_path):
    blocker = tmp_path / "tc"
    blocker.write_text("a file")
    done = cli("diff", "--triton", "3.7.0", "--triton", triton_version(), "--variant", "baseline", "--arch", "gfx942",
               env={"VGPRSCOPE_TOOLCHAIN_DIR": str(blocker)})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and f"the toolchain store {blocker}" in lines[0] and "Traceback" not in done.stderr


def _read_only(tmp_path: Path) -> Path:
    """A directory on a read-only mount (a user and mount namespace of the command's own), or skip."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no unshare: cannot mount a read-only file system here")
    ro = tmp_path / "ro"
    ro.mkdir()
    return ro


def _in_read_only(ro: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    import shlex

    script = (f"mount -t tmpfs -o ro none {shlex.quote(str(ro))} && exec "
              + shlex.join([sys.executable, "-m", "vgprscope", *args]))
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)


def test_a_read_only_store_is_one_line_and_says_read_only(tmp_path):
    ro = _read_only(tmp_path)
    done = _in_read_only(ro, "diff", "--triton", "3.7.0", "--triton", triton_version(), "--variant", "baseline",
                         "--arch", "gfx942", env={"VGPRSCOPE_TOOLCHAIN_DIR": str(ro / "tc")})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "read-only file system" in lines[0] and "permission" not in lines[0], done.stderr


def test_an_environment_compiles_though_the_store_cannot_keep_its_memo(tmp_path):
    """The memo of an environment's Triton version is an optimisation: a store that cannot be written costs
    a probe next time, never the run."""
    import importlib.util

    origin = importlib.util.find_spec("triton").origin  # .../ENV/lib/pythonX.Y/site-packages/triton/__init__.py
    env_dir = Path(origin).parents[4]
    if not toolchains._python_of(env_dir).exists():
        pytest.skip("Triton is not installed in a virtual environment here")
    blocker = tmp_path / "tc"
    blocker.write_text("a file")
    done = cli("analyze", "--triton", str(env_dir), "--variant", "baseline", "--arch",
               "gfx942", *SMALL, "--jobs", "1", "-f", "json",
               env={"VGPRSCOPE_TOOLCHAIN_DIR": str(blocker), "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert {r["status"] for r in json.loads(done.stdout)["rows"]} == {"ok"}


def test_an_output_on_a_read_only_mount_says_read_only_not_permission(tmp_path):
    ro = _read_only(tmp_path)
    done = _in_read_only(ro, "analyze", "--variant", "baseline", "--arch", "gfx942", "-o", str(ro / "x.json"), env={})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "read-only file system" in lines[0] and "permission" not in lines[0], done.stderr


# an install that stops in its installer (pip downloading): the scratch environment exists, then the signal
HANGING_INSTALL = """
import sys, time
from pathlib import Path
from vgprscope.compile import toolchains

def installer(cmd, version):
    scratch = Path(cmd[-1]) if "venv" in cmd else None
    if scratch is not None:
        scratch.mkdir(parents=True)
        (scratch / "wheel").write_bytes(b"x" * 2**20)
    print("installing", flush=True)
    time.sleep(120)

toolchains._run = installer
toolchains.release("3.7.0")
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_an_install_killed_by_a_signal_leaves_scratch_that_toolchains_lists_and_removes(tmp_path, signum):
    store = tmp_path / "tc"
    env = {**os.environ, "VGPRSCOPE_TOOLCHAIN_DIR": str(store), "PATH": os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "uv").exists())}
    proc = subprocess.Popen([sys.executable, "-c", HANGING_INSTALL], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "installing"
        os.kill(proc.pid, signum)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    (left,) = store.glob(".triton-3.7.0-*.partial-*")
    listed = cli("toolchains", env=env)
    assert f"{left}  (left by an interrupted install)" in listed.stdout, listed.stdout + listed.stderr
    removed = cli("toolchains", "remove", "3.7.0", env=env)
    assert removed.returncode == 0 and not left.exists(), removed.stderr


def test_an_install_says_its_size_and_that_it_is_still_going(tmp_path, monkeypatch):
    """pip (and uv, where it is on PATH) is silent for minutes: the install says up front what it takes (700 MB to
    1 GB, not 250 MB), then every TICK_S seconds how long it has run and how much it has installed, and its size at
    the end."""
    import time

    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "tc"))
    monkeypatch.setattr(toolchains, "TICK_S", 0.05)
    monkeypatch.setattr(toolchains, "probe", lambda python: "3.7.0")

    def slow(cmd, version):
        # the environment being made (venv's and uv venv's argument), or its interpreter (pip's, uv pip's)
        named = next(Path(c) for c in cmd if ".partial-" in str(c))
        scratch = named.parent.parent if named.parent.name == "bin" else named
        (scratch / "lib").mkdir(parents=True, exist_ok=True)
        (scratch / "lib" / f"part{len(list((scratch / 'lib').iterdir()))}").write_bytes(b"x" * 3_000_000)
        (scratch / "bin").mkdir(exist_ok=True)  # the environment's interpreter, as venv makes it
        if not (scratch / "bin" / "python").exists():
            (scratch / "bin" / "python").symlink_to(sys.executable)
        time.sleep(0.3)

    monkeypatch.setattr(toolchains, "_run", slow)
    said: list[str] = []
    toolchains.release("3.7.0", said.append)
    assert "700 MB to 1 GB" in said[0]
    ticks = [s for s in said if s.startswith("installing Triton 3.7.0: ")]
    assert ticks and all(s.endswith("MB so far") for s in ticks) and any(" 3 MB" in s or " 6 MB" in s for s in ticks)
    assert said[-1].startswith("installed Triton 3.7.0 in ") and said[-1].endswith("(6 MB)")


# ---- issue 35 item 11: a release the index lacks, the store's odd entries, one store per user ----

def test_an_unknown_release_is_refused_before_any_install_and_leaves_no_lock(tmp_path, monkeypatch):
    """3.7.99 / 9.9.9: the package index's own list says no before a venv, pip or a lock file (it took 42 s
    of venv and pip, and left a 0-byte lock)."""
    store = tmp_path / "tc"
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(store))
    monkeypatch.setattr(toolchains, "offered_releases", lambda: ["3.9.0", "3.8.0", "3.7.1"])

    def never(*args, **kwargs):
        raise AssertionError("an environment was made for a release the index does not offer")

    monkeypatch.setattr(toolchains, "_create", never)
    for version in ("3.7.99", "9.9.9"):
        with pytest.raises(toolchains.ToolchainError) as err:
            toolchains.release(version)
        assert str(err.value).startswith(f"cannot install Triton {version}: not a release with a wheel for Python")
        assert "allowed: 3.7.1, 3.8.0, 3.9.0" in str(err.value)
    assert not store.exists()


def test_the_offered_releases_are_read_from_pip(monkeypatch):
    """`pip index versions triton` (the index pip is configured with, for this Python and platform); where pip
    cannot tell (no network, no pip), nothing is refused ahead: the install says why itself."""
    said = "triton (3.9.0)\nAvailable versions: 3.9.0, 3.8.0, 3.7.1, 2.0.0\n"
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, said, ""))
    assert toolchains.offered_releases() == ["3.9.0", "3.8.0", "3.7.1", "2.0.0"]
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, "", "ERROR: offline"))
    assert toolchains.offered_releases() is None
    toolchains.check_offered("3.7.99")  # not known to be missing: not refused here


@pytest.mark.parametrize("kind", ["file", "dangling link"])
def test_a_file_or_a_link_where_a_toolchain_should_be_is_listed_refused_and_removable(tmp_path, kind):
    store = tmp_path / "tc"
    store.mkdir()
    where = store / toolchains._env_name("3.7.0")
    if kind == "file":
        where.write_text("not a toolchain")
    else:
        where.symlink_to(tmp_path / "nowhere")
    env = {"VGPRSCOPE_TOOLCHAIN_DIR": str(store)}
    listed = cli("toolchains", env=env)
    assert listed.returncode == 0 and f"{where}  (broken: " in listed.stdout, listed.stdout + listed.stderr
    done = cli("analyze", "--triton", "3.7.0", "--variant", "baseline", "--arch", "gfx942", *SMALL, env=env)
    assert done.returncode == 2 and "is broken" in done.stderr and "toolchains remove 3.7.0" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    removed = cli("toolchains", "remove", "3.7.0", env=env)
    assert removed.returncode == 0, removed.stderr
    assert not where.is_symlink() and not where.exists() and list(store.iterdir()) == []  # no lock file either


def test_one_store_per_user_whatever_the_compile_cache(tmp_path, monkeypatch):
    """Toolchains are not in the compile cache: another VGPRSCOPE_CACHE_DIR finds the releases installed."""
    monkeypatch.delenv("VGPRSCOPE_TOOLCHAIN_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    stores = set()
    for cache in ("a", "b"):
        monkeypatch.setenv("VGPRSCOPE_CACHE_DIR", str(tmp_path / cache))
        stores.add(toolchains.store())
    assert stores == {tmp_path / "xdg" / "vgprscope-toolchains"}


def test_the_lock_is_removed_by_its_last_holder_and_still_excludes(tmp_path):
    import threading
    import time

    lock = tmp_path / ".x.lock"
    inside: list[int] = []
    overlap = []

    def hold(n: int) -> None:
        with toolchains._locked(lock):
            inside.append(n)
            if len(inside) > 1:
                overlap.append(n)
            time.sleep(0.05)
            inside.remove(n)

    threads = [threading.Thread(target=hold, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlap == [] and not lock.exists()
