"""One bench run: for each case, each variant and anchor: gate, then time, then join with resources.

A variant that fails the gate on this run gets no time (its row says why); one that cannot run
(config rejected, out of memory, over the case's time budget) is a row with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..core.records import Record
from ..flashattn.config import AttentionConfig
from .cases import Case
from .device import Gpu
from .timing import Timing

# The bandwidth the time budget assumes: an H100's device-to-device copy measured here (~3.0 TB/s). The
# traffic model counts every byte with no cache, so the estimate errs long where L2 absorbs re-reads; on a
# slower GPU a launch takes longer than estimated.
BUDGET_BANDWIDTH = 3.0e12
# Bytes copied to measure the GPU's copy bandwidth: several times any L2 (50-60 MB on an H100 / H200,
# 256 MB of Infinity Cache on an MI300X), so the copy runs from DRAM.
COPY_BYTES = 1 << 30


@dataclass(frozen=True)
class BenchRow:
    case: Case
    name: str  # variant or anchor
    kind: str  # "variant" or "anchor"
    status: str  # "ok", or why there is no time
    config: str = ""
    timing: Timing | None = None
    tflops: float | None = None
    gbps: float | None = None  # the traffic model's bytes (L2 hits counted as DRAM bytes) / time; variants only
    gbps_min: float | None = None  # Q, K, V, O each moved once (the least any kernel moves) / time
    copy_gbps: float | None = None  # this GPU's device-to-device copy bandwidth, measured in the same run
    max_abs_err: float | None = None
    check: str = ""  # the gate's one-line verdict
    regs: str = ""  # the resource row of the same config on this GPU's arch
    occupancy: str = ""
    spills: str = ""
    n_regs_loaded: int | None = None  # what the driver reports for the launched kernel(s)
    n_regs_parsed: int | None = None  # what vgprscope parsed from its own compile
    extras: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict[str, Any]:
        d = {"case": self.case.label(), **asdict(self.case)}
        d |= {k: v for k, v in asdict(self).items() if k not in ("case", "timing", "extras")}
        t = self.timing
        d |= {"timing_mode": t.mode if t else None, "median_ms": t.median_ms if t else None, "q1_ms": t.q1_ms if t else None,
              "q3_ms": t.q3_ms if t else None, "min_ms": t.min_ms if t else None,
              "max_ms": t.max_ms if t else None, "runs": t.runs if t else None}
        d |= dict(self.extras)
        return d


@dataclass(frozen=True)
class BenchOptions:
    variants: tuple[str, ...]
    request: Any  # variants.ConfigRequest without shape / head_dim / causal / dtype: set per case
    anchors: bool = True
    warmup_ms: float = 25.0
    rep_ms: float = 200.0
    time_budget_s: float = 10.0  # a variant whose modelled DRAM time exceeds this is not launched
    autotune: bool = False
    seed: int = 0
    cuda_graph: bool = False  # time CUDA graph replays (timing.time_graph_replay), not eager calls


def _inputs(case: Case, n_sets: int, seed: int):
    import torch

    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    g = torch.Generator(device="cuda").manual_seed(seed)
    b, h, nq, nk, d = case.batch, case.heads, case.seqlen_q, case.seqlen_k, case.head_dim
    return [tuple(torch.randn(shape, device="cuda", dtype=dt, generator=g)
                  for shape in ((b, h, nq, d), (b, case.kv, nk, d), (b, case.kv, nk, d))) for _ in range(n_sets)]


def copy_bandwidth_gbps() -> float:
    """This GPU's device-to-device copy rate in GB/s, bytes read plus written (METHOD.md's ceiling): the
    figure above which a bench row's bytes cannot all have come from DRAM."""
    import torch
    from triton.testing import do_bench

    n = COPY_BYTES // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=100, return_mode="median")  # noqa: F821 (del'd after)
    del src, dst
    torch.cuda.empty_cache()
    return 2 * COPY_BYTES / (ms / 1e3) / 1e9


