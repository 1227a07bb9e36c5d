#!/usr/bin/env python3
"""Validate vgprscope's NVIDIA occupancy model against the CUDA driver, on a real GPU.

For every bundled variant over a grid of configs (BLOCK_M, BLOCK_N, head_dim, num_warps, num_stages), the
variant is launched once on small random CUDA tensors; every Triton kernel the launch ran is captured
(a wrapper around ``triton.runtime.jit.JITFunction.run``, which returns the ``CompiledKernel`` in Triton
3.6 through 3.9; ``kernel[grid](...)`` and autotuners both go through it), and for each:

* ours: ``vgprscope.core.occupancy.nvidia.nvidia_occupancy(regs=NUM_REGS, shared_bytes=static + metadata.shared,
  threads=num_warps * 32)``, with the function's preferred carveout when one is set;
* the driver: ``cuOccupancyMaxActiveBlocksPerMultiprocessor(function, threads, metadata.shared)``
  (``cuda.bindings.driver``, else ``cuda.cuda``, else libcuda through ctypes).

Besides the real launch, each kernel is also compared over a sweep of block sizes (32 to the function's
max threads, step 32) and dynamic shared-memory sizes (up to the function's max dynamic size), which
exercises the warps, blocks and shared-memory limits with the kernel's real register count.

Writes ``<out>/occupancy-validation.md`` (machine line, command, counts, every mismatch, every real
launch), ``<out>/occupancy-validation.csv`` (the real launches and every mismatch) and
``<out>/occupancy-validation-sweep.csv.gz`` (every sweep point). Exit status: 0 all equal, 1 mismatches,
2 no GPU / nothing compared / bad arguments.

Run from the repository root on a machine with an NVIDIA GPU (torch with CUDA, Triton >= 3.6):

    PYTHONPATH=. python scripts/validate_occupancy_gpu.py --out reports/

Options: --variants a,b  --max-configs N  --time-budget SECONDS (default 480: stop launching new configs,
report what was compared)  --no-sweep  --git-sha SHA (when the checkout has no .git).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as _dt
import gzip
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# The config grid: (BLOCK_M, BLOCK_N) x (num_warps, num_stages) x head_dim, per variant; a variant's own
# check_config drops what it cannot take. 2 x 5 x 5 = 50 per variant.
HEAD_DIMS = (64, 128)
TILES = ((64, 32), (64, 64), (128, 64), (128, 128), (32, 64))
WARPS_STAGES = ((4, 1), (4, 2), (8, 2), (8, 3), (2, 1))
SHAPE = (1, 2, 256, 256)  # batch, heads, seqlen_q, seqlen_k: small, only the compile and one launch matter
DTYPE = "fp16"
WARP = 32  # threads per warp on every NVIDIA arch vgprscope knows (core/archs.py wave_size)
SWEEP_DYNAMIC = (0, 1024, 8 * 1024, 48 * 1024)  # plus the launch's own and the function's maximum

CSV_FIELDS = ("kind", "variant", "config", "kernel", "threads", "regs", "static_shared", "dynamic_shared",
              "carveout_pct", "ours", "driver", "match", "limiters", "detail")


@dataclass(frozen=True)
class Comparison:
    kind: str  # "launch" (the real launch) or "sweep"
    variant: str
    config: str
    kernel: str
    threads: int
    regs: int
    static_shared: int
    dynamic_shared: int
    carveout_pct: int | None
    ours: int | None
    driver: int | None
    limiters: str = ""
    detail: str = ""

    @property
    def match(self) -> bool:
        return self.ours is not None and self.ours == self.driver


@dataclass
class Run:
    """Everything the report needs."""

    machine: str = ""
    command: str = ""
    comparisons: list[Comparison] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # variant, config, why
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # variant, config, error
    not_run: int = 0  # configs left when the time budget ran out
    configs_tried: int = 0
    seconds: float = 0.0

    @property
    def mismatches(self) -> list[Comparison]:
        return [c for c in self.comparisons if not c.match]


# ------------------------------------------------------------------------------------------ the grid


def config_grid(head_dims: Iterable[int] = HEAD_DIMS) -> list[dict[str, int]]:
    """Every config of the grid in a fixed interleaved order (a stride coprime to its length), so that a
    time budget cuts a spread-out tail rather than whole values of one dimension."""
    grid = [{"block_m": bm, "block_n": bn, "head_dim": d, "num_warps": w, "num_stages": s}
            for (w, s) in WARPS_STAGES for d in head_dims for (bm, bn) in TILES]
    n = len(grid)
    stride = next(k for k in range(7, 7 + n) if math.gcd(k, n) == 1)
    return [grid[i * stride % n] for i in range(n)]


def plan(variant_names: list[str], grid: list[dict[str, int]]) -> list[tuple[str, dict[str, int]]]:
    """(variant, config) pairs, config-major so that every variant is reached early."""
    return [(v, c) for c in grid for v in variant_names]


def config_label(c: dict[str, Any]) -> str:
    return f"{c['block_m']}x{c['block_n']} d{c['head_dim']} w{c['num_warps']} s{c['num_stages']}"


# ------------------------------------------------------------------------------------ the CUDA driver


class DriverError(RuntimeError):
    pass


class CannotValidate(RuntimeError):
    """No comparison is possible here (no NVIDIA GPU, unknown variant): exit 2."""


# CUfunction_attribute values (cuda.h), for the ctypes fallback
_ATTR = {"MAX_THREADS_PER_BLOCK": 0, "SHARED_SIZE_BYTES": 1, "LOCAL_SIZE_BYTES": 3, "NUM_REGS": 4,
         "MAX_DYNAMIC_SHARED_SIZE_BYTES": 8, "PREFERRED_SHARED_MEMORY_CARVEOUT": 9}


class CudaDriver:
    """The three driver calls the validation needs, through whichever binding is installed."""

    def __init__(self) -> None:
        self.binding = ""
        self._drv: Any = None
        self._lib: Any = None
        for name in ("cuda.bindings.driver", "cuda.cuda"):
            try:
                module = __import__(name, fromlist=["_"])
                module.cuDriverGetVersion  # noqa: B018  (the binding is usable)
                self._drv, self.binding = module, name
                return
            except Exception:
                continue
        import ctypes

        self._lib, self.binding = ctypes.CDLL("libcuda.so.1"), "ctypes libcuda.so.1"

    def _check(self, result: Any, what: str) -> Any:
        err, *values = result
        code = getattr(err, "value", err)
        if int(code) != 0:
            raise DriverError(f"{what} failed: {err}")
        return values[0] if len(values) == 1 else values

    def _func(self, handle: int) -> Any:
        return self._drv.CUfunction(int(handle))

    def attribute(self, handle: int, name: str) -> int:
        if self._drv is not None:
            attr = getattr(self._drv.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
            return int(self._check(self._drv.cuFuncGetAttribute(attr, self._func(handle)), f"cuFuncGetAttribute({name})"))
        import ctypes

        out = ctypes.c_int()
        rc = self._lib.cuFuncGetAttribute(ctypes.byref(out), ctypes.c_int(_ATTR[name]), ctypes.c_void_p(int(handle)))
        if rc:
            raise DriverError(f"cuFuncGetAttribute({name}) failed: CUresult {rc}")
        return out.value

    def max_active_blocks(self, handle: int, threads: int, dynamic_shared: int) -> int:
        if self._drv is not None:
            return int(self._check(self._drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                self._func(handle), threads, dynamic_shared), "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        import ctypes

        out = ctypes.c_int()
        rc = self._lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(out), ctypes.c_void_p(int(handle)), ctypes.c_int(threads), ctypes.c_size_t(dynamic_shared))
        if rc:
            raise DriverError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed: CUresult {rc}")
        return out.value

    def version(self) -> str:
        if self._drv is not None:
            v = int(self._check(self._drv.cuDriverGetVersion(), "cuDriverGetVersion"))
        else:
            import ctypes

            out = ctypes.c_int()
            self._lib.cuDriverGetVersion(ctypes.byref(out))
            v = out.value
        return f"{v // 1000}.{v % 1000 // 10}"


# ------------------------------------------------------------------------------ capturing the kernels


@contextlib.contextmanager
def capture_kernels():
    """Collect the CompiledKernel of every Triton JIT launch inside the block (Triton 3.6 - 3.9)."""
    from triton.runtime.jit import JITFunction

    captured: list[tuple[str, Any]] = []
    original = JITFunction.run

    def run(self, *args, **kwargs):
        kernel = original(self, *args, **kwargs)
        if kernel is not None and not kwargs.get("warmup", False):
            captured.append((getattr(getattr(self, "fn", None), "__name__", "kernel"), kernel))
        return kernel

    JITFunction.run = run
    try:
        yield captured
    finally:
        JITFunction.run = original


@dataclass(frozen=True)
class KernelFacts:
    """What the comparison needs from one loaded kernel."""

    name: str
    handle: int
    regs: int
    static_shared: int
    dynamic_shared: int  # Triton's metadata.shared, passed as dynamic shared memory at launch
    num_warps: int
    max_threads: int
    max_dynamic_shared: int
    carveout_pct: int | None  # None: the driver default (-1)
    local_bytes: int


def kernel_facts(name: str, kernel: Any, driver: CudaDriver) -> KernelFacts:
    handle = kernel.function
    if handle is None:  # not loaded yet (Triton loads lazily on the first run)
        kernel._init_handles()
        handle = kernel.function
    carveout = driver.attribute(handle, "PREFERRED_SHARED_MEMORY_CARVEOUT")
    meta = kernel.metadata
    return KernelFacts(
        name=getattr(meta, "name", name), handle=int(handle), regs=driver.attribute(handle, "NUM_REGS"),
        static_shared=driver.attribute(handle, "SHARED_SIZE_BYTES"), dynamic_shared=int(meta.shared),
        num_warps=int(meta.num_warps), max_threads=driver.attribute(handle, "MAX_THREADS_PER_BLOCK"),
        max_dynamic_shared=driver.attribute(handle, "MAX_DYNAMIC_SHARED_SIZE_BYTES"),
        carveout_pct=carveout if carveout >= 0 else None, local_bytes=driver.attribute(handle, "LOCAL_SIZE_BYTES"),
    )


def compare(arch, facts: KernelFacts, driver, variant: str, config: str, kind: str, threads: int,
            dynamic: int, detail: str = "") -> Comparison:
    """One comparison of ours with the driver's for (kernel, threads, dynamic shared memory)."""
    from vgprscope.core.errors import UsageError
    from vgprscope.core.occupancy.nvidia import nvidia_occupancy

    try:
        occ = nvidia_occupancy(arch, facts.regs, facts.static_shared + dynamic, threads,
                               carveout_percent=facts.carveout_pct)
        ours, limiters = occ.value, ",".join(occ.limiters)
    except UsageError as exc:
        ours, limiters, detail = None, "", "; ".join(x for x in (detail, f"ours: {exc}") if x)
    try:
        theirs = driver.max_active_blocks(facts.handle, threads, dynamic)
    except DriverError as exc:
        theirs, detail = None, "; ".join(x for x in (detail, str(exc)) if x)
    return Comparison(kind, variant, config, facts.name, threads, facts.regs, facts.static_shared, dynamic,
                      facts.carveout_pct, ours, theirs, limiters, detail)


