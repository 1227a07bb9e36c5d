"""reports/third-party-liger-kernel.md: liger-kernel's Triton kernels, as its own ops launch them, on the
archs of the report, through `vgprscope capture` (CPU, Triton's interpreter) and `analyze --capture`.

    python scripts/third_party_report.py            # writes reports/third-party-liger-kernel.md
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHS = ("gfx90a", "gfx942", "gfx950", "sm_80", "sm_90")
COMMAND = "python scripts/third_party_report.py"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, default=ROOT / "reports" / "third-party-liger-kernel.md")
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()

    from vgprscope.capture.model import load_capture
    from vgprscope.fsutil import atomic_write
    from vgprscope.report.formats import md_table
    from vgprscope.report.machine import compile_only
    from vgprscope.report.rows import fmt_lds, fmt_regs, fmt_scratch, fmt_spills_full, occupancy_label
    from vgprscope.sweep import run_sweep

    with tempfile.TemporaryDirectory() as tmp:
        cap_file = Path(tmp) / "liger.json"
        ops = ROOT / "scripts" / "third_party_ops.py"
        done = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", str(cap_file), "--",
                               sys.executable, str(ops)], capture_output=True, text=True,
                              env={**os.environ, "TRITON_INTERPRET": "1"})
        if done.returncode != 0:
            sys.exit(f"capture failed ({done.returncode}): {done.stderr[-1000:]}")
        capture = load_capture(cap_file)
        records = run_sweep(None, list(ARCHS), [], jobs=args.jobs, capture=cap_file)

    version = importlib.metadata.version("liger-kernel")
    status = Counter("ok" if r.ok else "refused" for r in records)
    lines = [
        f"# liger-kernel {version}: its Triton kernels on {', '.join(ARCHS)}",
        "",
        f"Machine: {compile_only().line()}",
        "",
        f"Reproduce: `{COMMAND}` (captures `python scripts/third_party_ops.py` under TRITON_INTERPRET=1 with "
        "`vgprscope capture`, then compiles every captured specialisation for each arch as "
        "`vgprscope analyze --capture FILE --arch ...` does).",
        "",
        "Nobody here wrote these kernels: liger-kernel is installed from PyPI (the `test` extra pins it) and "
        "`scripts/third_party_ops.py` calls its public autograd ops (RMSNorm, LayerNorm, SwiGLU, GeGLU, "
        "softmax, cross-entropy: forward and backward; DyT forward). Each row is one distinct launch "
        "specialisation the ops made, compiled GPU-free with the signature, specialisation, constexprs and "
        "options of that launch; DyT is `@triton.autotune`d, and each of its configs is a row (`cfg i/n`).",
        "",
        f"Capture: {capture.summary()}. Rows: {len(records)} ({status['ok']} ok, {status['refused']} that the "
        "arch refuses, with the reason).",
        "",
        "Shapes: 4 rows of a 4096-wide hidden dimension in fp16, 4096 classes for cross-entropy; block sizes "
        "and warps are liger's own choice for those shapes. On AMD, VGPRs are the unified count occupancy sees; on NVIDIA, registers per "
        "thread. Spills / scratch: AMD VGPR+SGPR spills and scratch bytes per lane, NVIDIA spill bytes and "
        "stack bytes per thread.",
        "",
    ]
    headers = ["module", "kernel", "config", "VGPRs / regs", "spills", "scratch / stack (B)", "LDS / smem (B)",
               "occupancy", "status"]
    for arch in ARCHS:
        rows = [r for r in records if r.arch == arch]
        lines += [f"## {arch}", ""]
        lines.append(md_table(headers, [[r.variant.removeprefix("liger_kernel.ops."), r.kernel, r.config.short(),
                                         fmt_regs(r), fmt_spills_full(r), fmt_scratch(r), fmt_lds(r),
                                         occupancy_label(r), r.status] for r in rows]))
    atomic_write(args.output, "\n".join(lines))
    print(f"wrote {args.output}: {len(records)} rows")


if __name__ == "__main__":
    main()
