"""The compare tables: one per arch, kernel rows under a variant line, deltas against baseline.

Deltas are the signed change of the value itself against the ``baseline`` variant's line (VGPRs
274 -> 242 is ``-32``), marked better or worse apart from the sign (report/deltas.py, shared with
``check``); in these tables parentheses mean that change and nothing else (an AMD kernel's split of its
registers into arch VGPRs and AGPRs has a column of its own in ``--wide`` and markdown). A value and its
change never part across lines. The default view is compact (units in the headers; the traffic model's
formulas, its notation and the problem it was modelled on under the tables, each in the model's own words:
``VariantLine.traffic``); ``wide`` and markdown show every column.
A table with no ``baseline`` line (a capture's kernels) has no changes to show, and one with no modelled
traffic no traffic column.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...backends import backend_of_usage
from ...core.records import SCHEMA_VERSION, LaunchConfig, Record
from ...report.deltas import Delta, judge, legend, with_delta
from ...report.formats import (
    Footnotes,
    _plain,
    _renumbered,
    add_title,
    alone,
    drop_order,
    md_table,
    new_table,
    render_table,
)
from ...report.labels import LABEL_MAX, common_config
from ...report.machine import Machine
from ...report.refusals import refusal_notes, refusals
from ...report.rows import (
    NEXT_LEGEND,
    SPILLS_LEGEND,
    fmt_lds,
    fmt_scratch,
    fmt_sgpr,
    fmt_spills,
    occupancy_label,
    short_next_step,
)
from ...report.usage_text import usage_words
from ...report.vendor_words import VendorWords
from .core import REFERENCE, VariantLine

# metric, VariantLine attribute, higher is better
DELTA_METRICS = (("regs", "regs", False), ("spills", "spills", False), ("scratch", "scratch", False),
                 ("lds", "lds", False), ("occupancy", "occupancy", True))
_UNIT_SHORT = {"waves/SIMD": "w/SIMD", "blocks/SM": "blk/SM"}

def line_deltas(lines: Sequence[VariantLine]) -> dict[str, dict[str, Delta]]:
    """variant -> metric -> its change against the reference variant's line of the same table; none for
    the reference itself, and none at all when the table has no reference line."""
    ref = next((ln for ln in lines if ln.variant == REFERENCE), None)
    if ref is None:
        return {}
    return {ln.variant: {m: judge(getattr(ln, a), getattr(ref, a), hib) for m, a, hib in DELTA_METRICS}
            for ln in lines if ln is not ref}


TIMING_HEADERS = ("time (ms)", "TFLOP/s", "GB/s")  # compare --bench's columns


def timing_cells(row: Any) -> dict[str, str]:
    """A bench row's cells under ``TIMING_HEADERS``: its time (median ± spread, or why it has none), TFLOP/s
    and GB/s."""
    return dict(zip(TIMING_HEADERS, [row.timing.label() if row.timing else row.status,
                                     f"{row.tflops:.1f}" if row.tflops else "-", f"{row.gbps:.0f}" if row.gbps else "-"]))


def _gb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e9:.2f}"


def _words(lines: Sequence[VariantLine]) -> VendorWords | None:
    """The words of a table's kernels' vendor (a table is one arch): what its columns are called. None:
    nothing compiled."""
    return next((usage_words(r.usage) for ln in lines for r in ln.kernels if r.usage is not None), None)


def _unit(lines: Sequence[VariantLine]) -> str:
    return next((r.occupancy.unit for ln in lines for r in ln.kernels if r.occupancy), "")


def _num(x: Any) -> str:
    return "-" if x is None else str(x)


def _status(status: str, notes: Footnotes | None) -> str:
    if status == "ok" or notes is None:
        return status
    return f"✗ {notes.ref(status)}"


def _total(r: Record) -> str:
    """The registers occupancy sees: AMD's unified VGPR+AGPR total, NVIDIA's registers per thread."""
    u = r.usage
    return "-" if u is None else str(backend_of_usage(u).figures(u).registers)


def _split(r: Record) -> str:
    """``256+21``: an AMD kernel's arch VGPRs and AGPRs (the total is not always their sum: the arch part is
    rounded up to 4 when there are AGPRs)."""
    u = r.usage
    parts = backend_of_usage(u).figures(u).register_parts if u is not None else None
    return "-" if parts is None else "+".join(map(str, parts))


def _name(ln: VariantLine) -> str:
    """A line's name: the variant; for a captured (or cached) launch, its module and kernel."""
    k = ln.kernels[0].kernel
    launch = isinstance(ln.kernels[0].config, LaunchConfig)
    return f"{ln.variant} {k}" if launch and len(ln.kernels) == 1 and k != ln.variant else ln.variant