def _n_sets(case: Case, gpu: Gpu) -> int:
    """Enough input sets that each timed run reads from DRAM, not from L2 (rotated), at most 8."""
    per_set = max(case.input_bytes(), 1)
    return max(1, min(8, math.ceil(3 * max(gpu.l2_bytes, 1) / per_set)))


def _loaded_regs(variant, cfg: AttentionConfig) -> int | None:
    """Registers of the kernels the last launch loaded (max over a multi-kernel variant), from the driver."""
    regs = []
    for spec in variant.module().kernel_specs(cfg.as_dict()):
        caches = getattr(spec["fn"], "device_caches", {})
        for entry in caches.values():
            for kernel in entry[0].values():
                kernel = kernel.result() if hasattr(kernel, "result") else kernel
                n = getattr(kernel, "n_regs", None)
                if n is not None:
                    regs.append(int(n))
    return max(regs) if regs else None


def _clear_jit_caches(variant, cfg: AttentionConfig) -> None:
    for spec in variant.module().kernel_specs(cfg.as_dict()):
        caches = getattr(spec["fn"], "device_caches", None)
        if caches is not None:
            for entry in caches.values():
                entry[0].clear()


def _resource_summary(records: Sequence[Record]) -> tuple[str, str, str, int | None]:
    from ..backends import backend_of_usage
    from ..report.rows import fmt_regs, fmt_spills, occupancy_label

    if not records:
        return "", "", "", None
    regs = " / ".join(fmt_regs(r) for r in records)
    occ = " / ".join(occupancy_label(r) for r in records)
    spills = " / ".join(fmt_spills(r) for r in records)
    parsed = [backend_of_usage(r.usage).figures(r.usage).registers for r in records if r.usage is not None]
    return regs, occ, spills, (max(parsed) if parsed else None)


def bench_variant(gpu: Gpu, case: Case, variant, cfg: AttentionConfig, sets, opts: BenchOptions,
                  resources: Sequence[Record]) -> BenchRow:
    from ..flashattn.traffic import traffic

    row = BenchRow(case=case, name=variant.name, kind="variant", status="ok", config=cfg.short())
    reason = variant.check(cfg)
    if reason:
        return replace(row, status=f"config rejected: {reason}")
    t = traffic(variant, cfg, gpu.sm_count)
    modelled_s = (t.bytes_read + t.bytes_written) / BUDGET_BANDWIDTH
    if modelled_s > opts.time_budget_s:
        return replace(row, status=f"not run: the traffic model puts one launch at "
                                   f"{(t.bytes_read + t.bytes_written) / 1e9:.4g} GB (~{modelled_s:.3g} s at {BUDGET_BANDWIDTH / 1e12:g} TB/s), "
                                   f"over the {opts.time_budget_s:g} s budget (--budget-s)")
    # bound once: the timed calls go straight to the variant's launcher, without per-call validation
    launch, cfg_dict, scale = variant.module().launch, cfg.launch_dict(), 1.0 / math.sqrt(case.head_dim)

    def run(q, k, v):
        return launch(q, k, v, case.causal, scale, cfg_dict)

    def resources_of_this_launch(r: BenchRow) -> BenchRow:
        regs, occ, spills, parsed = _resource_summary(resources)
        return replace(r, regs=regs, occupancy=occ, spills=spills, n_regs_loaded=_loaded_regs(variant, cfg),
                       n_regs_parsed=parsed)

    _clear_jit_caches(variant, cfg)
    row = _gate_then_time(row, run, sets, case, variant.name, opts, "launch failed", resources_of_this_launch)
    if row.timing is None:
        return row
    return replace(row, gbps=(t.bytes_read + t.bytes_written) / (row.timing.median_ms / 1e3) / 1e9)


