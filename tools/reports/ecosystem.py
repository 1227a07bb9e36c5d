"""The ecosystem's Triton kernels on a GPU, as users run them, against what vgprscope computes without one:
the workloads (five libraries from PyPI, two torch.compile'd models) and the GPU machine's run of them.

Each workload runs once under ``vgprscope capture`` through Triton's JIT on the GPU, with a Triton cache (and,
for a model, an Inductor cache directory) of its own: the JIT's cubins are what the library compiled for its
users, the capture is what vgprscope records of the same launches. The capture is then analysed GPU-free for
sm_90 (the GPU's own arch: equal to the cubins, kernel by kernel) and for gfx942 and gfx950 (every refusal
with its reason). What comes back (one archive per workload, written as soon as the workload is done, so a
run stopped at its time limit still returns the finished ones) is read on a CPU by ``ecosystem_collect``;
``ecosystem_report`` writes reports/ecosystem-<gpu>.md.

    python -m tools.reports ecosystem-run --work /tmp/eco --out OUTDIR [--deadline 420] [--only NAME]   # GPU
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

AMD_ARCHS = ("gfx942", "gfx950")
NVIDIA_ARCH = "sm_90"
# What a workload's archive keeps of the caches: the artifacts, their metadata, the IR scan retargets, and the
# generated modules; the other intermediates (PTX, LLVM IR, TTGIR) are left out to keep the archive small.
CACHE_DROPPED = (".ptx", ".llir", ".ttgir", ".amdgcn", ".hsaco")
ARCHIVE_LIMIT = 15 * 2**20  # the device machine returns files of at most 16 MiB


@dataclass(frozen=True)
class Workload:
    """One library or model: how its users run it (a module of tools/reports/workloads and its arguments)."""

    name: str
    package: str  # the PyPI distribution and version, or "torch.compile"
    module: str
    args: tuple[str, ...] = ()
    inductor: bool = False  # a torch.compile'd model: its Triton cache lives in its Inductor cache directory
    own_home: bool = False  # the library writes caches under $HOME (FlagGems: generated modules, tuning database)
    what: str = ""
    cpu_args: tuple[str, ...] | None = None  # the arguments of a check of the run itself on a CPU (None: GPU only)


WORKLOADS: tuple[Workload, ...] = (
    Workload("liger-kernel", "liger-kernel 0.8.5", "tools.reports.workloads.liger_ops", ("--real",), cpu_args=(),
             what="8 ops (RMSNorm, LayerNorm, SwiGLU, GeGLU, softmax, cross entropy, DyT), forward and backward, "
                  "4096 x 4096 bf16, vocabulary 32000"),
    Workload("flag-gems", "flag-gems 5.0.2", "tools.reports.workloads.flag_gems_ops", own_home=True,
             what="12 groups of PyTorch ops under flag_gems.use_gems() (mm, addmm, bmm, softmax, cross entropy, "
                  "layer_norm, rms_norm, reductions, cumsum, gelu, silu/mul, add/exp), forward and backward, "
                  "bf16, each matmul autotuned by its LibTuner"),
    Workload("fla-core", "fla-core 0.6.0", "tools.reports.workloads.fla_ops", cpu_args=("--small",),
             what="chunk_gla and chunk_gated_delta_rule, forward and backward, bf16, B2 T512 H4 D64"),
    Workload("gemlite", "gemlite 0.6.0.post2", "tools.reports.workloads.gemlite_ops",
             what="A16W4 (GemLiteLinear) and A16W8 int8 layers 4096 x 4096, forward at batch 1, 16, 256, 2048 "
                  "(inference library: no backward)"),
    Workload("torchao", "torchao 0.18.0", "tools.reports.workloads.torchao_ops",
             what="fp8 blockwise training (Float8BlockwiseLinear, use_triton) and int8 mixed-precision "
                  "training (quantize_), forward and backward, 4096 x 4096 bf16"),
    Workload("llama-decoder", "torch.compile", "tools.reports.workloads.llama_decoder", inductor=True,
             cpu_args=("--small",),
             what="2 decoder layers (RMSNorm, rotary, grouped-query SDPA 8/2 heads, SwiGLU), forward and "
                  "backward, bf16, B2 T512 D1024, Inductor's default mode"),
    Workload("mlp-max-autotune", "torch.compile", "tools.reports.workloads.mlp_autotune", inductor=True,
             cpu_args=("--small",),
             what="Linear-GELU-Linear 4096 x 1024 -> 4096 -> 1024, forward and backward, bf16, "
                  "mode=max-autotune-no-cudagraphs"),
)


def workload(name: str) -> Workload:
    for w in WORKLOADS:
        if w.name == name:
            return w
    raise KeyError(name)


# ------------------------------------------------------------------------------------------------ the GPU run


class _Run:
    """The run's processes (each in a session of its own, so a deadline ends its whole tree) and its clock."""

    def __init__(self, deadline_s: float) -> None:
        self.start = time.monotonic()
        self.deadline = self.start + deadline_s
        self.procs: set[subprocess.Popen] = set()
        self.lock = threading.Lock()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def step(self, cmd: Sequence[str], log: Path, env: dict[str, str], cwd: Path) -> dict:
        """Run one step, its output in ``log``; its exit code and seconds, or that the deadline ended it."""
        t0 = time.monotonic()
        if self.left() <= 5:
            return {"cmd": " ".join(cmd), "rc": None, "seconds": 0.0, "skipped": "no time left in the run"}
        with open(log, "w") as out:
            proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                    start_new_session=True)
            with self.lock:
                self.procs.add(proc)
            try:
                rc = proc.wait(timeout=max(1.0, self.left()))
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill(proc)
                rc, timed_out = proc.wait(), True
            finally:
                with self.lock:
                    self.procs.discard(proc)
        return {"cmd": " ".join(cmd), "rc": rc, "seconds": round(time.monotonic() - t0, 1),
                **({"timed_out": True} if timed_out else {})}

    def stop_all(self) -> None:
        with self.lock:
            for proc in list(self.procs):
                _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _environment(w: Workload, wdir: Path, repo: Path, interpret: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    env |= {"PYTHONUNBUFFERED": "1", "TRITON_INTERPRET": "1" if interpret else "0",
            "VGPRSCOPE_CACHE_DIR": str(wdir / "vgprscope-cache")}
    if w.own_home:
        env["HOME"] = str(wdir / "home")
    if w.inductor:
        # Triton's cache inside Inductor's directory, where torch puts it for its users
        env.pop("TRITON_CACHE_DIR", None)
        env["TORCHINDUCTOR_CACHE_DIR"] = str(wdir / "inductor")
    else:
        env["TRITON_CACHE_DIR"] = str(wdir / "jit")
    return env


def run_workload(w: Workload, work: Path, out: Path, run: _Run, repo: Path, jobs: int,
                 interpret: bool = False, analyze_only: bool = False) -> dict:
    """Capture the workload through the JIT, analyse the capture for sm_90, then gfx942 and gfx950 (in the
    order of what matters most, so a deadline leaves the most useful part done), and archive it all. A model
    runs once more without vgprscope, Inductor's caches on: its cache directory as torch leaves it for users.
    ``interpret``: a check of the run itself on a CPU (Triton's interpreter, the workload's CPU sizes).
    ``analyze_only``: the analyses again, of the capture an earlier run left in the workload's directory (its
    library's generated modules there too), archived alone."""
    wdir = work / w.name
    if not analyze_only:
        shutil.rmtree(wdir, ignore_errors=True)
    (wdir / "home").mkdir(parents=True, exist_ok=True)
    env = _environment(w, wdir, repo, interpret)
    py = sys.executable
    args = (w.cpu_args or ()) if interpret else w.args
    status: dict = {"workload": w.name, "package": w.package, "steps": {}}
    steps = status["steps"]
    if not analyze_only:
        steps["capture"] = run.step([py, "-m", "vgprscope", "capture", "-o", str(wdir / "capture.json"), "--", py,
                                     "-m", w.module, *args], wdir / "capture.log", env, repo)
    if (wdir / "capture.json").is_file():
        # vgprscope's own compiles go to a Triton cache of their own, never among the JIT's cubins
        analyse = env | {"TRITON_CACHE_DIR": str(wdir / "vgprscope-triton"), "TRITON_INTERPRET": "0"}
        for arch in (NVIDIA_ARCH, *AMD_ARCHS):
            steps[f"analyze-{arch}"] = run.step(
                [py, "-m", "vgprscope", "analyze", "--capture", str(wdir / "capture.json"), "--arch", arch,
                 "--format", "json", "-o", str(wdir / f"analyze-{arch}.json"), "--jobs", str(jobs)],
                wdir / f"analyze-{arch}.log", analyse, repo)
    if w.inductor and not analyze_only:
        plain = env | {"TORCHINDUCTOR_CACHE_DIR": str(wdir / "inductor-plain")}
        plain.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)
        steps["plain"] = run.step([py, "-m", w.module, *args], wdir / "plain.log", plain, repo)
    status["seconds"] = round(time.monotonic() - run.start, 1)
    if analyze_only:
        (wdir / "status-analyze.json").write_text(json.dumps(status, indent=1))
        path = out / f"{w.name}-analyze.tar.xz"
        with tarfile.open(path, "w:xz") as tar:
            for f in sorted(wdir.glob("*analyze*")):
                tar.add(f, arcname=f"{w.name}/{f.name}")
        status["archive"] = f"{path.name} ({path.stat().st_size} B)"
        return status
    (wdir / "status.json").write_text(json.dumps(status, indent=1))
    status["archive"] = archive(wdir, out / f"{w.name}.tar.xz")
    return status