def _rows(ln: VariantLine, ds: Mapping[str, Delta] | None, extra: Mapping[str, str], extra_headers: Sequence[str],
          notes: Footnotes | None) -> list[tuple[str, dict[str, Any] | None]]:
    """(label, cells by column key) for a variant: its kernels (several only), then the variant line."""
    ds = ds or {}
    out: list[tuple[str, dict[str, Any] | None]] = []
    multi = len(ln.kernels) > 1
    if multi:
        out.append((ln.variant, None))
        for r in ln.kernels:
            occ = r.occupancy
            out.append((f"  {r.kernel}", {
                "variant": ln.variant, "kernel": r.kernel, "config": "", "config_short": "",
                "regs": _total(r), "split": _split(r), "sgprs": fmt_sgpr(r), "spills": fmt_spills(r),
                "scratch": fmt_scratch(r), "lds": fmt_lds(r), "occupancy": occupancy_label(r),
                "occ": "-" if occ is None else str(occ.value),
                "occ_pct": f"{occ.percent:.1f}" if occ else "-", "limiter": ",".join(occ.limiters) if occ else "-",
                "next": occ.next_step if occ else "-",
                "limiter_next": _next(occ, notes) if occ else "-",
                "read": "", "written": "", "gflop": "", "intensity": "", "traffic": "",
                "status": _status(r.status, notes), "status_full": r.status,
                **{h: "" for h in extra_headers}}))
    single = ln.kernels[0] if not multi else None
    occ = single.occupancy if single else None
    t = ln.traffic
    out.append(("  (variant)" if multi else _name(ln), {
        "variant": ln.variant, "kernel": single.kernel if single else "(variant)", "config": ln.config,
        "regs": with_delta(_num(ln.regs), ds.get("regs")), "split": _split(single) if single else "",
        "sgprs": _num(ln.sgprs), "spills": with_delta(_num(ln.spills), ds.get("spills")),
        "scratch": with_delta(_num(ln.scratch), ds.get("scratch")),
        "lds": with_delta(_num(ln.lds), ds.get("lds")),
        "occupancy": with_delta("-" if ln.occupancy is None else f"{ln.occupancy} {_unit([ln])}",
                                ds.get("occupancy")),
        "occ": with_delta(_num(ln.occupancy), ds.get("occupancy")),
        "occ_pct": "-" if ln.occupancy_pct is None else f"{ln.occupancy_pct:.1f}", "limiter": ln.limiter,
        "next": occ.next_step if occ else "-",
        "limiter_next": _next(occ, notes) if occ else ln.limiter,
        "read": "-" if t is None else _gb(t.bytes_read), "written": "-" if t is None else _gb(t.bytes_written),
        "gflop": "-" if t is None else f"{t.flops / 1e9:.0f}", "intensity": "-" if t is None else f"{t.intensity:.0f}",
        "traffic": "-" if t is None else _gb(t.bytes_total), "status": _status(ln.status, notes),
        "status_full": ln.status, **{h: extra.get(h, "-") for h in extra_headers}}))
    return out


def _next(occ, notes: Footnotes | None) -> str:
    short = short_next_step(occ)
    if short is not None or notes is None:
        return short or occ.next_step
    return f"{','.join(occ.limiters) or '-'} {notes.ref(occ.next_step)}"


def _has_reference(lines: Sequence[VariantLine]) -> bool:
    return any(ln.variant == REFERENCE for ln in lines)


