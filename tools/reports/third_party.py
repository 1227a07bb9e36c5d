"""reports/third-party-liger-kernel.md: liger-kernel's Triton kernels, as its own ops launch them, on the
archs of the report, through `vgprscope capture` (CPU, Triton's interpreter) and `analyze --capture`.

    python -m tools.reports third-party [--out reports]     # writes third-party-liger-kernel.md
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ARCHS = ("gfx90a", "gfx942", "gfx950", "sm_80", "sm_90")
COMMAND = "python -m tools.reports third-party"
ROOT = Path(__file__).resolve().parents[2]  # the repository root, where `tools` is importable
OPS = "tools.reports.workloads.liger_ops"  # the workload captured: liger-kernel's public ops


def third_party_report(out: Path, *, jobs: int | None = None) -> list[Path]:
    """Capture liger-kernel's ops on the CPU and write ``out/third-party-liger-kernel.md``; the files written.
    Needs liger-kernel (the test extra pins it) and torch."""
    from vgprscope.captures.model import load_capture
    from vgprscope.core.errors import MissingExtraError, VgprscopeError
    from vgprscope.core.fsutil import atomic_write
    from vgprscope.library.api import analyze
    from vgprscope.report.formats import md_table
    from vgprscope.report.machine import compile_only
    from vgprscope.report.rows import fmt_lds, fmt_regs, fmt_scratch, fmt_spills_full, occupancy_label

    try:
        version = importlib.metadata.version("liger-kernel")
    except importlib.metadata.PackageNotFoundError:
        from vgprscope.core.extras import install_command

        raise MissingExtraError("the third-party report", "liger-kernel", "test",
                                f"{install_command('test')} (liger-kernel==0.8.5)") from None
    with tempfile.TemporaryDirectory() as tmp:
        cap_file = Path(tmp) / "liger.json"
        done = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", str(cap_file), "--",
                               sys.executable, "-m", OPS], capture_output=True, text=True,
                              env={**os.environ, "TRITON_INTERPRET": "1"}, cwd=ROOT)
        if done.returncode != 0:
            raise VgprscopeError(f"the capture of liger-kernel's ops failed ({done.returncode}): "
                                 f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no output'}")
        capture = load_capture(cap_file)
        records = analyze(capture=capture, arch=list(ARCHS), jobs=jobs).records

    status = Counter("ok" if r.ok else "refused" for r in records)
    lines = [
        f"# liger-kernel {version}: its Triton kernels on {', '.join(ARCHS)}",
        "",
        f"Machine: {compile_only().line()}",
        "",
        f"Reproduce: `{COMMAND}` (captures `python -m {OPS}` under TRITON_INTERPRET=1 with "
        "`vgprscope capture`, then compiles every captured specialisation for each arch as "
        "`vgprscope analyze --capture FILE --arch ...` does).",
        "",
        "Nobody here wrote these kernels: liger-kernel is installed from PyPI (the `test` extra pins it) and "
        f"`{OPS}` calls its public autograd ops (RMSNorm, LayerNorm, SwiGLU, GeGLU, "
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
    path = out / "third-party-liger-kernel.md"
    atomic_write(path, "\n".join(lines))
    return [path]
