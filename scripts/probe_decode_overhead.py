"""On a GPU: where decode time goes, eager launches against CUDA-graph replay, and split counts around the default.

    python scripts/probe_decode_overhead.py

For issue 13's decode cases, split-k at its defaults and SDPA's flash and cuDNN backends are timed the way
`bench` times them (`do_bench`, L2 flushed before each run, median), once as eager calls and once as the
replay of a CUDA graph of the same call: the difference is the host's launch cost, which `do_bench` counts
whenever the GPU waits on Python. split-k is also timed at other split counts (knob num_splits) to show
where the default's choice sits. Inputs are N(0, 1) and one output of each is checked against float64.
Prints one table; nothing is written.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CASES = [  # (B, H, H_kv, Nq, Nk)
    (1, 32, 32, 1, 65536),
    (1, 32, 8, 1, 65536),
    (8, 32, 8, 16, 8192),
    (1, 32, 8, 1, 8192),
    (1, 32, 32, 1, 8192),
]


def main() -> None:
    import torch
    from triton.testing import do_bench

    from vgprscope.attention.run import config_for_tensors
    from vgprscope.bench.anchors import ANCHORS, sdpa_runner
    from vgprscope.bench.gate import check_sampled
    from vgprscope.kernels._launch import device_compute_units, num_splits
    from vgprscope.attention.variants import get_variant

    var = get_variant("split-k")
    launch = var.module().launch
    print(f"{'case':28} {'what':32} {'eager us':>9} {'graph us':>9} {'GB/s graph':>10}")
    for b, h, hkv, nq, nk in CASES:
        g = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(b, h, nq, 128, device="cuda", dtype=torch.float16, generator=g)
        k, v = (torch.randn(b, hkv, nk, 128, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
        least = 2 * 128 * (2 * b * h * nq + 2 * b * hkv * nk)
        label = f"B{b} H{h} Hkv{hkv} Nq{nq} Nk{nk}"
        cfg = config_for_tensors(var, q, k, False, {})
        default = num_splits(cfg.as_dict() | {"shape": list(cfg.shape)}, device_compute_units(q))
        runs = []
        for s in sorted({max(1, default // 2), default, default * 2}):
            c = config_for_tensors(var, q, k, False, {"num_splits": s})
            if s > math.ceil(nk / c.block_n):
                continue
            d = c.as_dict()
            runs.append((f"split-k S={s}{' (default)' if s == default else ''} {c.block_m}x{c.block_n}",
                         lambda d=d: launch(q, k, v, False, 128 ** -0.5, d)))
        for a in ANCHORS[:2]:
            fn = sdpa_runner(a, False, nq, nk, gqa=hkv != h)
            runs.append((a.name, lambda fn=fn: fn(q, k, v)))
        for what, fn in runs:
            try:
                out = fn()
                torch.cuda.synchronize()
                ok = check_sampled(out, q, k, v, False, "baseline", "fp16").ok
                eager = do_bench(fn, warmup=25, rep=100, return_mode="median")
                stream = torch.cuda.Stream()
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    fn()  # warm on the side stream before capture
                torch.cuda.current_stream().wait_stream(stream)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    fn()
                replay = do_bench(graph.replay, warmup=25, rep=100, return_mode="median")
                print(f"{label:28} {what[:32]:32} {eager * 1e3:9.1f} {replay * 1e3:9.1f} "
                      f"{least / (replay / 1e3) / 1e9:10.0f}{'' if ok else '  FAILED GATE'}", flush=True)
            except Exception as exc:  # a backend that refuses the case is a line
                print(f"{label:28} {what[:32]:32} {type(exc).__name__}: {str(exc).splitlines()[0][:60]}", flush=True)


if __name__ == "__main__":
    main()