def _has_traffic(lines: Sequence[VariantLine]) -> bool:
    return any(ln.traffic is not None for ln in lines)


def _columns(lines: Sequence[VariantLine], extra_headers: Sequence[str], wide: bool,
             with_status: bool, with_spills: bool = True) -> list[tuple[str, str, dict[str, Any]]]:
    """(header, cell key, add_column options) of a table's columns. Changes (Δ) only where the table has
    a baseline line, traffic only where the model covers a line. The default view leaves out status when
    every row is ok and spills when no kernel spills (the title says so); its values and their changes
    never fold (a change stays beside its value), its names fold at spaces only; where it cannot fit,
    ``limiter: next`` is left out first, then the traffic, then LDS / shared memory (``drop``; the table
    says so; columns a command adds on request, --frontier's and --bench's, stay)."""
    words = _words(lines)
    split = words.register_split if words is not None else ""
    d = " (Δ)" if _has_reference(lines) else ""
    traffic = _has_traffic(lines)
    # a table where nothing compiled has no backend's words: the shorter ones
    regs, lds = (words.register_header, words.memory_header) if words else ("regs", "smem B")
    unit = _unit(lines)
    if wide:
        cols = [("variant", "variant", {}), ("kernel", "kernel", {}), ("config", "config", {}),
                (f"VGPRs / regs{d}", "regs", {}), *([(split, "split", {})] if split else []),
                ("SGPRs", "sgprs", {}), (f"spills{d}", "spills", {}),
                (f"scratch / stack B{d}", "scratch", {}), (f"LDS / smem B{d}", "lds", {}),
                (f"occupancy{d}", "occupancy", {}), ("occ %", "occ_pct", {}), ("limiter", "limiter", {}),
                ("next step", "next", {})]
        if traffic:
            cols += [("read GB", "read", {}), ("written GB", "written", {}), ("GFLOP", "gflop", {}),
                     ("FLOP/B", "intensity", {})]
        return cols + [(h, h, {}) for h in extra_headers] + [("status", "status_full", {})]
    fold = {"no_wrap": False}
    spills = [(f"spills{d}", "spills", {})] if with_spills else []
    cols = [("config", "config_short", fold), (f"{regs}{d}", "regs", {}), *spills,
            (f"{lds}{d}", "lds", {"drop": 3}), (f"{_UNIT_SHORT.get(unit, unit) or 'occupancy'}{d}", "occ", {}),
            ("limiter: next", "limiter_next", fold | {"drop": 1})]
    if traffic:
        cols.append(("GB moved", "traffic", {"drop": 2}))
    cols += [(h, h, fold) for h in extra_headers]
    return cols + ([("status", "status", {})] if with_status else [])


def _table(title: str, lines: Sequence[VariantLine], extra: Mapping[str, Mapping[str, str]] | None,
           extra_headers: Sequence[str], wide: bool, notes: Footnotes | None):
    deltas = line_deltas(lines)
    rows = [row for ln in lines
            for row in _rows(ln, deltas.get(ln.variant), (extra or {}).get(ln.variant, {}), extra_headers, notes)]
    shared, rest = common_config([cells["config"] for _, cells in rows if cells and cells["config"]])
    it = iter(rest)
    for _, cells in rows:
        if cells and cells["config"]:
            cells["config_short"] = next(it)
    with_status = any(cells and cells["status_full"] != "ok" for _, cells in rows)
    spill_free = all(not r.usage.spills for ln in lines for r in ln.kernels if r.usage is not None)
    columns = _columns(lines, extra_headers, wide, with_status, with_spills=not spill_free)
    if not wide and set(rest) <= {"-"}:
        columns = [c for c in columns if c[1] != "config_short"]
    said = ([f"every config: {shared}"] if shared else []) + (["no kernel spills"] if spill_free else [])
    heading = f"{title} ({'; '.join(said)})" if said and not wide else title
    table = new_table(heading)
    # names longer than a label column should be wide (a captured kernel's module) become title lines
    titled = not wide and max((len(label) for label, _ in rows), default=0) > LABEL_MAX
    if not wide and not titled:
        table.add_column("variant", overflow="fold")
    drops = []
    for header, _, opts in columns:
        opts = dict(opts)
        rank = opts.pop("drop", None)
        table.add_column(header, **({"no_wrap": True, "overflow": "fold"} | opts))
        if rank is not None:
            drops.append((rank, table.columns[-1]))
    drop_order(table, [c for _, c in sorted(drops, key=lambda x: x[0])])
    last_title = None
    for i, (label, cells) in enumerate(rows):
        if titled:
            if cells is None or not label.startswith("  "):
                if label != last_title:  # the lines of one kernel (its autotune configs) under one title
                    add_title(table, label)
                    last_title = label
                if cells is None:
                    continue
            elif label.startswith("  "):  # a kernel of a multi-kernel line, named in its config cell
                cells = cells | {"config_short": label.strip()}
        elif i and not label.startswith("  "):
            table.rows[-1].end_section = True
        if cells is None:
            if not wide:  # a line of its own across the table: a long variant name takes no column width
                add_title(table, label, "bold")
            continue
        style = None if cells["status_full"] == "ok" else "red"
        table.add_row(*([label] if not wide and not titled else []), *(cells[key] for _, key, _ in columns),
                      style=style)
    return table


