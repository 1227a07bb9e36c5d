"""Write reports/compare-<arch>.md and reports/compare-<arch>.png for the seeds' and the production configs.

    python scripts/make_compare_reports.py [--arch gfx942 ...] [--jobs N]

Compile-only (no GPU). Each report holds two tables, each equal to the output of the `vgprscope compare`
command printed above it, and a chart of every variant's registers against the arch's occupancy cliffs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ARCHS = ("gfx90a", "gfx942", "gfx950", "sm_80", "sm_90")


@dataclass(frozen=True)
class Setting:
    title: str
    why: str
    options: dict  # ConfigRequest fields


SETTINGS = (
    Setting("the seeds' configuration", "seed 001: BLOCK_M = BLOCK_N = 128, head dim 128, 8 warps",
            dict(block_m=128, block_n=128, head_dim=128, num_warps=8)),
    Setting("the production AMD default", "fwd_prefill's default: BLOCK_M 128, BLOCK_N 64, head dim 128, 4 warps, "
            "1 stage, waves_per_eu 2 (waves_per_eu is AMD-only and dropped on NVIDIA)",
            dict(block_m=128, block_n=64, head_dim=128, num_warps=4, num_stages=1, waves_per_eu=2)),
)


def cli_line(arch: str, opts: dict, amd: bool) -> str:
    flags = []
    for k, v in opts.items():
        if k == "waves_per_eu" and not amd:
            continue
        flags.append(f"--{k.replace('_', '-')} {v}")
    return f"vgprscope compare --strategies all --arch {arch} {' '.join(flags)} --format md"


def chart(arch_name: str, lines_by_setting, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vgprscope.archs import AmdArch, get_arch
    from vgprscope.occupancy import ladder

    arch = get_arch(arch_name)
    fig, axes = plt.subplots(1, len(lines_by_setting), figsize=(7 * len(lines_by_setting), 5), squeeze=False)
    for ax, (setting, lines, num_warps) in zip(axes[0], lines_by_setting):
        names = [ln.variant for ln in lines]
        regs = [ln.regs or 0 for ln in lines]
        colors = ["tab:red" if (ln.spills or 0) > 0 else "tab:blue" for ln in lines]
        ax.barh(names, regs, color=colors)
        steps = ladder(arch) if isinstance(arch, AmdArch) else ladder(arch, threads=num_warps * arch.wave_size)
        top = max(regs + [1])
        for step in steps:
            if step.hi <= max(top * 1.15, 64):
                ax.axvline(step.hi, color="gray", lw=0.8, ls="--")
                ax.text(step.hi, len(names) - 0.4, f" {step.value}", fontsize=7, color="gray", rotation=90,
                        va="top")
        unit = "VGPRs (unified VGPR+AGPR)" if isinstance(arch, AmdArch) else "registers per thread"
        ax.set_xlabel(f"{unit}; dashed: occupancy cliffs ({'waves/SIMD' if isinstance(arch, AmdArch) else 'blocks/SM'} up to that count)")
        ax.set_title(f"{arch_name}: {setting.title} (red: spills)", fontsize=10)
        for i, ln in enumerate(lines):
            occ = "-" if ln.occupancy is None else str(ln.occupancy)
            ax.text((ln.regs or 0) + 2, i, f"{ln.regs} -> {occ}{' spills' if (ln.spills or 0) else ''}",
                    va="center", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--out", type=Path, default=ROOT / "reports")
    args = ap.parse_args()

    from vgprscope.archs import AmdArch, get_arch
    from vgprscope.compare import compare
    from vgprscope.fsutil import atomic_write
    from vgprscope.report.compare_view import tables_md
    from vgprscope.report.machine import compile_only
    from vgprscope.sweep import run_sweep
    from vgprscope.variants import ConfigRequest

    machine = compile_only()
    for arch_name in args.arch or ARCHS:
        amd = isinstance(get_arch(arch_name), AmdArch)
        parts = [f"# Strategy comparison on {arch_name} (compile-only)\n\n",
                 "Reproduce every table and the chart: `python scripts/make_compare_reports.py --arch "
                 f"{arch_name}`\n\nMachine: {machine.line()}\n\n"
                 "Traffic model columns are for the reference problem B=4, H=32, Nq=Nk=4096 "
                 "(`vgprscope compare --shape`); formulas in `vgprscope/model.py`.\n"]
        charted = []
        for setting in SETTINGS:
            opts = {k: v for k, v in setting.options.items() if amd or k != "waves_per_eu"}
            records = run_sweep(None, [arch_name], [ConfigRequest(**opts)], jobs=args.jobs)
            per_arch = compare(records)
            parts.append(f"\n## {setting.title}\n\n{setting.why}.\n\nCommand: `{cli_line(arch_name, opts, amd)}`\n\n")
            body = tables_md(per_arch, machine)
            # the report's own machine line stands once, at the top
            parts.append("\n".join(ln for ln in body.splitlines() if not ln.startswith("Machine:")) + "\n")
            charted.append((setting, per_arch[arch_name], opts.get("num_warps", 4)))
        png = args.out / f"compare-{arch_name}.png"
        chart(arch_name, charted, png)
        parts.append(f"\n![registers against the occupancy cliffs](compare-{arch_name}.png)\n")
        atomic_write(args.out / f"compare-{arch_name}.md", "".join(parts))
        print(f"wrote {args.out / f'compare-{arch_name}.md'} and {png}")


if __name__ == "__main__":
    main()
