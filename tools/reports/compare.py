"""reports/compare-<arch>.md and reports/compare-<arch>.png: the strategies with their frontier.

    python -m tools.reports compare [--arch gfx942 ...] [--jobs N] [--frontier-settings production] [--out reports]

Compile-only (no GPU). For the seeds' and the production configs, each report holds seed 002's tradeoff
table as measured (spills avoided at a fixed register budget, occupancy reached without spills, modelled
extra bytes), the spills of every kernel at every occupancy level, the `vgprscope compare --frontier` table
(equal to the command printed above it), and a chart of spills against occupancy level per strategy.
Every sentence of the "what the measurement shows" paragraphs is computed from the numbers below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHS = ("gfx90a", "gfx942", "gfx950", "sm_80", "sm_90")
COMMAND = "python -m tools.reports compare"
REFERENCE = "baseline"


@dataclass(frozen=True)
class Setting:
    name: str  # for --frontier-settings
    title: str
    why: str
    options: dict[str, int]  # ConfigRequest fields


SETTINGS = (
    Setting("production", "the production AMD default", "fwd_prefill's default: BLOCK_M 128, BLOCK_N 64, head dim 128, 4 warps, "
            "1 stage, waves_per_eu 2 (waves_per_eu is AMD-only and dropped on NVIDIA; the frontier varies it)",
            dict(block_m=128, block_n=64, head_dim=128, num_warps=4, num_stages=1, waves_per_eu=2)),
    Setting("seeds", "the seeds' configuration", "seed 001: BLOCK_M = BLOCK_N = 128, head dim 128, 8 warps",
            dict(block_m=128, block_n=128, head_dim=128, num_warps=8)),
)


def cli_line(arch: str, opts: dict, amd: bool, strategies: Sequence[str] = ("all",)) -> str:
    flags = [f"--{k.replace('_', '-')} {v}" for k, v in opts.items() if amd or k != "waves_per_eu"]
    return (f"vgprscope compare --strategies {','.join(strategies)} --arch {arch} {' '.join(flags)} --frontier "
            "--format md")


def own_options(opts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each variant whose strategy is a smaller value than the setting's (small-tiles: BLOCK_M 64) -> the
    setting with that variant's cap. A setting is a default configuration, not a request: as for any default
    (flashattn.variants.resolve_config), a value above a variant's cap becomes the cap; a request would be
    refused on the variant's row instead."""
    from vgprscope.flashattn.variants import load_variants

    out = {}
    for name, v in load_variants().items():
        caps = {k: c for k, c in v.caps if k in opts and opts[k] > c}
        if caps:
            out[name] = opts | caps
    return out


def compare_setting(arch_name: str, opts: dict[str, Any], framed: bool, jobs: int | None) -> tuple[list, list[str]]:
    """The setting's compare lines (every strategy, the capped ones compiled at their cap, in the variants'
    order) and the commands that reproduce them."""
    from vgprscope.flashattn.variants import load_variants
    from vgprscope.library.api import compare

    order = list(load_variants())
    own = own_options(opts)
    rest = [v for v in order if v not in own]
    lines = list(compare(strategies=rest, arch=arch_name, frontier=framed, jobs=jobs, **opts).per_arch[arch_name])
    commands = [cli_line(arch_name, opts, True, ["all"] if not own else rest)]
    for name, o in own.items():
        lines += compare(strategies=[name], arch=arch_name, frontier=framed, jobs=jobs, **o).per_arch[arch_name]
        commands.append(cli_line(arch_name, o, True, [name]))
    lines.sort(key=lambda ln: order.index(ln.variant) if ln.variant in order else len(order))
    return lines, commands


# ---- the variant's numbers per level ---------------------------------------------------------------------


def variant_levels(vf) -> dict[int, dict]:
    """level -> {spills (all kernels summed; None if a kernel failed), in_loop, reached (worst kernel)}."""
    out: dict[int, dict] = {}
    for kf in vf.kernels:
        for lv in kf.levels:
            d = out.setdefault(lv.plan.target, {"spills": 0, "in_loop": 0, "reached": None, "budget": lv.plan.budget,
                                                "setting": lv.plan.setting})
            if not lv.ok or d["spills"] is None:
                d["spills"] = None
                continue
            d["spills"] += lv.spills
            d["in_loop"] += lv.figures()["spill_insts_in_loop"] or 0
            d["reached"] = lv.reached if d["reached"] is None else min(d["reached"], lv.reached)
    return out


def spill_word(amd: bool) -> str:
    return "spilled values" if amd else "bytes of spill traffic per thread (stores + loads)"


