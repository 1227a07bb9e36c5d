"""On the GPU: ws-regalloc's configs side by side in one process, beside SDPA's backends, on the four prefill
cases of issue 28 (fp16 and bf16): each config over the eight cases in turn, SDPA's backends with the first. Writes a markdown table (`vgprscope bench --format md`'s).

    python3 .ci/ws_side_by_side.py OUT.md [NAME=KNOBS ...]

NAME=KNOBS: a config as `num_warps=8,pingpong=0` (config fields and knobs; empty: the defaults); without any,
the sm_90 default, a 2-slot ring, the first default (one consumer partition of 8 warps, 2 slots) and
tma_store=1. NAME=KNOBS@D64 times that config on the head-dim-64 cases only (@D128: the others). The table is
rewritten after each config, so a run stopped at its time limit keeps what it measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

CONFIGS = {"default": "", "stages2": "num_stages=2", "one-partition": "num_warps=8,pingpong=0,num_stages=2",
           "tma_store": "tma_store=1"}
FIELDS = ("block_m", "block_n", "num_warps", "num_stages")


def request(spec: str):
    from vgprscope.flashattn.config import ConfigRequest

    fields: dict = {}
    extra = []
    for part in filter(None, spec.split(",")):
        k, v = part.split("=")
        if k in FIELDS:
            fields[k] = int(v)
        else:
            extra.append((k, int(v)))
    return ConfigRequest(extra=tuple(extra), **fields)


def main(out: str, specs: list[str]) -> None:
    from tools.reports.bench import hopper_prefill_cases
    from vgprscope.bench.device import current_gpu, machine
    from vgprscope.bench.output import to_markdown
    from vgprscope.bench.runner import BenchOptions, run_bench

    configs = dict(s.split("=", 1) for s in specs) if specs else CONFIGS
    gpu = current_gpu()
    cases = hopper_prefill_cases()
    rows: list = []
    for i, (name, spec) in enumerate(configs.items()):  # one compile sweep per config over the cases
        spec, _, only = spec.partition("@D")
        mine = [c for c in cases if not only or c.head_dim == int(only)]
        opts = BenchOptions(variants=("ws-regalloc",), request=request(spec), rep_ms=100.0, time_budget_s=10.0,
                            anchors=i == 0)
        new = run_bench(gpu, mine, opts)
        rows += new
        for r in new:
            print(f"{name}: {r.case.label()} {r.name} {r.config} "
                  + (f"{r.tflops:.1f} TFLOP/s" if r.tflops else r.status), flush=True)
        Path(out).write_text(to_markdown(rows, machine(gpu)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
