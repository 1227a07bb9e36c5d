"""On the GPU: ws-regalloc's configs and SDPA's backends interleaved over several rounds in one process, on the
eight prefill cases of issue 28 (fp16 and bf16). Each round times, case by case, every config and every SDPA
backend in turn (`vgprscope bench`'s rows: the float64 gate on fresh inputs, then the median of do_bench with
the L2 flush, `--rep-ms 100`), so a drift of the clock or of one backend's own figure between rounds shows as
spread instead of as one config's gain or loss.

    python3 .ci/ws_rounds.py OUT_PREFIX ROUNDS [NAME=KNOBS[@FILTER] ...]

NAME=KNOBS: a config as in .ci/ws_side_by_side.py (`persistent=2`, `num_stages=2`; empty: the defaults).
FILTER: `+`-joined tokens a case must match: D64, D128 (head dim), c, nc (causal or not), fp16, bf16.
Writes OUT_PREFIX.jsonl (one line per timed row: round, case, name, config, median ms, TFLOP/s, status) after
each round, and OUT_PREFIX.md: per case and config, the median TFLOP/s over the rounds with its min-max, and
the ratio to the best SDPA backend in the same round (median, min-max over the rounds).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ws_side_by_side import request  # noqa: E402


def matches(case, filt: str) -> bool:
    tests = {"D64": case.head_dim == 64, "D128": case.head_dim == 128, "c": case.causal, "nc": not case.causal,
             "fp16": case.dtype == "fp16", "bf16": case.dtype == "bf16"}
    for tok in filter(None, filt.split("+")):
        if tok not in tests:
            raise SystemExit(f"ws_rounds: unknown filter {tok!r}; allowed: {', '.join(tests)}")
        if not tests[tok]:
            return False
    return True


def parse(specs: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for s in specs:
        name, _, rest = s.partition("=")
        knobs, _, filt = rest.partition("@")
        out[name] = (knobs, filt)
    return out


def table(lines: list[dict], names: list[str]) -> str:
    """Median TFLOP/s over the rounds (min-max) and the median per-round ratio to the best SDPA backend."""
    by: dict[tuple[str, str], dict[int, dict]] = {}
    for r in lines:
        by.setdefault((r["case"], r["name"]), {})[r["round"]] = r
    cases = list(dict.fromkeys(r["case"] for r in lines))
    anchors = sorted({r["name"] for r in lines if r["kind"] == "anchor"})
    out = ["| case | row | TFLOP/s median (min-max) | rounds | vs best SDPA, per round: median (min-max) |",
           "|---|---|---|---|---|"]
    for case in cases:
        # the best SDPA backend of the case: the one with the highest median over the rounds
        med = {a: statistics.median(x["tflops"] for x in by.get((case, a), {}).values() if x["tflops"])
               for a in anchors if any(x["tflops"] for x in by.get((case, a), {}).values())}
        best = max(med, key=med.get) if med else None
        for name in [*names, *anchors]:
            rounds = by.get((case, name))
            if not rounds:
                continue
            tf = [x["tflops"] for x in rounds.values() if x["tflops"]]
            if not tf:
                out.append(f"| {case} | {name} | {next(iter(rounds.values()))['status']} | 0 | |")
                continue
            ratios = [x["tflops"] / by[(case, best)][k]["tflops"] for k, x in rounds.items()
                      if x["tflops"] and best and k in by[(case, best)] and by[(case, best)][k]["tflops"]]
            ratio = (f"{statistics.median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f})" if ratios and
                     name != best else ("best" if name == best else ""))
            out.append(f"| {case} | {name} | {statistics.median(tf):.1f} ({min(tf):.1f}-{max(tf):.1f}) | {len(tf)} "
                       f"| {ratio} |")
    return "\n".join(out) + "\n"


def main(prefix: str, rounds: int, specs: list[str]) -> None:
    from dataclasses import replace

    import torch

    from tools.reports.bench import hopper_prefill_cases
    from vgprscope.bench.anchors import ANCHORS
    from vgprscope.bench.device import current_gpu, machine
    from vgprscope.bench.runner import BenchOptions, _inputs, _n_sets, bench_anchor, bench_variant
    from vgprscope.compile.engine import Engine
    from vgprscope.flashattn.source import variant_tasks
    from vgprscope.flashattn.variants import resolve_config, select_variants

    configs = parse(specs) or {"default": ("", "")}
    gpu = current_gpu()
    cases = hopper_prefill_cases()
    (variant,) = select_variants(["ws-regalloc"])
    opts = BenchOptions(variants=("ws-regalloc",), request=request(""), rep_ms=100.0, time_budget_s=10.0)
    cfgs = {}
    for case in cases:
        for name, (knobs, filt) in configs.items():
            if matches(case, filt):
                req = replace(request(knobs), head_dim=case.head_dim, causal=case.causal, dtype=case.dtype,
                              shape=case.shape)
                cfgs[(case, name)] = resolve_config(variant, gpu.arch, req)
    engine = Engine()  # every config compiled in one parallel sweep, GPU-free, before any timing
    resources: dict = {}
    for r in engine.compile(variant_tasks([(variant, c, gpu.arch, "") for c in cfgs.values()], engine)):
        resources.setdefault(r.config.key(), []).append(r)
    lines: list[dict] = []
    Path(prefix + ".md").write_text("")
    for k in range(rounds):
        for case in cases:
            sets = _inputs(case, _n_sets(case, gpu), opts.seed + k)
            rows = [(name, bench_variant(gpu, case, variant, cfgs[(case, name)], sets, opts,
                                         resources.get(cfgs[(case, name)].key(), [])))
                    for name in configs if (case, name) in cfgs]
            rows += [(a.name, bench_anchor(case, a, sets, opts)) for a in ANCHORS]
            for name, row in rows:
                ms = row.timing.median_ms if row.timing else None
                lines.append({"round": k, "case": case.label(), "name": name, "kind": row.kind, "config": row.config,
                              "median_ms": ms, "tflops": row.tflops, "status": row.status})
                print(f"round {k} {case.label()} {name} {row.config} "
                      + (f"{row.tflops:.1f} TFLOP/s" if row.tflops else row.status), flush=True)
            del sets
            torch.cuda.empty_cache()
        Path(prefix + ".jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        Path(prefix + ".md").write_text(f"Machine: {machine(gpu).line()}\n\n{rounds} rounds ({k + 1} done), configs: "
                                        + "; ".join(f"{n}: `{c[0] or 'defaults'}`" + (f" on {c[1]}" if c[1] else "")
                                                    for n, c in configs.items())
                                        + "\n\n" + table(lines, list(configs)))


if __name__ == "__main__":
    if len(sys.argv) < 3 or not sys.argv[2].isdigit():
        raise SystemExit("usage: python3 .ci/ws_rounds.py OUT_PREFIX ROUNDS [NAME=KNOBS[@FILTER] ...]")
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
