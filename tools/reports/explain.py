"""reports/explain-<arch>.md: `vgprscope explain` of the bundled baseline at the seeds' config
(BLOCK_M = BLOCK_N = 128, head dim 128, 8 warps) and at the AMD production default (128x64, head dim 128,
4 warps, 1 stage, waves_per_eu 2 on AMD) on gfx942, gfx90a and sm_90.

    python -m tools.reports explain [--arch gfx942 ...] [--out reports]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ARCHS = ("gfx942", "gfx90a", "sm_90")
COMMAND = "python -m tools.reports explain"


def configs(arch: str) -> list[tuple[str, dict[str, Any], str]]:
    """(title, the library's keywords, the equivalent explain options)."""
    from vgprscope.backends import backend_of
    from vgprscope.core.archs import get_arch

    amd = "waves_per_eu" in backend_of(get_arch(arch)).facts.options  # the production default sets it where it exists
    seed = ("the seeds' config (seed 001: BLOCK_M = BLOCK_N = 128, d128, 8 warps)",
            dict(block_m=128, block_n=128, head_dim=128, num_warps=8),
            "--block-m 128 --block-n 128 --head-dim 128 --num-warps 8")
    prod = dict(block_m=128, block_n=64, head_dim=128, num_warps=4, num_stages=1)
    opts = "--block-m 128 --block-n 64 --head-dim 128 --num-warps 4 --num-stages 1"
    if amd:
        prod["waves_per_eu"] = 2
        opts += " --waves-per-eu 2"
    title = "the AMD production default (128x64, d128, 4 warps, 1 stage" + (", waves_per_eu 2)" if amd else ")")
    return [seed, (title, prod, opts)]


def report(arch: str, jobs: int | None = None) -> str:
    from vgprscope.analysis.explain.view import to_markdown
    from vgprscope.library.api import explain
    from vgprscope.report.machine import compile_only

    machine = compile_only()
    parts = [f"# Where the registers go: the bundled baseline on {arch}", "",
             f"Machine: {machine.line()}", "",
             f"Produced by `{COMMAND} --arch {arch}`; each section names the `vgprscope explain` command that "
             "prints it alone.", "",
             "Registers per lane are counted from each tensor's TTGIR layout (what one lane holds, broadcast "
             "copies not counted, 16-bit elements two to a register); the allocation is the compiler's; the "
             "seed 001 column is `vgprscope.flashattn.live.live_state` (its table, each variant's "
             "`VARIANT['live_state']`: each tile divided evenly over all threads). "
             "Splats and constants are listed but not counted (one uniform value), nor are i1 masks (predicates "
             "or lane masks, not 32-bit registers); integer tensors are `index` vectors (offsets), summed apart "
             "since the compiler may recompute them. The remainder is what the allocation holds beyond the "
             "loop's sum: temporaries (the score tile, K/V operands), addresses, pipeline buffers.", ""]
    for title, fields, opts in configs(arch):
        explanations = explain(variant="baseline", arch=arch, jobs=jobs, **fields).explanations
        body = to_markdown(explanations, machine, title=None,
                           command=f"vgprscope explain --variant baseline --arch {arch} {opts} --format md")
        body = body.split("\n", 2)[2]  # the machine line is at the top of the report already
        parts += [f"## At {title}", "", body]
    return "\n".join(parts).rstrip("\n") + "\n"


def explain_report(arch: str, out: Path, *, jobs: int | None = None) -> list[Path]:
    """Write ``out/explain-<arch>.md``; the files written."""
    from vgprscope.core.fsutil import atomic_write

    path = out / f"explain-{arch}.md"
    atomic_write(path, report(arch, jobs))
    return [path]
