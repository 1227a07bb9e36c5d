"""Write reports/explain-<arch>.md: `vgprscope explain` of the bundled baseline at the seeds' config
(BLOCK_M = BLOCK_N = 128, head dim 128, 8 warps) and at the AMD production default (128x64, head dim 128,
4 warps, 1 stage, waves_per_eu 2 on AMD) on gfx942, gfx90a and sm_90.

    python scripts/make_explain_reports.py [--arch gfx942 ...] [--out reports]
"""

from __future__ import annotations

import argparse
from pathlib import Path

ARCHS = ("gfx942", "gfx90a", "sm_90")
SCRIPT = "python scripts/make_explain_reports.py"


def configs(arch: str) -> list[tuple[str, dict, str]]:
    """(title, ConfigRequest fields, the equivalent explain options)."""
    amd = arch.startswith("gfx")
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


def report(arch: str) -> str:
    from vgprscope.attention.live import estimate
    from vgprscope.explain import explain_tasks
    from vgprscope.report.explain_view import to_markdown
    from vgprscope.report.machine import compile_only
    from vgprscope.sweep import sweep_tasks
    from vgprscope.attention.config import ConfigRequest

    machine = compile_only()
    parts = [f"# Where the registers go: the bundled baseline on {arch}", "",
             f"Machine: {machine.line()}", "",
             f"Produced by `{SCRIPT} --arch {arch}`; each section names the `vgprscope explain` command that "
             "prints it alone.", "",
             "Registers per lane are counted from each tensor's TTGIR layout (what one lane holds, broadcast "
             "copies not counted, 16-bit elements two to a register); the allocation is the compiler's; the "
             "seed 001 column is `vgprscope.attention.live.live_state` (its table, each variant's "
             "`VARIANT['live_state']`: each tile divided evenly over all threads). "
             "Splats and constants are listed but not counted (one uniform value), nor are i1 masks (predicates "
             "or lane masks, not 32-bit registers); integer tensors are `index` vectors (offsets), summed apart "
             "since the compiler may recompute them. The remainder is what the allocation holds beyond the "
             "loop's sum: temporaries (the score tile, K/V operands), addresses, pipeline buffers.", ""]
    for title, fields, opts in configs(arch):
        tasks = sweep_tasks(["baseline"], [arch], [ConfigRequest(**fields)])
        explanations = explain_tasks(tasks, estimate=estimate)
        body = to_markdown(explanations, machine, title=None,
                           command=f"vgprscope explain --variant baseline --arch {arch} {opts} --format md")
        body = body.split("\n", 2)[2]  # the machine line is at the top of the report already
        parts += [f"## At {title}", "", body]
    return "\n".join(parts).rstrip("\n") + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", choices=ARCHS)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "reports")
    args = ap.parse_args()
    from vgprscope.fsutil import atomic_write

    for arch in args.arch or ARCHS:
        path = args.out / f"explain-{arch}.md"
        atomic_write(path, report(arch))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