def sweep_points(facts: KernelFacts) -> list[tuple[int, int]]:
    """(threads, dynamic shared) pairs within what the function accepts."""
    dyn = sorted({d for d in (*SWEEP_DYNAMIC, facts.dynamic_shared, facts.max_dynamic_shared)
                  if 0 <= d <= facts.max_dynamic_shared})
    return [(t, d) for t in range(WARP, facts.max_threads + 1, WARP) for d in dyn]


def compare_kernel(arch, facts: KernelFacts, driver, variant: str, config: str, sweep: bool) -> list[Comparison]:
    threads = facts.num_warps * WARP
    detail = ""
    if facts.dynamic_shared > facts.max_dynamic_shared:
        detail = (f"the launch's {facts.dynamic_shared} B of dynamic shared memory is over the function's "
                  f"MAX_DYNAMIC_SHARED_SIZE_BYTES ({facts.max_dynamic_shared})")
    rows = [compare(arch, facts, driver, variant, config, "launch", threads, facts.dynamic_shared, detail)]
    if sweep:
        rows += [compare(arch, facts, driver, variant, config, "sweep", t, d) for t, d in sweep_points(facts)]
    return rows


# ------------------------------------------------------------------------------------------- reports


def write_csv(rows: Iterable[Comparison], path: Path) -> None:
    """One row per comparison; a ``.gz`` path is written gzip-compressed."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for c in rows:
            d = asdict(c) | {"match": c.match}
            w.writerow(["" if d[k] is None else d[k] for k in CSV_FIELDS])


def write_reports(run: Run, out: Path) -> list[Path]:
    """The markdown, a CSV of the real launches and of every mismatch, and the whole sweep gzipped."""
    out.mkdir(parents=True, exist_ok=True)
    md, main_csv, sweep_csv = (out / "occupancy-validation.md", out / "occupancy-validation.csv",
                               out / "occupancy-validation-sweep.csv.gz")
    md.write_text(render_markdown(run))
    write_csv([c for c in run.comparisons if c.kind == "launch" or not c.match], main_csv)
    write_csv([c for c in run.comparisons if c.kind == "sweep"], sweep_csv)
    return [md, main_csv, sweep_csv]


def _md_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |" for r in rows]
    return out


def render_markdown(run: Run, max_listed: int = 200) -> str:
    launches = [c for c in run.comparisons if c.kind == "launch"]
    sweeps = [c for c in run.comparisons if c.kind == "sweep"]
    bad = run.mismatches
    lines = [
        f"_{run.machine}_",
        "",
        "# NVIDIA occupancy: vgprscope vs `cuOccupancyMaxActiveBlocksPerMultiprocessor`",
        "",
        f"Command: `{run.command}`",
        "",
        f"- configs tried: {run.configs_tried} (variant x config); skipped by the variant's check_config: "
        f"{len(run.skipped)}; launch failed: {len(run.failed)}; not run (time budget): {run.not_run}",
        f"- real launches compared: {len(launches)} kernels, {sum(not c.match for c in launches)} mismatches",
        f"- sweep points compared (block size x dynamic shared memory): {len(sweeps)}, "
        f"{sum(not c.match for c in sweeps)} mismatches",
        f"- **total: {len(run.comparisons)} comparisons, {len(bad)} mismatches** ({run.seconds:.0f} s)",
        "",
        "Ours: `nvidia_occupancy(regs=CU_FUNC_ATTRIBUTE_NUM_REGS, shared_bytes=SHARED_SIZE_BYTES + "
        "metadata.shared, threads=num_warps*32)`; the driver: the same function, block size and dynamic "
        "shared memory.",
        "",
    ]
    if bad:
        lines += ["## Mismatches", ""]
        lines += _md_table(("kind", "variant", "config", "kernel", "threads", "regs", "static", "dynamic",
                            "carveout %", "ours", "driver", "our limiters", "detail"),
                           [(c.kind, c.variant, c.config, c.kernel, c.threads, c.regs, c.static_shared,
                             c.dynamic_shared, "" if c.carveout_pct is None else c.carveout_pct, c.ours,
                             c.driver, c.limiters, c.detail) for c in bad[:max_listed]])
        if len(bad) > max_listed:
            lines.append(f"\n... and {len(bad) - max_listed} more in the CSV.")
        lines.append("")
    if launches:
        lines += ["## Real launches", ""]
        lines += _md_table(("variant", "config", "kernel", "regs", "static", "dynamic", "threads", "ours",
                            "driver", "limiters"),
                           [(c.variant, c.config, c.kernel, c.regs, c.static_shared, c.dynamic_shared, c.threads,
                             c.ours, c.driver, c.limiters) for c in launches])
        lines.append("")
    if run.failed:
        lines += ["## Launches that failed", ""]
        lines += _md_table(("variant", "config", "error"), run.failed)
        lines.append("")
    if run.skipped:
        reasons: dict[str, int] = {}
        for _, _, why in run.skipped:
            reasons[why] = reasons.get(why, 0) + 1
        lines += ["## Skipped configs (the variant's check_config)", ""]
        lines += _md_table(("reason", "configs"), sorted(reasons.items(), key=lambda kv: -kv[1]))
        lines.append("")
    return "\n".join(lines)


def exit_status(run: Run) -> int:
    if not run.comparisons:
        return 2
    return 1 if run.mismatches else 0


# ------------------------------------------------------------------------------------------ the run


def git_sha(override: str | None) -> str:
    if override:
        return override
    if os.environ.get("VGPRSCOPE_GIT_SHA"):
        return os.environ["VGPRSCOPE_GIT_SHA"]
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except Exception:
        return "unknown (no git checkout; pass --git-sha)"


def machine_line(torch, triton, driver: CudaDriver, sha: str) -> str:
    props = torch.cuda.get_device_properties(0)
    smi = ""
    with contextlib.suppress(Exception):
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    drv = f"driver {smi} (CUDA {driver.version()})" if smi else f"driver CUDA {driver.version()}"
    return (f"GPU: {props.name} (sm_{props.major}{props.minor}, {props.multi_processor_count} SMs), {drv}, "
            f"torch {torch.__version__} (CUDA {torch.version.cuda}), Triton {triton.__version__}, "
            f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC, git {sha}, bindings: {driver.binding}")


def _launch_one(variant, cfg, torch) -> None:
    b, h, nq, nk = cfg.shape
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, h, nq, cfg.head_dim, device="cuda", dtype=torch.float16, generator=gen)
    k = torch.randn(b, h, nk, cfg.head_dim, device="cuda", dtype=torch.float16, generator=gen)
    v = torch.randn_like(k)
    variant.module().launch(q, k, v, cfg.causal, cfg.head_dim ** -0.5, cfg.as_dict())
    torch.cuda.synchronize()


def execute(args, log: Callable[[str], None] = print) -> Run:
    import torch

    if not torch.cuda.is_available():
        raise CannotValidate("no CUDA GPU visible (torch.cuda.is_available() is False)")
    if torch.version.hip is not None:
        raise CannotValidate("this validates the NVIDIA model; the GPU here is AMD (ROCm)")
    os.environ.pop("TRITON_INTERPRET", None)
    import triton

    from vgprscope.core.archs import arch_for_device
    from vgprscope.core.errors import VgprscopeError
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.variants import load_variants, resolve_config

    major, minor = torch.cuda.get_device_capability(0)
    arch = arch_for_device("cuda", major * 10 + minor)
    driver = CudaDriver()
    run = Run(machine=machine_line(torch, triton, driver, git_sha(args.git_sha)),
              command="python scripts/validate_occupancy_gpu.py " + " ".join(args.argv))
    log(run.machine)
    variants = load_variants()
    names = [n.strip() for n in args.variants.split(",")] if args.variants else list(variants)
    unknown = [n for n in names if n not in variants]
    if unknown:
        raise CannotValidate(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(variants)}")
    pairs = plan(names, config_grid())
    if args.max_configs:
        pairs = pairs[: args.max_configs]
    t0 = time.perf_counter()
    for i, (name, c) in enumerate(pairs):
        if time.perf_counter() - t0 > args.time_budget:
            run.not_run = len(pairs) - i
            log(f"time budget of {args.time_budget:.0f} s spent: {run.not_run} configs not run")
            break
        run.configs_tried += 1
        variant = variants[name]
        label = config_label(c)
        req = ConfigRequest(block_m=c["block_m"], block_n=c["block_n"], head_dim=c["head_dim"], dtype=DTYPE,
                            num_warps=c["num_warps"], num_stages=c["num_stages"], shape=SHAPE)
        try:
            cfg = resolve_config(variant, arch, req)
            why = variant.check(cfg)
        except VgprscopeError as exc:
            why = str(exc)
        if why:
            run.skipped.append((name, label, why))
            continue
        try:
            with capture_kernels() as captured:
                _launch_one(variant, cfg, torch)
            seen = set()
            for kname, kernel in captured:
                facts = kernel_facts(kname, kernel, driver)
                if (facts.handle, facts.num_warps) in seen:
                    continue
                seen.add((facts.handle, facts.num_warps))
                rows = compare_kernel(arch, facts, driver, name, label, sweep=not args.no_sweep)
                run.comparisons += rows
                launch = rows[0]
                log(f"[{i + 1}/{len(pairs)}] {name} {label} {facts.name}: regs {facts.regs}, shared "
                    f"{facts.static_shared}+{facts.dynamic_shared}, ours {launch.ours} driver {launch.driver}"
                    f"{'' if launch.match else '  MISMATCH'}; sweep mismatches "
                    f"{sum(not r.match for r in rows[1:])}/{len(rows) - 1}")
            if not captured:
                run.failed.append((name, label, "no Triton kernel was captured"))
        except Exception as exc:  # a config that does not launch is a row in the report, not the end
            msg = " ".join(str(exc).split())[:300]
            run.failed.append((name, label, f"{type(exc).__name__}: {msg}"))
            log(f"[{i + 1}/{len(pairs)}] {name} {label}: launch failed: {type(exc).__name__}: {msg[:120]}")
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
    run.seconds = time.perf_counter() - t0
    return run


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=REPO / "reports", help="directory for the .md and .csv")
    p.add_argument("--variants", default="", help="comma-separated variant names [default: all bundled]")
    p.add_argument("--max-configs", type=int, default=0, help="stop after this many (variant, config) pairs")
    p.add_argument("--time-budget", type=float, default=480.0,
                   help="seconds; no new config is launched after this (default 480)")
    p.add_argument("--no-sweep", action="store_true", help="compare the real launches only")
    p.add_argument("--git-sha", default=None, help="the commit, where the checkout has no .git")
    args = p.parse_args(argv)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        run = execute(args, log=lambda m: print(m, flush=True))
    except CannotValidate as exc:
        print(f"validate_occupancy_gpu: {exc}", file=sys.stderr)
        return 2
    paths = write_reports(run, args.out)
    print(f"{len(run.comparisons)} comparisons, {len(run.mismatches)} mismatches; wrote "
          f"{', '.join(map(str, paths))}", file=sys.stderr)
    return exit_status(run)


if __name__ == "__main__":
    sys.exit(main())
