"""The frontier as a terminal table, markdown, CSV and JSON: levels per kernel, then one summary line each."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...backends import backend_of_usage
from ...core.records import SCHEMA_VERSION
from ...report.machine import Machine
from ...report.usage_text import spills_level_text, spills_next_text
from ...report.vendor_words import VENDOR_WORDS, VendorWords, words_of_unit
from . import split_view
from .core import KernelFrontier, Level, VariantFrontier
from .split import given, workers_given
from .summary import summary

_UNIT_SHORT = {w.unit: w.unit_short for w in VENDOR_WORDS.values()}


@dataclass(frozen=True)
class _Row:
    kf: KernelFrontier
    level: Level
    index: int  # the row's place among its kernel's rows: the first names the variant, the second the kernel


def _rows(frontiers: Sequence[KernelFrontier]) -> list[_Row]:
    """Each kernel's uncapped compile first, then its levels and bisection probes, fewest waves/blocks first."""
    out = []
    for kf in frontiers:
        levels = sorted([*kf.levels, *kf.probes], key=lambda lv: (lv.plan.setting or 0) if kf.split else
                        (lv.plan.target, -lv.plan.budget))
        if kf.uncapped is not None:
            levels.insert(0, kf.uncapped)
        out += [_Row(kf, lv, i) for i, lv in enumerate(levels)]
    return out


def _groups(frontiers: Sequence[KernelFrontier]) -> dict[str, list[KernelFrontier]]:
    """arch -> its kernels, in the order they came."""
    out: dict[str, list[KernelFrontier]] = {}
    for kf in frontiers:
        out.setdefault(kf.arch, []).append(kf)
    return out


def _shared_config(kfs: Sequence[KernelFrontier]) -> tuple[str, dict[int, str]]:
    """(the config words every kernel of a table shares, each kernel's own words by id)."""
    from ...report.labels import common_config

    labels = [_config_label(kf) for kf in kfs]
    # common_config keeps a bare word with the value it names ("cfg 1/6"): no dangling "cfg" in the title
    shared, rest = common_config(labels) if len(labels) > 1 else (" ".join(labels), ["-"] * len(labels))
    return shared, {id(kf): "" if own == "-" else own for kf, own in zip(kfs, rest)}


def _config_label(kf: KernelFrontier) -> str:
    """The spec's config without the knob the frontier varies."""
    from dataclasses import fields, is_dataclass, replace

    cfg = kf.config
    if is_dataclass(cfg) and kf.knob in {f.name for f in fields(cfg)}:
        cfg = replace(cfg, **{kf.knob: None})
    return cfg.short() if hasattr(cfg, "short") else str(cfg)


# ---- cells -------------------------------------------------------------------------------------------


def _kernel(r: _Row, own: dict[int, str] | None = None) -> str:
    """The variant on a kernel's first row, the kernel (when it is not named like the variant) on the second,
    then the config words this kernel does not share with the rest of the table."""
    lines = [r.kf.variant]
    if r.kf.kernel != r.kf.variant:
        lines.append(f" {r.kf.kernel}")
    if own and own.get(id(r.kf)):
        lines.append(f" {own[id(r.kf)]}")
    return lines[r.index] if r.index < len(lines) else ""


def _name(kf: KernelFrontier) -> str:
    return kf.variant if kf.kernel == kf.variant else f"{kf.variant} {kf.kernel}"


def _setting(r: _Row) -> str:
    lv = r.level
    mark = "*" if lv.probe else ""
    return "-" if lv.plan.setting is None else f"{lv.plan.setting}{mark}"


def _plan(lv: Level, value: int) -> str:
    """A level's target or budget; '-' for the uncapped compile, which has neither."""
    return "-" if lv.uncapped else str(value)


def _spills(lv: Level) -> str:
    u = lv.record.usage if lv.ok else None
    return "-" if u is None else spills_level_text(u)