def tradeoff(lines, fronts, amd: bool, unit: str):
    """Seed 002's table, measured: rows per strategy and the fixed level the spills are compared at."""
    base = next((ln for ln in lines if ln.variant == REFERENCE), None)
    base_levels = variant_levels(fronts[base.variant]) if base and base.variant in fronts else {}
    # AMD: the first level at which baseline spills inside its loop (a spill or two outside it costs little);
    # NVIDIA (no loop attribution from ptxas): the first level at which it spills at all
    spilling = sorted(t for t, d in base_levels.items() if (d["in_loop"] if amd else d["spills"]))
    fixed = spilling[0] if spilling else None
    base_bytes = (base.traffic.bytes_read + base.traffic.bytes_written) if base and base.traffic else None
    rows = []
    for ln in lines:
        vf = fronts.get(ln.variant)
        levels = variant_levels(vf) if vf else {}
        at = levels.get(fixed, {}) if fixed else {}
        b_at = base_levels.get(fixed, {}) if fixed else {}
        spills = at.get("spills")
        avoided = (b_at.get("spills") - spills) if spills is not None and b_at.get("spills") is not None else None
        nbytes = (ln.traffic.bytes_read + ln.traffic.bytes_written) if ln.traffic else None
        extra = (nbytes - base_bytes) if nbytes is not None and base_bytes is not None else None
        nxt = vf.limiting.next_level if vf and vf.limiting else None
        rows.append(dict(variant=ln.variant, vf=vf, spills=spills, in_loop=at.get("in_loop"), avoided=avoided,
                         extra=extra, free=vf.spill_free_occupancy if vf else None,
                         next=nxt, regs=ln.regs))
    budget = base_levels.get(fixed, {}).get("budget") if fixed else None
    return fixed, budget, rows


def _gb(x) -> str:
    return "-" if x is None else f"{x / 1e9:+.2f}"


def tradeoff_md(arch, fixed, budget, rows, amd: bool, unit: str) -> str:
    from vgprscope.flashattn.variants import load_variants
    from vgprscope.report.formats import md_table

    variants = load_variants()
    reg = "VGPRs" if amd else "registers"
    at = f"{fixed} {unit} ({budget} {reg})" if fixed else "-"
    headers = ["strategy", "seed", f"spills at {at}", "spills avoided vs baseline", f"spill-free occupancy ({unit})",
               "next level: its price", "modelled extra GB vs baseline"]
    out = []
    for r in rows:
        v = variants.get(r["variant"])
        nxt = r["next"]
        if r["vf"] is None:
            price = "-"
        elif not any(lv.ok for kf in r["vf"].kernels for lv in kf.levels):
            price = "compiles at no level"
        elif r["free"] is None:
            price = "spills at every level"
        elif nxt is None:
            price = "none (top level)"
        else:
            from vgprscope.analysis.frontier.summary import price as price_of

            price = f"{nxt.plan.target}: {price_of(nxt)}"
        spills = "-" if r["spills"] is None else (f"{r['spills']} ({r['in_loop']} in loop)" if amd else str(r["spills"]))
        out.append([r["variant"], v.seed if v else "-", spills, "-" if r["avoided"] is None else str(r["avoided"]),
                    "none" if r["free"] is None else str(r["free"]), price, _gb(r["extra"])])
    return md_table(headers, out)


def level_matrix_md(fronts, order, amd: bool) -> str:
    """Every kernel's spills at every level (AMD: values (spill instructions in loops); NVIDIA: bytes)."""
    from vgprscope.report.formats import md_table

    kfs = [kf for v in order if v in fronts for kf in fronts[v].kernels]
    if not kfs:
        return ""
    levels = [lv.plan for lv in kfs[0].levels]
    headers = ["variant", "kernel"] + [f"{p.target} ({p.knob} {p.setting})" for p in levels]
    rows = []
    for kf in kfs:
        cells = []
        for lv in kf.levels:
            if not lv.ok:
                cells.append("fails")
            elif amd:
                cells.append("0" if not lv.spills else f"{lv.spills} ({lv.figures()['spill_insts_in_loop']})")
            else:
                cells.append(str(lv.spills))
        rows.append([kf.variant, kf.kernel] + cells)
    return md_table(headers, rows)


