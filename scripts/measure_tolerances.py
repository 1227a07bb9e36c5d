"""Measure the output error of every variant against float64, to derive ``vgprscope/flashattn/tolerances.py``.

For each (variant, dtype) over a grid of shapes (seqlen 1 to 8192, ragged, causal or not, head dims 16 to
256) and seeds, on N(0, 1) inputs as the gate draws them, it records the largest |out - ref| and, for
each candidate rtol (multiples of the dtype's machine epsilon), the smallest atol that would have
passed every element: max(|err| - rtol * |ref|). Prints a table and writes JSON.

CPU (the interpreter, small shapes and blocks):  TRITON_INTERPRET=1 python scripts/measure_tolerances.py
GPU (the variants' default configs):             python scripts/measure_tolerances.py --device cuda
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

EPS = {"fp16": 2.0 ** -10, "bf16": 2.0 ** -7}
RTOL_MULTIPLES = (0.5, 1, 2, 4)

CPU_SHAPES = [(1, 1), (1, 77), (77, 1), (37, 53), (53, 37), (64, 64), (100, 300), (200, 200)]
GPU_SHAPES = [(1, 1), (1, 4096), (4096, 1), (77, 77), (333, 1000), (1000, 333), (1024, 1024), (4096, 4096),
              (2048, 8192)]
HEAD_DIMS = {"cpu": (16, 40, 64, 80, 128), "cuda": (16, 40, 64, 80, 96, 128, 256)}


def cases(device: str, seeds: int):
    shapes = CPU_SHAPES if device == "cpu" else GPU_SHAPES
    for (nq, nk), d, causal, seed in itertools.product(shapes, HEAD_DIMS[device], (False, True), range(seeds)):
        yield nq, nk, d, causal, seed


def measure(job):
    variant, dtype, device, seeds, kernel_dir = job
    import torch

    from vgprscope.flashattn.correctness import run_variant

    small = {"block_m": 16, "block_n": 16} if device == "cpu" else {}
    if variant == "row-stream" and device == "cpu":
        small = {"block_m": 16, "block_n": 32}
    b, h = (1, 2) if device == "cpu" else (2, 4)
    rec = {"variant": variant, "dtype": dtype, "device": device, "runs": 0, "elements": 0, "max_abs_err": 0.0,
           "atol_needed": {str(m): 0.0 for m in RTOL_MULTIPLES}, "worst_case": None, "skipped": []}
    for nq, nk, d, causal, seed in cases(device, seeds):
        try:
            out, ref = run_variant(variant, b, h, nq, nk, d, causal, dtype, device, seed, kernel_dir, **small)
        except Exception as exc:  # a config the variant or the device cannot take: say so, go on
            rec["skipped"].append(f"{nq}x{nk} d{d} causal={causal}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        err = (out.double() - ref).abs()
        mag = ref.abs()
        rec["runs"] += 1
        rec["elements"] += err.numel()
        if not torch.isfinite(err).all():
            rec["nonfinite"] = rec.get("nonfinite", 0) + int((~torch.isfinite(err)).sum())
            err = torch.nan_to_num(err, nan=float("inf"))
        e_max = float(err.max())
        if e_max > rec["max_abs_err"]:
            rec["max_abs_err"] = e_max
            rec["worst_case"] = f"{nq}x{nk} d{d} causal={causal} seed={seed}"
        for m in RTOL_MULTIPLES:
            need = float((err - m * EPS[dtype] * mag).max())
            rec["atol_needed"][str(m)] = max(rec["atol_needed"][str(m)], need)
    return rec


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--variants", default="all")
    p.add_argument("--dtypes", default="fp16,bf16")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--kernel-dir", default=None, help="also measure a directory of user variants (all of them)")
    p.add_argument("--out", default="tolerance_measurements.json")
    a = p.parse_args(argv)
    from vgprscope.flashattn.variants import load_variants

    names = list(load_variants()) if a.variants == "all" else a.variants.split(",")
    jobs = [(n, dt, a.device, a.seeds, None) for n in names for dt in a.dtypes.split(",")]
    if a.kernel_dir:
        from pathlib import Path

        jobs += [(n, dt, a.device, a.seeds, a.kernel_dir) for n in load_variants(Path(a.kernel_dir).resolve())
                 for dt in a.dtypes.split(",")]
    with ProcessPoolExecutor(a.jobs) as pool:
        recs = list(pool.map(measure, jobs))
    print(f"{'variant':20s} {'dtype':5s} {'runs':>5s} {'max|err|':>10s} " +
          " ".join(f"{'atol@' + str(m) + 'eps':>12s}" for m in RTOL_MULTIPLES) + "  worst case")
    for r in recs:
        print(f"{r['variant']:20s} {r['dtype']:5s} {r['runs']:5d} {r['max_abs_err']:10.3e} " +
              " ".join(f"{r['atol_needed'][str(m)]:12.3e}" for m in RTOL_MULTIPLES) + f"  {r['worst_case']}"
              + (f"  skipped {len(r['skipped'])}" if r["skipped"] else ""))
    with open(a.out, "w") as f:
        json.dump(recs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