def _insts(lv: Level) -> str:
    """Spill instructions (in loops), where the compiler counts them (AMD)."""
    u = lv.record.usage if lv.ok else None
    f = backend_of_usage(u).figures(u) if u is not None else None
    if f is None or f.spill_insts is None:
        return "-"
    return f"{f.spill_insts} ({f.spill_insts_in_loop})"


def _scratch(lv: Level) -> str:
    u = lv.record.usage
    return "-" if u is None else str(backend_of_usage(u).figures(u).scratch_bytes)


def _loop(lv: Level) -> str:
    """The gate loop's matrix share and scratch bytes per trip ('12% 548B'); '?' where its assembly was not
    read, '-' where the kernel has no loop or did not compile."""
    if not lv.ok:
        return "-"
    f = lv.loop_figures()
    if f["loop_spill_bytes"] is None:
        return "?"
    if f["loop_matrix_share"] is None and f["loop_lines"] is None and not f["loop_spill_bytes"]:
        return "-"
    share = "" if f["loop_matrix_share"] is None else f"{f['loop_matrix_share']}% "
    return f"{share}{f['loop_spill_bytes']}B"


def _occ(lv: Level) -> str:
    if lv.reached is None:
        return "-"
    others = [x for x in lv.limiters if x not in ("vgpr", "regs")]
    lim = f" {','.join(others)}" if others and lv.reached < lv.plan.target else ""
    return f"{lv.reached}{lim}"


def _num(x: Any) -> str:
    return "-" if x is None else str(x)


def _columns(words: VendorWords, notes: Any, own: dict[int, str] | None = None, knob_column: bool = True,
             wide: bool = False) -> list:
    """The level table's columns. The kernel is named by a title line above its levels (the default
    view) or, with ``wide``, in a column of its own. ``knob_column`` False: the knob's setting equals the
    level on every row (AMD: waves_per_eu N asks for N waves/SIMD), said once in the legend."""
    from ...report.formats import Column

    def status(r: _Row) -> str:
        return "ok" if r.level.ok else f"✗ {notes.ref(r.level.record.status)}"

    cols = [Column("kernel", lambda r: _name(r.kf), wide_only=True),
            Column("config", lambda r: _config_label(r.kf), wide_only=True)] if wide else []
    if knob_column:
        cols.append(Column(words.knob_header, _setting, justify="right"))
    cols += [
        Column("level", lambda r: _plan(r.level, r.level.plan.target), justify="right"),
        Column("budget", lambda r: _plan(r.level, r.level.plan.budget), justify="right"),
        Column("alloc", lambda r: _num(r.level.allocation), justify="right"),
        Column("used", lambda r: _num(r.level.figures()["used"]), justify="right", wide_only=True),
        Column(words.spills_header, lambda r: _spills(r.level), justify="right"),
    ]
    if words.spill_insts_header:
        cols.append(Column(words.spill_insts_header, lambda r: _insts(r.level), justify="right"))
    cols += [
        Column(words.scratch_header, lambda r: _scratch(r.level), justify="right"),
        Column("hot loop", lambda r: _loop(r.level), justify="right"),
        Column("occupancy", lambda r: _occ(r.level), justify="right"),
        Column("limiter", lambda r: ",".join(r.level.limiters) or "-", wide_only=True),
        Column("status", status),
    ]
    return cols


def legend(words: VendorWords, knob_column: bool = True) -> str:
    """What the level table's columns say, in the vendor's words (with or without the knob's column)."""
    return words.frontier_legend[0 if knob_column else 1].format(unit=words.unit) + "; " + _LOOP_LEGEND.format(
        lane=words.lane_word)


_LOOP_LEGEND = ("hot loop: one trip of the loop whose own body holds the most matrix instructions: their share "
                "of its instructions, and the scratch bytes it loads and stores per {lane}")