def findings(arch, fixed, budget, rows, amd: bool, unit: str, lines, wpe: int | None) -> list[str]:
    """Sentences, each computed from the numbers in the tables."""
    reg = "VGPRs" if amd else "registers"
    out = []
    ranked = sorted(rows, key=lambda r: -(r["free"] or 0))
    free = [f"{r['variant']} {r['free']}" for r in ranked if r["free"] is not None]
    def compiled(r) -> bool:
        return any(lv.ok for kf in r["vf"].kernels for lv in kf.levels)

    none = [r["variant"] for r in rows if r["vf"] is not None and r["free"] is None and compiled(r)]
    failed = [r["variant"] for r in rows if r["vf"] is not None and not compiled(r)]
    if free:
        out.append(f"Occupancy reached without spilling ({unit}): {', '.join(free)}"
                   + (f"; {', '.join(none)} spill at every level" if none else "")
                   + (f"; {', '.join(failed)} compile at no level (`vgprscope frontier` shows why)" if failed else "")
                   + ".")
    base = next((r for r in rows if r["variant"] == REFERENCE), None)
    if fixed and base and base["spills"] is not None:
        better = [r for r in rows if r["avoided"] is not None and r["avoided"] > 0 and r["variant"] != REFERENCE]
        worse = [r for r in rows if r["avoided"] is not None and r["avoided"] < 0]
        first = "the first level at which baseline spills inside its loop" if amd else "the first level at which baseline spills"
        text = (f"At a fixed budget of {budget} {reg} ({fixed} {unit}, {first}), "
                f"baseline has {base['spills']} {spill_word(amd)}")
        if better:
            text += "; fewer: " + ", ".join(f"{r['variant']} {r['spills']}" for r in sorted(better, key=lambda r: r["spills"]))
        if worse:
            text += "; more: " + ", ".join(f"{r['variant']} {r['spills']}" for r in worse)
        out.append(text + ".")
    elif not fixed:
        out.append(f"baseline does not spill {'inside its loop ' if amd else ''}at any level on {arch}, so no "
                   "strategy has spills to avoid here.")
    costly = [r for r in rows if r["extra"] is not None and r["extra"] > 0]
    if costly:
        out.append("Modelled extra traffic against baseline for the reference problem: "
                   + ", ".join(f"{r['variant']} {_gb(r['extra'])} GB" for r in sorted(costly, key=lambda r: r["extra"]))
                   + ".")
    if amd and wpe:
        full = [ln.variant for ln in lines if ln.regs == 256]
        if len(full) > 1:
            out.append(f"At waves_per_eu {wpe} the allocation column shows 256 VGPRs for {', '.join(full)}: LLVM fills "
                       f"the budget the hint allows, so the column measures the hint, not the pressure; the "
                       "frontier columns compare the strategies.")
    return out


# ---- chart -------------------------------------------------------------------------------------------------