VARIANT_LEGEND = ("(variant): a variant of several kernels, its most registers, spills and LDS and its worst "
                  "occupancy")


def traffic_notes(lines: Sequence[VariantLine], wide: bool = False) -> list[str]:
    """Under the tables: the problem(s) the traffic was modelled on, each formula once with the variants it
    is theirs, and the notation the formulas use (each line the model's own words)."""
    modelled = [ln for ln in lines if ln.traffic is not None]
    if not modelled:
        return []
    model = modelled[0].traffic
    bases = list(dict.fromkeys(ln.traffic.basis for ln in modelled if ln.traffic.basis))
    by_formula: dict[str, list[str]] = {}
    for ln in modelled:
        names = by_formula.setdefault(ln.traffic.rule, [])
        if ln.variant not in names:
            names.append(ln.variant)
    what = "read GB, written GB, GFLOP: the traffic model's" if wide else "GB moved: the traffic model's bytes read + written"
    head = f"{what} at {' / '.join(bases) or 'the reference problem'} {model.scope}"
    if not wide:  # the formulas and their notation are a page of their own: under the wide view, not a short table
        return [f"{head.removesuffix(':')} (the formulas: --wide)"]
    return [f"{head}:", *(f"{', '.join(names)}: {formula}" for formula, names in by_formula.items()), model.notation]


def tables_text(per_arch: Mapping[str, list[VariantLine]], machine: Machine, extra_headers: Sequence[str] = (),
                extra=None, *, wide: bool = False, width: int | None = None, refused: Sequence[Record] = ()) -> str:
    """One table per arch (per grid point); the footnotes (numbered across the tables) and the legends once
    at the end: the variants not compared (``refused``: written for other archs, a value outside their
    range), what a change means (where a table has one), the traffic model's problem, formulas and
    notation (where it covers a line and a table shows its column)."""
    from ...report.formats import output_width, wrap

    notes = Footnotes()
    parts = [machine.text(width) + "\n"]
    tables = list(per_arch.items())
    every = [ln for _, lines in tables for ln in lines]
    shown: set[str] = set()  # the columns some table showed (the legends explain those only)
    for arch, lines in tables:
        table = _table(f"vgprscope compare: {arch}", lines, (extra or {}).get(arch), extra_headers, wide,
                       None if wide else notes)
        parts.append(render_table(table, wide=wide, width=width))
        dropped = set(getattr(table, "vgprscope_dropped", ()))
        shown |= {_plain(c.header) for c in table.columns} - dropped
    # the footnotes once, under the last table: those whose marker some table shows (a marker in a column
    # left out for want of width has nothing to annotate), numbered 1, 2, ... across the tables
    import re

    text = "".join(parts[1:])
    kept = [ln for ln in notes.lines() if (m := re.match(r"\[\d+\]", ln)) is None or m.group(0) in text]
    text, kept = _renumbered(text, kept)
    parts[1:] = [text, *(wrap(ln, max(width or output_width(), 20), "    ") + "\n" for ln in kept)]
    legends = refusal_notes(refused)
    if any(_has_reference(lines) for _, lines in tables):
        legends.append(legend(f"the {REFERENCE} variant's line"))
    if not wide:
        if "limiter: next" in shown:
            legends.append(NEXT_LEGEND)
        if any(len(ln.kernels) > 1 for ln in every):
            legends.append(VARIANT_LEGEND)
    if any(_plain(h).startswith("spills") for h in shown):  # what the spills count, in its unit
        legends.append(SPILLS_LEGEND.removeprefix("; "))
    if wide or "GB moved" in shown:
        legends += traffic_notes(every, wide)
    if wide:  # as wide as the widest table (what render_table wraps a wide table's notes to)
        import re

        plain = re.sub(r"\x1b\[[0-9;]*m", "", "".join(parts[1:]))
        width = max((len(ln) for ln in plain.splitlines()), default=0)
    width = max(width or output_width(), 20)
    if alone():  # the tables alone: what was not compiled stays, the legends go
        legends = refusal_notes(refused)
    return "".join(parts) + "".join(wrap(ln, width, "  ") + "\n" for ln in legends)