def _title(kf: KernelFrontier, own: dict[int, str]) -> list[tuple[str, str | None]]:
    """The title line above a kernel's levels: variant and kernel, then the config words that are its own."""
    words = own.get(id(kf))
    return [(f"{_name(kf)}{'  ' + words if words else ''}", "bold")]


# ---- renderers ---------------------------------------------------------------------------------------


def tables_text(frontiers: Sequence[KernelFrontier], machine: Machine, *, wide: bool = False,
                width: int | None = None) -> str:
    """One table per arch: the kernel's name (and its own config words) on a line across the table, its
    levels under it; every column with ``wide``, the kernel and config then in columns."""
    from ...report.formats import Footnotes, build_table, output_width, render_table, wrap

    width = width or output_width()
    parts = [machine.text(width) + "\n"]
    for arch, kfs in _groups([kf for kf in frontiers if not kf.split]).items():
        notes = Footnotes()
        words = words_of_unit(kfs[0].unit)
        shared, own = _shared_config(kfs)
        rows = _rows(kfs)
        # the uncapped row has no setting: it alone does not need the knob's column
        knob_column = wide or any(r.level.plan.setting != r.level.plan.target or r.level.probe
                                  for r in rows if not r.level.uncapped)
        title = f"frontier: {arch}" + (f" (every config: {shared})" if shared else "")
        table = build_table(rows, _columns(words, notes, own, knob_column, wide), title=title, wide=wide,
                            row_style=lambda r: None if r.level.ok else "red",
                            section=lambda r: id(r.kf), title_of=None if wide else lambda r: _title(r.kf, own))  # noqa: B023 (used in this iteration)
        lines = [wrap(f"{_name(kf)}{' ' + own[id(kf)] if own.get(id(kf)) else ''}: {summary(kf)}", width, "    ")
                 for kf in kfs]
        parts.append(render_table(table, footnotes=notes, notes=[legend(words, knob_column)],
                                  wide=wide, width=width))
        parts.append("\n".join(lines) + "\n\n")
    parts += split_view.tables_text([kf for kf in frontiers if kf.split], width, wide)
    return "".join(parts).rstrip("\n") + "\n"


MD_HEADERS = ["kernel", "knob", "setting", "level", "budget", "allocation", "used", "VGPR spills", "SGPR spills",
              "spill st/ld B", "spill insts", "in loop", "scratch / stack B", "loop matrix %", "loop scratch B/trip",
              "loop scratch insts", "occupancy", "limiters", "status"]


def _md_row(r: _Row) -> list[str]:
    lv, f = r.level, r.level.figures()
    st_ld = "-" if f["spill_store_bytes"] is None else f"{f['spill_store_bytes']}/{f['spill_load_bytes']}"
    knob = lv.plan.knob + (" (bisection)" if lv.probe else " (uncapped)" if lv.uncapped else "")
    return [_kernel(r), knob, _num(lv.plan.setting), _plan(lv, lv.plan.target), _plan(lv, lv.plan.budget),
            _num(lv.allocation), _num(f["used"]), _num(f["vgpr_spill"]),
            _num(f["sgpr_spill"]), st_ld, _num(f["spill_insts"]), _num(f["spill_insts_in_loop"]),
            _num(f["scratch_bytes"]), _num(f["loop_matrix_share"]), _num(f["loop_spill_bytes"]),
            _num(f["loop_scratch_insts"]), _num(lv.reached), ",".join(lv.limiters) or "-", lv.record.status]


def tables_md(frontiers: Sequence[KernelFrontier], machine: Machine, title: str = "") -> str:
    from ...report.formats import md_table

    out = [f"## {title}\n\n" if title else "", f"{machine.md()}\n"]
    for arch, kfs in _groups([kf for kf in frontiers if not kf.split]).items():
        out.append(f"\n### {arch} ({kfs[0].unit})\n\n" + md_table(["config", *MD_HEADERS],
                   [[_config_label(r.kf) if r.index == 0 else "", *_md_row(r)] for r in _rows(kfs)]))
        out.append("\n" + "".join(f"- {_name(kf)} ({_config_label(kf)}): {summary(kf)}\n" for kf in kfs))
    out.append(split_view.tables_md([kf for kf in frontiers if kf.split]))
    return "".join(out)