def chart(arch_name: str, per_setting, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(per_setting), figsize=(7 * len(per_setting), 5), squeeze=False)
    markers = "osD^v<>ph*"
    for ax, (setting, fronts, order, amd, unit) in zip(axes[0], per_setting):
        for i, v in enumerate(v for v in order if v in fronts):
            levels = variant_levels(fronts[v])
            xs = [t for t in sorted(levels) if levels[t]["spills"] is not None]
            ys = [levels[t]["spills"] for t in xs]
            ax.plot(xs, ys, marker=markers[i % len(markers)], label=v, lw=1.2, ms=5, alpha=0.85)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel(f"occupancy level compiled ({unit}; {'waves_per_eu' if amd else 'maxnreg at each step'})")
        ax.set_ylabel("VGPR+SGPR values spilled (all kernels)" if amd else "spill bytes per thread (st+ld, all kernels)")
        ax.set_title(f"{arch_name}: {setting.title}", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{arch_name}: spills against occupancy level per strategy (0 = spill-free)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- the report ------------------------------------------------------------------------------------------


def compare_report(arch_name: str, out: Path, *, jobs: int | None = None,
                   frontier_settings: Sequence[str] = ("production", "seeds")) -> list[Path]:
    """Write ``out/compare-<arch>.md`` (and its chart, ``compare-<arch>.png``, when a frontier was compiled);
    the files written."""
    from vgprscope.analysis.compare.view import tables_md
    from vgprscope.analysis.frontier.view import next_level_cell, spill_free_cell
    from vgprscope.backends import backend_of
    from vgprscope.core.archs import get_arch
    from vgprscope.core.fsutil import atomic_write
    from vgprscope.core.occupancy.common import AMD_UNIT, NVIDIA_UNIT
    from vgprscope.report.machine import compile_only

    machine = compile_only()
    with_frontier = set(frontier_settings)
    # the report's AMD wording (waves_per_eu levels, spilled values, spills in loops) or NVIDIA's (maxnreg
    # steps, spill bytes) follows the frontier's knob, which the arch's backend names
    amd = backend_of(get_arch(arch_name)).facts.knob == "waves_per_eu"
    unit = AMD_UNIT if amd else NVIDIA_UNIT
    reproduce_extra = ("" if with_frontier >= {st.name for st in SETTINGS}
                       else f" --frontier-settings {','.join(sorted(with_frontier))}")
    parts = [f"# Strategy comparison on {arch_name} (compile-only): registers, spills and the spill-free "
             "frontier\n\n",
             f"Reproduce every table and the chart: `{COMMAND} --arch "
             f"{arch_name}{reproduce_extra}`\n\nMachine: {machine.line()}\n\n"
             "Each strategy is compiled at every occupancy level of the arch "
             f"({'waves_per_eu 1..8' if amd else 'maxnreg at the top of each blocks/SM step, then the smallest spill-free maxnreg by bisection'}"
             "; `vgprscope frontier`). The measure of a register-reduction strategy is the highest occupancy it "
             "reaches without spilling and what the next level costs, not the allocation at one occupancy "
             "target. Traffic is the model's, for the reference problem B=4, H=32, Nq=Nk=4096 "
             "(`vgprscope compare --shape`; notation in `vgprscope/flashattn/traffic.py`, formulas in each "
             "variant's `VARIANT['traffic']`).\n"]
    charted = []
    for setting in SETTINGS:
        opts: dict[str, Any] = {k: v for k, v in setting.options.items() if amd or k != "waves_per_eu"}
        framed = setting.name in with_frontier
        # the library's compare (with the frontier, as `vgprscope compare --frontier` compiles it)
        lines, commands = compare_setting(arch_name, opts, framed, jobs)
        order = [ln.variant for ln in lines]
        own = own_options(opts)
        parts.append(f"\n## {setting.title}\n\n{setting.why}.\n")
        if own:
            parts.append("\n" + "; ".join(
                f"{name} is compiled at its own {', '.join(f'{k} {o[k]}' for k in o if o[k] != opts[k])} (its "
                "strategy; the setting's larger value would be baseline)" for name, o in own.items())
                + ", against the same baseline.\n")
        command = "\n".join(f"- `{c}`" for c in commands)
        if not framed:
            parts.append("\nThe frontier of this setting was not compiled in this run (`--frontier-settings`): "
                         "the table is `vgprscope compare` without `--frontier`.\n\n"
                         f"Commands:\n\n{command.replace(' --frontier', '')}\n\n")
            body = tables_md({arch_name: lines}, machine, "")
            parts.append("\n".join(ln for ln in body.splitlines() if not ln.startswith("Machine:")) + "\n")
            continue
        fronts = {ln.variant: ln.frontier for ln in lines if ln.frontier is not None}
        fixed, budget, rows = tradeoff(lines, fronts, amd, unit)
        parts.append("\n### What the measurement shows\n\n")
        parts.append("".join(f"- {s}\n" for s in findings(arch_name, fixed, budget, rows, amd, unit, lines,
                                                            opts.get("waves_per_eu"))))
        parts.append("\n### Seed 002's tradeoff table, measured\n\n"
                     f"Spills are {spill_word(amd)}, all kernels of a strategy summed"
                     + (" (in loop: spill instructions inside a loop)" if amd else "") + ". "
                     "Spills avoided compare with baseline at the same level. The next level is that of the "
                     "strategy's most limited kernel. Extra bytes: the traffic model's read + written bytes "
                     "minus baseline's.\n\n")
        parts.append(tradeoff_md(arch_name, fixed, budget, rows, amd, unit))
        parts.append("\n### Spills at every level\n\n"
                     + ("Cells: spilled values (spill instructions inside loops); `fails`: the level did not "
                        "compile (its error is in `vgprscope frontier`).\n\n" if amd else
                        "Cells: spill store + load bytes per thread; `fails`: ptxas refused the cap (its error "
                        "is in `vgprscope frontier`).\n\n")
                     + level_matrix_md(fronts, order, amd))
        headers = ("spill-free occ", "next level")
        extra: Any = {arch_name: {ln.variant: dict(zip(headers, (spill_free_cell(ln.frontier),
                                                            next_level_cell(ln.frontier)))) for ln in lines}}
        parts.append(f"\n### vgprscope compare --frontier\n\nCommands:\n\n{command}\n\n")
        body = tables_md({arch_name: lines}, machine, "", headers, extra)
        # the report's own machine line stands once, at the top
        parts.append("\n".join(ln for ln in body.splitlines() if not ln.startswith("Machine:")) + "\n")
        charted.append((setting, fronts, order, amd, unit))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    png = out / f"compare-{arch_name}.png"
    if charted:
        chart(arch_name, charted, png)
        parts.append(f"\n![spills against occupancy level per strategy](compare-{arch_name}.png)\n")
        written.append(png)
    md = out / f"compare-{arch_name}.md"
    atomic_write(md, "".join(parts))
    return [md, *written]