def tables_md(per_arch: Mapping[str, list[VariantLine]], machine: Machine, title: str = "",
              extra_headers: Sequence[str] = (), extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
              refused: Sequence[Record] = ()) -> str:
    out = [f"## {title}\n" if title else "", f"{machine.md()}\n"]
    for arch, lines in per_arch.items():
        deltas = line_deltas(lines)
        columns = _columns(lines, extra_headers, True, True)
        rows = [[_plain(cells[key]) for _, key, _ in columns]
                for ln in lines
                for _, cells in _rows(ln, deltas.get(ln.variant), (extra or {}).get(arch, {}).get(ln.variant, {}),
                                      extra_headers, None)
                if cells is not None]
        out.append(f"\n### {arch}\n\n" + md_table([h for h, _, _ in columns], rows))
    every = [ln for lines in per_arch.values() for ln in lines]
    out += [f"\n{note}\n" for note in refusal_notes(refused)]
    if any(_has_reference(lines) for lines in per_arch.values()):
        out.append(f"\n{legend(f'the `{REFERENCE}` variant line')}.\n")
    modelled = [ln.traffic for ln in every if ln.traffic is not None]
    bases = list(dict.fromkeys(t.basis for t in modelled if t.basis))
    if bases:
        out.append(f"\nread / written GB, GFLOP, FLOP/B: the traffic model's at {' / '.join(bases)} "
                   f"({modelled[0].md_scope}).\n")
    return "".join(out)


def _delta_json(d: Delta) -> dict[str, Any]:
    return {"change": d.change, "verdict": d.verdict.value}


def to_json(per_arch: Mapping[str, list[VariantLine]], machine: Machine, extra=None,
            refused: Sequence[Record] = ()) -> str:
    """Every field; ``deltas``: per metric the signed change against the baseline variant and its verdict;
    ``refused``: the variants' rows not compared (written for other archs, a value outside their range)."""
    from ..frontier.view import variant_json

    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": "compare",
                           "machine": machine.as_dict(), "reference": REFERENCE, "archs": {}}
    for arch, lines in per_arch.items():
        deltas = line_deltas(lines)
        doc["archs"][arch] = [{
            "variant": ln.variant, "config": ln.config, "status": ln.status, "regs": ln.regs, "sgprs": ln.sgprs,
            "spills": ln.spills, "scratch": ln.scratch, "lds": ln.lds, "occupancy": ln.occupancy,
            "occupancy_pct": ln.occupancy_pct, "limiter": ln.limiter,
            "deltas": {m: _delta_json(d) for m, d in deltas.get(ln.variant, {}).items()},
            "traffic": None if ln.traffic is None else {
                "bytes_read": ln.traffic.bytes_read, "bytes_written": ln.traffic.bytes_written,
                "flops": ln.traffic.flops, "intensity": ln.traffic.intensity, "formula": ln.traffic.formula},
            "kernels": [r.as_dict() for r in ln.kernels],
            **({"bench": dict(extra[arch][ln.variant])} if extra and ln.variant in extra.get(arch, {}) else {}),
            **({"frontier": variant_json(ln.frontier)} if ln.frontier is not None else {}),
        } for ln in lines]
    if refused:
        doc["refused"] = [{"variant": r.variant, "kernel": r.kernel, "arch": r.arch, "config": r.config.as_dict(),
                           "reason": r.refused} for r in refused]
    return json.dumps(doc, indent=2, default=str) + "\n"