def to_json(frontiers: Sequence[KernelFrontier], machine: Machine, command: str = "frontier") -> str:
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": command,
           "machine": machine.as_dict(), "triton_version": machine.triton,
           "kernels": [kernel_json(kf) for kf in frontiers]}
    return json.dumps(doc, indent=2, default=str) + "\n"


def kernel_json(kf: KernelFrontier) -> dict[str, Any]:
    """A kernel's frontier as the JSON exports write it: its data, and its summary after the bisection's
    answer."""
    out: dict[str, Any] = {}
    for k, v in kf.as_dict().items():
        out[k] = v
        if k == "min_spill_free_maxnreg":
            out["summary"] = summary(kf)
    return out


def variant_json(vf: VariantFrontier) -> dict[str, Any]:
    """A variant's frontier as ``compare --frontier``'s JSON writes it: its kernels as ``kernel_json``."""
    return vf.as_dict() | {"kernels": [kernel_json(k) for k in vf.kernels]}


def to_csv(frontiers: Sequence[KernelFrontier]) -> str:
    from ...report.formats import dicts_to_csv

    return dicts_to_csv(csv_rows(frontiers))


def csv_rows(frontiers: Sequence[KernelFrontier]) -> list[dict[str, Any]]:
    """The CSV export's rows: one per level (and bisection probe) of each kernel."""
    rows = []
    for r in _rows(frontiers):
        d = {k: v for k, v in r.level.as_dict().items() if k not in ("record", "limiters", "partitions")}
        d["limiters"] = ",".join(r.level.limiters)
        if r.kf.split:  # the register split's columns: each partition's registers, the settings without spills
            d |= {"default_registers": given(r.level, "default"), "worker_registers": workers_given(r.level),
                  "spill_free_settings": ",".join(map(str, r.kf.spill_free_settings))}
        rows.append({"variant": r.kf.variant, "kernel": r.kf.kernel, "arch": r.kf.arch,
                     "config": _config_label(r.kf), **d, "spill_free_occupancy": r.kf.spill_free_occupancy,
                     "min_spill_free_maxnreg": r.kf.min_spill_free_maxnreg, "summary": summary(r.kf)})
    return rows


# ---- compare --frontier cells -----------------------------------------------------------------------------


def spill_free_cell(vf: Any) -> str:
    """'2 w/SIMD' (the variant's most limited kernel), 'none' when a kernel spills at every level, 'split knob'
    where the variant's frontier varies its register split instead (the next cell says which splits are free)."""
    if vf is None:
        return "-"
    if vf.limiting is not None and not any(lv.ok for lv in vf.limiting.levels):
        return "-"
    if vf.limiting is not None and vf.limiting.split:
        return "split knob"
    if vf.spill_free_occupancy is None:
        return "none"
    unit = vf.limiting.unit if vf.limiting else ""
    return f"{vf.spill_free_occupancy} {_UNIT_SHORT.get(unit, unit)}"


def split_runs(k: Any) -> str:
    """A split frontier's spill-free settings as runs of neighbouring settings: '24-56, 120'."""
    runs: list[list[int]] = []
    last_free = False
    for lv in k.levels:
        free = lv.spill_free and lv.plan.setting is not None
        if free:
            if last_free:
                runs[-1].append(lv.plan.setting)
            else:
                runs.append([lv.plan.setting])
        last_free = free
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


