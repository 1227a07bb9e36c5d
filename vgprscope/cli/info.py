"""``vgprscope archs`` and ``vgprscope variants``: what the tool knows, without compiling anything."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from .common import emit, handles_errors
from .options import Format, FormatOpt, KernelDirOpt, OutputOpt, WideOpt

KIB = 1024
RULES_DOC = "docs/occupancy-rules.md"


def _arch_rows() -> list[dict[str, Any]]:
    """Every arch constant a person reads, as written in markdown, CSV and --wide (each row in its
    vendor's words)."""
    from ..core.archs import ARCHS
    from ..report.vendor_words import words_of

    return [words_of(a.vendor).arch_row(a) for a in ARCHS.values()]


def _arch_compact(name: str) -> dict[str, str]:
    """The default view's cells of one arch: the same constants, shorter."""
    from ..core.archs import ARCHS
    from ..report.vendor_words import words_of

    a = ARCHS[name]
    return words_of(a.vendor).arch_cells(a)


ARCH_NOTES = ["[1] calculator only: the installed Triton has no such target mode (vgprscope occupancy works)"]
ARCH_LEGEND = (f"GPU: gfx archs are AMD's (RDNA in WGP mode), sm archs NVIDIA's; max occ: waves per SIMD x SIMDs per CU (AMD: 64-wide waves on CDNA, RDNA as named), warps (32 "
               f"threads) per SM (NVIDIA); registers: per lane of a SIMD (AMD; +AGPR: shared with the AGPRs) or per SM (NVIDIA); per wave: "
               f"the VGPRs (v) + AGPRs (a) a wave, or the registers a thread, may use; granule: the allocation unit; "
               f"LDS KiB: per CU (SM) / per workgroup (block); Triton: whether the installed Triton compiles for "
               f"it. Rules and sources: {RULES_DOC}")


def _gpu_short(description: str) -> str:
    """The GPU's name without what the arch column and the legend say: the vendor (gfx is AMD, sm NVIDIA)
    and RDNA's WGP mode."""
    return description.removeprefix("AMD ").removeprefix("NVIDIA ").removesuffix(", WGP mode")


def _arch_columns():
    from ..report.formats import Column

    c = lambda key: (lambda r: _arch_compact(r["arch"])[key])  # noqa: E731
    compact = [
        Column("arch", lambda r: r["arch"]),
        Column("GPU", lambda r: _gpu_short(r["description"]), wrap=True, default_only=True),
        Column("max occ", c("occ"), wrap=True, default_only=True),
        Column("registers", c("regs"), wrap=True, default_only=True),
        Column("per wave", c("per_wave"), default_only=True, drop=1),
        Column("granule", c("granule"), default_only=True, drop=0),
        Column("LDS KiB", c("lds"), default_only=True),
        Column("Triton", c("compiles"), default_only=True),
    ]
    keys = list(_arch_rows()[0])[1:]
    return compact + [Column(k, lambda r, k=k: str(r[k]), wide_only=True) for k in keys]


def _arch_json() -> list[dict[str, Any]]:
    from dataclasses import asdict

    from ..core.archs import ARCHS

    return [{"name": a.name, "vendor": a.vendor.value} | asdict(a) for a in ARCHS.values()]


def _md(rows: list[dict[str, Any]]) -> str:
    cols = list(rows[0]) if rows else []
    cell = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


def _render(rows: list[dict[str, Any]], fmt: Format, as_json: Any, table) -> str:
    """``table()``: the terminal view, built only when it is the format asked for."""
    if fmt is Format.json:
        return json.dumps(as_json, indent=1)
    if fmt is Format.md:
        return _md(rows)
    if fmt is Format.csv:
        return _csv(rows)
    return table()


@handles_errors
def archs_cmd(format: FormatOpt = Format.table, output: OutputOpt = None, wide: WideOpt = False) -> None:
    """The arch constants every number comes from; the rules and their sources: docs/occupancy-rules.md."""
    from ..report.formats import build_table, render_table

    rows = _arch_rows()

    def table() -> str:
        t = build_table(rows, _arch_columns(), title="archs: the constants of every occupancy rule", wide=wide)
        return render_table(t, footnotes=() if wide else ARCH_NOTES, notes=[ARCH_LEGEND] if not wide else
                            [f"Rules and sources: {RULES_DOC}"], wide=wide)

    emit(_render(rows, format, _arch_json(), table), output)


@handles_errors
def variants_cmd(format: FormatOpt = Format.table, output: OutputOpt = None, kernel_dir: KernelDirOpt = None,
                 wide: WideOpt = False) -> None:
    """The attention variants: strategy, seed, what each trades, and its kernels (nothing is compiled)."""
    from ..core.fsutil import resolve_input
    from ..flashattn import loader
    from ..flashattn.variants import load_variants
    from ..report.formats import Column, Footnotes, build_table, render_table

    directory = (resolve_input(kernel_dir, "kernel directory") if kernel_dir else loader.BUNDLED_DIR)
    variants = load_variants(directory)
    rows = [{"name": v.name, "strategy": v.strategy, "seed": v.seed, "trades": v.trades,
             "kernels": ", ".join(v.kernels), "knobs": ", ".join(v.knobs) or "-"} for v in variants.values()]
    as_json = [{"name": v.name, "strategy": v.strategy, "seed": v.seed, "trades": v.trades,
                "kernels": list(v.kernels), "knobs": list(v.knobs), "defaults": dict(v.defaults),
                "defaults_for": [{"arch": list(r.archs), "head_dim": list(r.head_dims) if r.head_dims else None,
                                  "set": dict(r.values)} for r in v.defaults_for],
                "file": v.file.name,
                "source_hash": v.source_hash} for v in variants.values()]

    def table() -> str:
        # what each variant trades is as long as its strategy: a footnote, so that a row keeps to two lines
        notes = Footnotes()
        columns = [
            Column("name", lambda r: r["name"]),
            # the design note a variant came from: the project's history, not what a user chooses by (--wide)
            Column("seed", lambda r: r["seed"], wide_only=True),
            Column("strategy (what it trades: footnote)", lambda r: f"{r['strategy']} {notes.ref(r['name'] + ': ' + r['trades'])}",
                   wrap=True, default_only=True),
            Column("kernels", lambda r: r["kernels"], wide_only=True),
            Column("knobs (--knob)", lambda r: r["knobs"], wide_only=True),
            Column("strategy", lambda r: r["strategy"], wide_only=True),
            Column("trades", lambda r: r["trades"], wide_only=True),
        ]
        t = build_table(rows, columns, title=f"variants ({directory})", wide=wide)
        return render_table(t, footnotes=notes, wide=wide)

    emit(_render(rows, format, as_json, table), output)


def register(app: Any) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command("archs")(archs_cmd)
    app.command("variants")(variants_cmd)