# a line's traffic fields in the CSV (``traffic_<field>``): the JSON's, and the table's GB moved (bytes_total)
TRAFFIC_FIELDS = ("bytes_read", "bytes_written", "bytes_total", "flops", "intensity", "formula")


def _line_fields(table: str, ln: VariantLine, deltas: Mapping[str, Delta], with_frontier: bool,
                 bench: Mapping[str, str] | None) -> dict[str, Any]:
    """What the table and the JSON say of a kernel's line, flat: ``line_<figure>`` (the line's own figures,
    its table's key ``line_table``), ``delta_<metric>`` and ``delta_<metric>_verdict`` against the baseline
    variant's line (empty for the baseline itself and where a table has none), ``traffic_<field>`` (empty
    where no model covers the line); with a frontier, ``frontier_<field>``; with timings, ``bench_<header>``.
    Every row has the delta and traffic columns, so that frames of two compares concatenate."""
    t = ln.traffic
    d: dict[str, Any] = {"line_table": table, "line_config": ln.config, "line_status": ln.status,
                         "line_regs": ln.regs, "line_sgprs": ln.sgprs, "line_spills": ln.spills,
                         "line_scratch": ln.scratch, "line_lds": ln.lds, "line_occupancy": ln.occupancy,
                         "line_occupancy_pct": ln.occupancy_pct, "line_limiter": ln.limiter}
    for metric, _, _ in DELTA_METRICS:
        delta = deltas.get(metric)
        d[f"delta_{metric}"] = delta.change if delta is not None else None
        d[f"delta_{metric}_verdict"] = delta.verdict.value if delta is not None else None
    # the model's numbers as floats (a formula may give an int): one type per column
    d |= {f"traffic_{k}": None if t is None else (v if isinstance(v := getattr(t, k), str) else float(v))
          for k in TRAFFIC_FIELDS}
    if with_frontier:
        front = ln.frontier.as_dict() if ln.frontier is not None else {}
        d |= {f"frontier_{k}": front.get(k) for k in ("spill_free_occupancy", "limiting_kernel", "next_level",
                                                     "next_level_spills")}
    d |= {f"bench_{h}": v for h, v in (bench or {}).items()}
    return d


def csv_rows(per_arch: Mapping[str, list[VariantLine]], extra=None) -> list[dict[str, Any]]:
    """The CSV export's rows: every kernel record of every line, flattened as analyze's are, then its line's
    figures, their changes against the baseline variant and the line's traffic model (``_line_fields``);
    ``extra``: compare --bench's timing cells per table and variant."""
    from ...report.rows import flat

    with_frontier = any(ln.frontier is not None for lines in per_arch.values() for ln in lines)
    out = []
    for table, lines in per_arch.items():
        deltas = line_deltas(lines)
        for ln in lines:
            line = _line_fields(table, ln, deltas.get(ln.variant, {}), with_frontier,
                                (extra or {}).get(table, {}).get(ln.variant))
            out += [flat(r) | line for r in ln.kernels]
    return out


def to_csv(per_arch: Mapping[str, list[VariantLine]], extra=None) -> str:
    from ...report.formats import dicts_to_csv

    return dicts_to_csv(csv_rows(per_arch, extra))


# compare's extra columns: the frontier's (with --frontier) and the timings' (with --bench)
FRONTIER_HEADERS = ("spill-free occ", "next level")