def _keep(info: tarfile.TarInfo, light: bool) -> tarfile.TarInfo | None:
    name = info.name
    parts = name.split("/")
    if any(p in ("vgprscope-cache", "vgprscope-triton") for p in parts) or name.endswith(CACHE_DROPPED):
        return None
    if light and info.isfile() and not name.endswith((".json", ".cubin", ".log", ".py")):
        return None
    return info


def archive(wdir: Path, path: Path) -> str:
    """``wdir`` as one xz archive (the vgprscope caches and the bulky intermediates left out; where that is
    still over the size the machine returns, only the artifacts, metadata, modules and logs)."""
    for light in (False, True):
        tmp = path.with_suffix(".part")
        keep = functools.partial(_keep, light=light)
        with tarfile.open(tmp, "w:xz", preset=6) as tar:
            tar.add(wdir, arcname=wdir.name, filter=keep)
        if tmp.stat().st_size <= ARCHIVE_LIMIT or light:
            tmp.replace(path)
            return f"{path.name} ({path.stat().st_size} B{', light' if light else ''})"
    return "not written"


def run_all(work: Path, out: Path, *, deadline_s: float, only: Sequence[str] = (), jobs: int = 8,
            interpret: bool = False, analyze_only: bool = False) -> dict:
    """Every workload at once (each is mostly one process compiling on one core), under one deadline;
    ``out/summary.json`` rewritten as each finishes."""
    repo = Path(__file__).resolve().parents[2]
    chosen = [w for w in WORKLOADS if (not only or w.name in only) and (not interpret or w.cpu_args is not None)]
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    run = _Run(deadline_s)
    summary: dict = {"machine": _machine(), "workloads": {}}
    lock = threading.Lock()

    def one(w: Workload) -> None:
        try:
            status = run_workload(w, work, out, run, repo, jobs, interpret, analyze_only)
        except Exception as exc:  # one workload's failure is its row, never the end of the run
            status = {"workload": w.name, "error": f"{type(exc).__name__}: {exc}"}
        with lock:
            summary["workloads"][w.name] = status
            _write_json(out / ("summary-analyze.json" if analyze_only else "summary.json"), summary)
        print(f"[{time.monotonic() - run.start:6.1f}s] {w.name}: {json.dumps(status)[:400]}", flush=True)

    threads = [threading.Thread(target=one, args=(w,)) for w in chosen]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, run.left() + 60))
    run.stop_all()
    _write_json(out / ("summary-analyze.json" if analyze_only else "summary.json"), summary)
    return summary


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def _machine() -> dict:
    info: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        info["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        info["gpu"] = "no nvidia-smi"
    for mod in ("torch", "triton"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:
            info[mod] = f"not importable: {exc}"
    return info