def next_level_cell(vf: Any) -> str:
    """'3: 233 (124 loop)': the next level of the limiting kernel and its spills (NVIDIA: bytes); a split
    frontier's spill-free settings ('producer_regs 24-56 spill-free'); 'compiles at no level' where nothing
    compiled (an arch the variant cannot target)."""
    if vf is None or vf.limiting is None:
        return "-"
    k = vf.limiting
    if not any(lv.ok for lv in k.levels):
        return "compiles at no setting" if k.split else "compiles at no level"
    if k.split:
        free = split_runs(k)
        return f"{k.knob} {free} spill-free" if free else f"{k.knob}: spills at every setting"
    if vf.spill_free_occupancy is None:
        return "spills at every level"
    nxt = k.next_level
    if nxt is None:
        return "top level"
    if not nxt.ok:
        return f"{nxt.plan.target}: fails"
    u = nxt.record.usage
    return f"{nxt.plan.target}: {spills_next_text(u)}"


def _point(kf: KernelFrontier, lv: Level) -> Any:
    """A level as a chart point: x the registers it was allowed (its budget; the uncapped compile: what it
    allocated; a split frontier: the knob's setting), y the occupancy it reached; red where it spills, with the
    hot loop's spill bytes per trip (else the spill figure)."""
    from ...report import svg

    f = lv.figures()
    x = (lv.plan.setting or 0) if kf.split else (lv.allocation or 0) if lv.uncapped else lv.plan.budget
    trip = f.get("loop_spill_bytes")
    bad = not lv.spill_free
    text = ("✗" if not lv.ok else f"{trip} B/trip" if trip else f"spills {lv.spills}") if bad else ""
    tip = (f"{_name(kf)}: {kf.knob} {lv.plan.setting if lv.plan.setting is not None else '-'}, {f['used']} registers, "
           f"{lv.reached} {kf.unit}, " + (lv.record.status if not lv.ok else f"spills {lv.spills}"
                                           + (f", {trip} B/trip in the hot loop" if trip is not None else "")))
    return svg.Point(x, lv.reached or 0, bad, text, tip)


def to_html(frontiers: Sequence[KernelFrontier], machine: Machine, command: str,
            title: str = "vgprscope frontier") -> str:
    """The HTML report: per arch, each kernel's compiled levels as points (registers or the split knob against
    the occupancy reached; red where they spill, with the spill bytes per trip), each kernel's one-line
    summary, then the markdown export's tables (the same levels)."""
    from ...report import page, svg

    sections = []
    for arch, kfs in _groups(frontiers).items():
        split = kfs[0].split
        series = [(f"{_name(kf)} {_config_label(kf)}".strip(),
                   [_point(kf, lv) for lv in (*kf.levels, *kf.probes, *((kf.uncapped,) if kf.uncapped else ()))
                    if lv.ok or kf.split]) for kf in kfs]
        marks = [(kf.min_spill_free_maxnreg, f"spill-free from maxnreg {kf.min_spill_free_maxnreg}") for kf in kfs
                 if kf.min_spill_free_maxnreg is not None][:1]
        words = words_of_unit(kfs[0].unit)
        chart = svg.points(series, x_label=kfs[0].knob if split else f"{words.register_word} allowed (the level's budget)",
                           y_label=kfs[0].unit, label=f"frontier on {arch}", marks=marks)
        lines = "".join(f"<li><b>{page.esc(_name(kf))}</b> ({page.esc(_config_label(kf))}): "
                        f"{page.esc(summary(kf))}</li>" for kf in kfs)
        sections.append(page.section(f"{arch}: occupancy against {'the split' if split else 'registers'}",
                                     f'<div class="card">{chart}<ul class="facts">{lines}</ul></div>',
                                     f"frontier-{arch}"))
    md = tables_md(frontiers, machine)
    sections.append(page.section("Levels", page.from_markdown(md.split("\n", 1)[-1]), "levels"))
    records = [lv.record for kf in frontiers for lv in (*kf.levels, *kf.probes)]
    return page.document(title, sections, machine=machine, command=command, versions=page.versions_of(records))