def frontier_cells(per_arch: Mapping[str, Sequence[VariantLine]]) -> dict[str, dict[str, dict[str, str]]]:
    """compare's two frontier columns per table and variant line."""
    from ..frontier.view import next_level_cell, spill_free_cell

    return {key: {ln.variant: dict(zip(FRONTIER_HEADERS, (spill_free_cell(ln.frontier), next_level_cell(ln.frontier))))
                  for ln in lines} for key, lines in per_arch.items()}


def merge_columns(per_arch: Mapping[str, Sequence[VariantLine]], a: Mapping[str, Any] | None,
                  a_headers: Sequence[str], b: Mapping[str, Any] | None,
                  b_headers: Sequence[str]) -> tuple[tuple[str, ...], dict[str, dict[str, dict[str, str]]] | None]:
    """Two sets of extra columns (the frontier's, the timings') on each table's variant lines, '-' where a
    line has none."""
    headers = tuple(a_headers) + tuple(b_headers)
    if not headers:
        return (), None
    merged: dict[str, dict[str, dict[str, str]]] = {}
    for key, lines in per_arch.items():
        for ln in lines:
            left = ((a or {}).get(key, {}).get(ln.variant) or dict.fromkeys(a_headers, "-")) if a_headers else {}
            right = ((b or {}).get(key, {}).get(ln.variant) or dict.fromkeys(b_headers, "-")) if b_headers else {}
            merged.setdefault(key, {})[ln.variant] = {**left, **right}
    return headers, merged


def to_html(per_arch: Mapping[str, list[VariantLine]], machine: Machine, command: str, title: str = "vgprscope compare",
            extra_headers: Sequence[str] = (), extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
            refused: Sequence[Record] = ()) -> str:
    """The HTML report: per table, each strategy's registers and occupancy as bars (spilling ones red), each
    kernel on its occupancy staircases, then the table itself (the markdown export's: the same lines)."""
    from ...report import page, svg

    sections = []
    every: list[Record] = []
    for arch, lines in per_arch.items():
        words = _words(lines)
        unit = _unit(lines)
        ok = [ln for ln in lines if ln.regs is not None]
        regs = svg.bars([svg.Bar(ln.variant, ln.regs or 0, f"{ln.regs}" + (f", spills {ln.spills}" if ln.spills else ""),
                                 bad=bool(ln.spills)) for ln in ok],
                        label=f"registers per strategy on {arch}",
                        unit=f"{words.register_header if words else 'registers'} (the most of a strategy's kernels; "
                             "red: it spills)")
        occ = svg.bars([svg.Bar(ln.variant, ln.occupancy or 0, f"{ln.occupancy} {unit}"
                                + (f" ({ln.limiter})" if ln.limiter else ""), bad=not ln.occupancy)
                        for ln in ok if ln.occupancy is not None],
                       label=f"occupancy per strategy on {arch}", unit=f"{unit} (its worst kernel's; limiter)")
        records = [r for ln in lines for r in ln.kernels]
        every += records
        titles = [f"{ln.variant} / {r.kernel} on {r.arch}" for ln in lines for r in ln.kernels]
        md = tables_md({arch: lines}, machine, "", extra_headers,
                       {arch: (extra or {}).get(arch, {})} if extra else None)
        body = (f'<div class="cards"><div class="card">{regs}</div><div class="card">{occ}</div></div>'
                + page.from_markdown(md.split("\n", 1)[-1]).split("\n", 1)[-1]
                + page.folded(f"{len(records)} kernels on their occupancy staircases",
                              page.occupancy_cards(records, titles), open_=len(records) <= 40))
        sections.append(page.section(arch, body, f"arch-{arch}"))
    if refused:  # the variants not compared, and why (written for other archs, a value outside their range)
        sections.append(page.section("Not compiled", "".join(f"<p>{page.esc(n)}</p>" for n in refusals(refused)),
                                     "refused"))
    return page.document(title, sections, machine=machine, command=command, versions=page.versions_of(every))