def with_bandwidth(row: BenchRow, copy_gbps: float | None) -> BenchRow:
    """The row with GB/s over the least bytes (Q, K, V, O once) and the run's copy bandwidth beside it."""
    if row.timing is None:
        return replace(row, copy_gbps=copy_gbps)
    return replace(row, gbps_min=row.case.input_bytes() / (row.timing.median_ms / 1e3) / 1e9, copy_gbps=copy_gbps)


def bench_anchor(case: Case, anchor, sets, opts: BenchOptions) -> BenchRow:
    from .anchors import sdpa_runner

    row = BenchRow(case=case, name=anchor.name, kind="anchor", status="ok", config="torch SDPA")
    try:
        run = sdpa_runner(anchor, case.causal, case.seqlen_q, case.seqlen_k, gqa=case.kv != case.heads)
    except Exception as exc:  # torch lacks the backend
        from ..runtime.protocol import one_line

        return replace(row, status=f"not available: {one_line(exc)}")
    # the anchors are held to the baseline's tolerance: the same function, the same bar
    return _gate_then_time(row, run, sets, case, "baseline", opts, "not available")


def _gate_then_time(row: BenchRow, run: Callable, sets, case: Case, gate_as: str, opts: BenchOptions,
                    failure: str, annotate: Callable[[BenchRow], BenchRow] | None = None) -> BenchRow:
    """First launch on fresh inputs -> the float64 gate -> only if it passed, the timing. A launch that
    fails, or does not fit, is the row's status; the run goes on."""
    import torch

    from ..runtime.protocol import one_line
    from .correctness import check_sampled
    from .timing import time_graph_replay, time_rotating

    try:
        q, k, v = sets[0]
        out = run(q, k, v)
        torch.cuda.synchronize()
        if annotate is not None:
            row = annotate(row)
        check = check_sampled(out, q, k, v, case.causal, gate_as, case.dtype, seed=opts.seed)
        del out
        row = replace(row, max_abs_err=check.max_abs_err, check=check.message)
        if not check.ok:
            return replace(row, status=f"failed the correctness gate: {check.message}")
        timer = time_graph_replay if opts.cuda_graph else time_rotating
        timing = timer(lambda i: run(*sets[i]), len(sets), opts.warmup_ms, opts.rep_ms)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        return replace(row, status="does not fit in device memory")
    except Exception as exc:  # a refused or failed launch is a row
        return replace(row, status=f"{failure}: {one_line(exc)}")
    return replace(row, timing=timing, tflops=case.flops / (timing.median_ms / 1e3) / 1e12)


# The autotune grid (issue 5: BLOCK_M, BLOCK_N, num_warps, num_stages, waves_per_eu on AMD), per vendor.
AUTOTUNE_GRID = {
    "nvidia": {"block_m": (64, 128), "block_n": (64, 128), "num_warps": (4, 8), "num_stages": (2, 3)},
    "amd": {"block_m": (64, 128), "block_n": (32, 64), "num_warps": (4, 8), "waves_per_eu": (0, 2)},
}
# Decode cases (Nq <= tuning.DECODE_MAX_NQ) tune over small query tiles instead (issue 13).
AUTOTUNE_DECODE_GRID = {
    "nvidia": {"block_m": (16, 32, 64), "block_n": (64, 128), "num_warps": (4, 8), "num_stages": (2, 3, 4)},
    "amd": {"block_m": (16, 32, 64), "block_n": (32, 64), "num_warps": (4, 8), "waves_per_eu": (0, 2)},
}


def autotune_candidates(variant, gpu: Gpu, base: AttentionConfig) -> list[AttentionConfig]:
    from itertools import product

    from ..flashattn.tuning import DECODE_MAX_NQ

    decode = base.shape[2] <= DECODE_MAX_NQ
    grid = (AUTOTUNE_DECODE_GRID if decode else AUTOTUNE_GRID)[gpu.vendor]
    out = []
    for values in product(*grid.values()):
        cfg = replace(base, **dict(zip(grid, values)))
        if variant.check(cfg) is None:
            out.append(cfg)
    return list(dict.fromkeys(out)) or [base]


