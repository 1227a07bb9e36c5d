"""``vgprscope archs`` and ``vgprscope variants`` as library calls: what the tool knows, without compiling
anything. Each returns a frozen result the command prints (``render``) and a program reads (``as_dict``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.archs import ARCHS, Arch

if TYPE_CHECKING:
    from ..flashattn.variants import Variant
    from ..report.formats import Column

RULES_DOC = "docs/occupancy-rules.md"
FORMATS = ("table", "md", "csv", "json")

ARCH_NOTES = ["[1] calculator only: the installed Triton has no such target mode (vgprscope occupancy works)"]
ARCH_LEGEND = (f"GPU: gfx archs are AMD's (RDNA in WGP mode), sm archs NVIDIA's; max occ: waves per SIMD x SIMDs per CU (AMD: 64-wide waves on CDNA, RDNA as named), warps (32 "
               f"threads) per SM (NVIDIA); registers: per lane of a SIMD (AMD; +AGPR: shared with the AGPRs) or per SM (NVIDIA); per wave: "
               f"the VGPRs (v) + AGPRs (a) a wave, or the registers a thread, may use; granule: the allocation unit; "
               f"LDS KiB: per CU (SM) / per workgroup (block); Triton: whether the installed Triton compiles for "
               f"it. Rules and sources: {RULES_DOC}")


@dataclass(frozen=True)
class ArchList:
    """Every arch the occupancy rules know, with the constants every number comes from."""

    archs: tuple[Arch, ...]

    def rows(self) -> list[dict[str, Any]]:
        """Each arch's constants as a person reads them (markdown, CSV, --wide), in its vendor's words."""
        from ..report.vendor_words import words_of

        return [words_of(a.vendor).arch_row(a) for a in self.archs]

    def as_dict(self) -> list[dict[str, Any]]:
        """``--format json``: each arch's name, vendor and every constant of its table."""
        return [{"name": a.name, "vendor": a.vendor.value} | asdict(a) for a in self.archs]

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1)

    def render(self, fmt: str = "table", wide: bool = False) -> str:
        """The archs as ``archs --format`` prints them: table, md, csv or json."""
        from ..report.formats import build_table, render_table

        def table() -> str:
            t = build_table(self.rows(), _arch_columns(self), title="archs: the constants of every occupancy rule",
                            wide=wide)
            return render_table(t, footnotes=() if wide else ARCH_NOTES, notes=[ARCH_LEGEND] if not wide else
                                [f"Rules and sources: {RULES_DOC}"], wide=wide)

        return _render(fmt, self.rows, self.as_dict, table)


@dataclass(frozen=True)
class VariantList:
    """The attention variants of a kernel directory (or the bundled ones): what each trades, its kernels and
    knobs, its defaults."""

    directory: Path
    variants: tuple[Variant, ...]

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": v.name, "strategy": v.strategy, "seed": v.seed, "trades": v.trades,
                 "kernels": ", ".join(v.kernels), "knobs": ", ".join(v.knobs) or "-"} for v in self.variants]

    def as_dict(self) -> list[dict[str, Any]]:
        """``--format json``: each variant's names, kernels, knobs, defaults (per arch and head dim too), its file
        and the hash of its source."""
        return [{"name": v.name, "strategy": v.strategy, "seed": v.seed, "trades": v.trades,
                 "kernels": list(v.kernels), "knobs": list(v.knobs), "defaults": dict(v.defaults),
                 "defaults_for": [{"arch": list(r.archs), "head_dim": list(r.head_dims) if r.head_dims else None,
                                   "set": dict(r.values)} for r in v.defaults_for],
                 "file": v.file.name, "source_hash": v.source_hash} for v in self.variants]

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1)

    def render(self, fmt: str = "table", wide: bool = False) -> str:
        """The variants as ``variants --format`` prints them: table, md, csv or json."""
        from ..report.formats import Column, Footnotes, build_table, render_table

        def table() -> str:
            # what each variant trades is as long as its strategy: a footnote, so that a row keeps to two lines
            notes = Footnotes()
            columns = [
                Column("name", lambda r: r["name"]),
                # the design note a variant came from: the project's history, not what a user chooses by (--wide)
                Column("seed", lambda r: r["seed"], wide_only=True),
                Column("strategy (what it trades: footnote)",
                       lambda r: f"{r['strategy']} {notes.ref(r['name'] + ': ' + r['trades'])}",
                       wrap=True, default_only=True),
                Column("kernels", lambda r: r["kernels"], wide_only=True),
                Column("knobs (--knob)", lambda r: r["knobs"], wide_only=True),
                Column("strategy", lambda r: r["strategy"], wide_only=True),
                Column("trades", lambda r: r["trades"], wide_only=True),
            ]
            t = build_table(self.rows(), columns, title=f"variants ({self.directory})", wide=wide)
            return render_table(t, footnotes=notes, wide=wide)

        return _render(fmt, self.rows, self.as_dict, table)


def archs() -> ArchList:
    """The archs the occupancy rules know (``vgprscope archs``); the rules and their sources:
    docs/occupancy-rules.md."""
    return ArchList(tuple(ARCHS.values()))


def variants(kernel_dir: str | Path | None = None) -> VariantList:
    """The attention variants of ``kernel_dir`` (None: the bundled ones), nothing compiled (``vgprscope
    variants``). A directory that is not one is a UsageError naming it."""
    from ..core.fsutil import resolve_input
    from ..flashattn import loader
    from ..flashattn.variants import load_variants

    directory = resolve_input(kernel_dir, "kernel directory") if kernel_dir else loader.BUNDLED_DIR
    return VariantList(directory, tuple(load_variants(directory).values()))


def _gpu_short(description: str) -> str:
    """The GPU's name without what the arch column and the legend say: the vendor (gfx is AMD, sm NVIDIA)
    and RDNA's WGP mode."""
    return description.removeprefix("AMD ").removeprefix("NVIDIA ").removesuffix(", WGP mode")


def _arch_columns(found: ArchList) -> list[Column]:
    from ..report.formats import Column
    from ..report.vendor_words import words_of

    cells = {a.name: words_of(a.vendor).arch_cells(a) for a in found.archs}

    def c(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: cells[r["arch"]][key]

    def c_wide(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: str(r[key])

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
    return compact + [Column(k, c_wide(k), wide_only=True) for k in list(found.rows()[0])[1:]]


def _render(fmt: str, rows: Callable[[], Sequence[dict[str, Any]]], as_json: Callable[[], Any],
            table: Callable[[], str]) -> str:
    """One of FORMATS, only the one asked for built (the terminal table costs the most)."""
    if fmt == "json":
        return json.dumps(as_json(), indent=1)
    if fmt == "md":
        found = list(rows())
        cols = list(found[0]) if found else []
        cell = lambda v: str(v).replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        return "\n".join(lines + ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in found]) + "\n"
    if fmt == "csv":
        found = list(rows())
        buf = io.StringIO()
        if found:
            w = csv.DictWriter(buf, fieldnames=list(found[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(found)
        return buf.getvalue()
    if fmt == "table":
        return table()
    from ..core.errors import UsageError

    raise UsageError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