def autotune_variant(gpu: Gpu, case: Case, variant, base: AttentionConfig, sets, opts: BenchOptions,
                     resources_for: Callable[[AttentionConfig], Sequence[Record]]) -> BenchRow:
    """Time every candidate briefly, keep the fastest that passes the gate, then time it properly."""
    quick = replace(opts, rep_ms=max(opts.rep_ms / 4, 25.0))
    tried = [bench_variant(gpu, case, variant, cfg, sets, quick, resources_for(cfg))
             for cfg in autotune_candidates(variant, gpu, base)]
    good = [(r.timing.median_ms, i) for i, r in enumerate(tried) if r.ok and r.timing]
    if not good:
        return replace(tried[0], status=f"autotune: none of {len(tried)} configs passed; first: {tried[0].status}")
    cands = autotune_candidates(variant, gpu, base)
    best = cands[min(good)[1]]
    row = bench_variant(gpu, case, variant, best, sets, opts, resources_for(best))
    return replace(row, extras=row.extras + (("autotuned_over", len(tried)), ("autotune_passing", len(good))))


def run_bench(gpu: Gpu, cases: Sequence[Case], opts: BenchOptions,
              on_progress: Callable[[int, int, str], None] | None = None,
              rows: list[BenchRow] | None = None) -> list[BenchRow]:
    """Rows of every case; ``rows``, if given, is filled as measurements finish (an interrupted run keeps
    what it measured)."""
    import torch

    from ..compile.engine import Engine
    from ..flashattn.source import variant_tasks
    from ..flashattn.variants import resolve_config, select_variants
    from .anchors import ANCHORS

    variants = select_variants(list(opts.variants))
    # every (variant, case) config, compiled GPU-free for this GPU's arch in one parallel sweep
    configs = {}
    for case in cases:
        req = replace(opts.request, head_dim=case.head_dim, causal=case.causal, dtype=case.dtype, shape=case.shape)
        for v in variants:
            configs[(case, v.name)] = resolve_config(v, gpu.arch, req)
    items = [(v, configs[(c, v.name)], gpu.arch, "") for c in cases for v in variants]
    if opts.autotune:
        items += [(v, cfg, gpu.arch, "") for c in cases for v in variants
                  for cfg in autotune_candidates(v, gpu, configs[(c, v.name)])]
    engine = Engine()
    resources: dict[tuple[str, str], list[Record]] = {}
    for r in engine.compile(variant_tasks(items, engine)):
        resources.setdefault((r.variant, r.config.key()), []).append(r)

    def resources_for(variant, cfg: AttentionConfig) -> list[Record]:
        return resources.get((variant.name, cfg.key()), [])

    total = len(cases) * (len(variants) + (len(ANCHORS) if opts.anchors else 0))
    copy_gbps = copy_bandwidth_gbps()
    done = 0
    rows = [] if rows is None else rows
    for case in cases:
        try:
            sets = _inputs(case, _n_sets(case, gpu), opts.seed)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            rows += [BenchRow(case=case, name=v.name, kind="variant", status="does not fit in device memory")
                     for v in variants]
            done += len(variants) + (len(ANCHORS) if opts.anchors else 0)
            continue
        for v in variants:
            cfg = configs[(case, v.name)]
            if opts.autotune:
                row = autotune_variant(gpu, case, v, cfg, sets, opts, lambda c, v=v: resources_for(v, c))
            else:
                row = bench_variant(gpu, case, v, cfg, sets, opts, resources_for(v, cfg))
            rows.append(with_bandwidth(row, copy_gbps))
            done += 1
            if on_progress:
                on_progress(done, total, f"{case.label()} {v.name}")
        if opts.anchors:
            for a in ANCHORS:
                rows.append(with_bandwidth(bench_anchor(case, a, sets, opts), copy_gbps))
                done += 1
                if on_progress:
                    on_progress(done, total, f"{case.label()} {a.name}")
        del sets
        torch.cuda.empty_cache()
    return rows
