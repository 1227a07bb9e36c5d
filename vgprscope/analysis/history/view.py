"""A release history as text and as a picture: one row per kernel x config x arch, one column per release
(registers, and spills where there are any), the releases where something happened marked and said in
footnotes; JSON and CSV with every figure; a PNG of registers and spills per release per kernel."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core.records import SCHEMA_VERSION, Record
from ...report.formats import Column, Footnotes, build_table, render_table
from .core import Event, HistoryRow, register_limit, registers

NAME_WIDTH = 32  # the widest kernel name kept in a column; longer ones are title lines
MARKS = {"spills": "s", "jump": "S", "step": "^", "drop": "v", "fails": "x"}
LEGEND = ("each cell: registers (the unified VGPR count on AMD, registers per thread on NVIDIA), +N spilled "
          "values (AMD) or bytes of spill stores and loads (NVIDIA) where it spills; marks at the release where "
          "it happened: s spills from here, S the spills at least double, ^ the registers cross an occupancy "
          "step, v occupancy drops, x it stops compiling (footnotes say each)")


def _cell(rec: Record | None, events: Sequence[Event], release: str) -> str:
    if rec is None:
        return "-"
    if not rec.ok or rec.usage is None:
        text = "err"
    else:
        text = str(registers(rec))
        if rec.usage.spills:
            text += f" +{rec.usage.spills}"
    marks = "".join(MARKS[e.kind] for e in events if e.release == release)
    return f"{text} {marks}".strip()


def to_table(rows: Sequence[HistoryRow], machine: Any, *, wide: bool = False, width: int | None = None) -> str:
    from ...report.formats import output_width, wrap

    width = width or output_width()
    if not rows:
        return "no kernel\n"
    releases = rows[0].releases
    notes = Footnotes()

    def events_of(r: HistoryRow) -> str:
        evs = r.events()
        return notes.ref("; ".join(e.text for e in evs)) if evs else "-"

    # one label for every row (one captured module, one variant): said once in the title, not on each row
    labels = {r.label for r in rows}
    one_label = next(iter(labels)) if len(labels) == 1 and not wide and rows[0].kernel != rows[0].label else None

    def name(r: HistoryRow) -> str:
        if one_label is not None:
            return r.kernel
        return r.label if r.kernel == r.label else f"{r.label} / {r.kernel}"

    # a name too long for a column (a captured kernel's module and function) stands on a line of its own
    # across the table above its rows, so that no cell splits a word
    long = max(len(name(r)) for r in rows) > NAME_WIDTH and not wide
    columns = [] if long else [Column("kernel", name)]
    # the config words every row shares are said once in the title; each row keeps its own. Where two
    # rows of one kernel and arch differ only by config (two launches, two autotune configs) the config
    # is what tells them apart: the column stays however narrow the terminal
    from ...report.labels import common_config

    shared, rest = common_config([r.config for r in rows]) if not wide else ("", [r.config for r in rows])
    own = {id(r): c for r, c in zip(rows, rest)}
    seen: dict[tuple[str, str, str], int] = {}
    for r in rows:
        seen[(r.label, r.kernel, r.arch)] = seen.get((r.label, r.kernel, r.arch), 0) + 1
    apart = any(n > 1 for n in seen.values())
    columns += [Column("arch", lambda r: r.arch),
                Column("config", lambda r: own[id(r)], wrap=True, drop=None if apart else 1)]
    for rel in releases:
        columns.append(Column(rel, lambda r, rel=rel: _cell(r.records[r.releases.index(rel)], r.events(), rel),
                              justify="right"))
    columns.append(Column("what changed", events_of, wrap=True))  # its header may take two lines
    title = ("vgprscope analyze: registers per Triton release" + (f" of {one_label}" if one_label else "")
             + (f" (every config: {shared})" if shared else ""))
    table = build_table(rows, columns, title=title, wide=wide,
                        title_of=(lambda r: [(name(r), "bold")]) if long else None)
    head = machine.text(width) if hasattr(machine, "text") else str(machine)
    body = render_table(table, footnotes=notes, wide=wide, width=width)
    compilers = compilers_line(rows)
    return head + "\n" + body + wrap(LEGEND, width, "  ") + "\n" + (wrap(compilers, width, "  ") + "\n" if compilers else "")


def compilers_line(rows: Sequence[HistoryRow]) -> str:
    """Which compilers each release brought: ``compilers: 3.8.0 ptxas 12.9.86, LLVM 23.0.0git 5f07f818b51b;
    3.9.0 ...`` (a release's ptxas for every NVIDIA arch it compiled); "" where no record says."""
    from ...core.parse.diagnostics import short_llvm, short_ptxas

    parts = []
    for i, rel in enumerate(rows[0].releases if rows else ()):
        recs = [r.records[i] for r in rows if r.records[i] is not None]
        ptxas = sorted({short_ptxas(r.ptxas_version) for r in recs if r is not None and r.ptxas_version})
        llvm = sorted({short_llvm(r.llvm_version) for r in recs if r is not None and r.llvm_version})
        said = ([f"ptxas {' / '.join(ptxas)}"] if ptxas else []) + ([f"LLVM {' / '.join(llvm)}"] if llvm else [])
        if said:
            parts.append(f"{rel} {', '.join(said)}")
    return f"compilers: {'; '.join(parts)}" if parts else ""


def _point(rec: Record | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    return {"triton_version": rec.triton_version, "status": rec.status, "registers": registers(rec),
            "spills": rec.usage.spills if rec.usage is not None else None,
            "occupancy": rec.occupancy.value if rec.occupancy else None, "register_limit": register_limit(rec),
            "record": rec.as_dict()}


def to_json(rows: Sequence[HistoryRow], machine: Any) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vgprscope", "command": "analyze --triton (history)",
           "machine": machine.as_dict(), "releases": list(rows[0].releases) if rows else [],
           "rows": [{"variant": r.label, "kernel": r.kernel, "arch": r.arch, "slot": r.slot, "config": r.config,
                     "events": [{"release": e.release, "kind": e.kind, "text": e.text} for e in r.events()],
                     "releases": {rel: _point(rec) for rel, rec in zip(r.releases, r.records)}} for r in rows]}
    return json.dumps(doc, indent=2) + "\n"


def to_csv(rows: Sequence[HistoryRow]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["variant", "kernel", "arch", "slot", "config", "release", "status", "registers", "spills",
                "occupancy", "register_limit", "events"])
    for r in rows:
        for rel, rec in zip(r.releases, r.records):
            evs = "; ".join(e.text for e in r.events() if e.release == rel)
            if rec is None:
                w.writerow([r.label, r.kernel, r.arch, r.slot, r.config, rel, "absent", "", "", "", "", evs])
                continue
            w.writerow([r.label, r.kernel, r.arch, r.slot, r.config, rel, rec.status, registers(rec),
                        rec.usage.spills if rec.usage else "", rec.occupancy.value if rec.occupancy else "",
                        register_limit(rec), evs])
    return buf.getvalue()


def to_markdown(rows: Sequence[HistoryRow], machine: Any, title: str = "Registers per Triton release") -> str:
    from ...report.formats import md_table

    if not rows:
        return f"# {title}\n\nno kernel\n"
    releases = rows[0].releases
    body = [[f"{r.label} / {r.kernel}", r.arch, r.config,
             *(_cell(rec, r.events(), rel) for rel, rec in zip(r.releases, r.records)),
             "; ".join(e.text for e in r.events()) or "-"] for r in rows]
    return (f"# {title}\n\n" + "  \n".join([machine.line(), *getattr(machine, "notes", ())]) + "\n\n" + md_table(["kernel", "arch", "config", *releases, "what changed"], body)
            + "\n" + LEGEND + "\n" + (f"\n{compilers_line(rows)}\n" if compilers_line(rows) else ""))


PLOT_LINES = 10  # kernels drawn per arch panel: those where the most happened (all of them in the table)


def _short(r: HistoryRow) -> str:
    """A legend label: the kernel (and its variant or module's last part), the slot's own short part."""
    owner = r.label.rsplit(".", 1)[-1]
    slot = r.slot
    if slot.startswith("autotune["):
        slot = slot.rsplit(" ", 2)[-2] + " " + slot.rsplit(" ", 1)[-1]  # "cfg 3"
    elif slot.startswith("("):
        slot = slot.rsplit(" ", 1)[-1]  # "#1"
    elif slot == "defaults":
        slot = ""
    # never a bare name starting with "_": matplotlib leaves such labels out of the legend
    return f"{owner}/{r.kernel} {slot}".strip()


def _weight(r: HistoryRow) -> int:
    """How much happened to a kernel: its events first, then its largest change of registers or spills."""
    regs = [registers(x) for x in r.records if x is not None and x.ok]
    spills = [x.usage.spills for x in r.records if x is not None and x.usage is not None]
    spread = (max(regs) - min(regs)) if regs else 0
    return 1000 * len(r.events()) + spread + (max(spills) if spills else 0)


def _draw_steps(ax, arch: str, drawn: Sequence[HistoryRow]) -> None:
    """The arch's occupancy steps as dashed lines: the register counts where occupancy drops a level (the
    arch table's ladder, for the drawn kernels' most common block size), each labelled with the level below
    it; only the steps within the drawn registers' range (and the next one above), which is what a release's
    move is read against."""
    from collections import Counter

    from ...backends import ladder
    from ...core.archs import ARCHS
    from ...report.vendor_words import words_of

    a = ARCHS.get(arch)
    ys = [registers(rec) for r in drawn for rec in r.records if rec is not None and rec.ok]
    if a is None or not ys:
        return
    warps = Counter(rec.config.num_warps for r in drawn for rec in r.records
                    if rec is not None and rec.config.num_warps).most_common(1)
    threads = warps[0][0] * a.wave_size if warps else None
    steps = [s for s in ladder(a, threads=threads) if s.hi < max(ys) * 2]
    lo, hi = min(ys), max(ys)
    shown = [s for s in steps if lo * 0.8 <= s.hi <= hi] + [s for s in steps if s.hi > hi][:1]
    words = words_of(a.vendor)
    unit = words.ladder_words
    for s in shown:
        ax.axhline(s.hi + 0.5, color="grey", linestyle="--", linewidth=0.8, alpha=0.6, zorder=0)
        ax.annotate(f"<= {s.hi}: {s.value} {words.unit}", (0, s.hi + 0.5),
                    textcoords="offset points", xytext=(2, 2), fontsize=6, color="grey")
    if shown:
        ax.set_ylabel(f"registers ({unit}); dashed: occupancy steps")


def panel_title(arch: str, drawn: int, total: int) -> str:
    """An arch's panel title: its kernels, or (when there are more than a panel draws) those drawn."""
    if drawn >= total:
        return f"{arch}: {total} kernel{'' if total == 1 else 's'}"
    return f"{arch}: the {drawn} kernels where the most changed ({total - drawn} more in the table)"


def plot(rows: Sequence[HistoryRow], path: Path, title: str = "Registers and spills per Triton release") -> Path:
    """One panel per arch: registers per release of the kernels where the most happened (marked changes,
    then the largest spread), spills as red rings with their count; the rest are in the table. Needs the
    ``plots`` extra (MissingExtraError, one line, without it)."""
    from ...core.extras import require_matplotlib

    require_matplotlib("a history plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    archs = list(dict.fromkeys(r.arch for r in rows))
    fig, axes = plt.subplots(len(archs), 1, figsize=(11, 3.6 * len(archs)), squeeze=False)
    for ax, arch in zip(axes[:, 0], archs):
        mine = [x for x in rows if x.arch == arch]
        drawn = sorted(mine, key=_weight, reverse=True)[:PLOT_LINES]
        for r in drawn:
            xs = list(range(len(r.releases)))
            ys = [registers(rec) if rec is not None and rec.ok else None for rec in r.records]
            spills = [(rec.usage.spills if rec is not None and rec.usage is not None else 0) for rec in r.records]
            ax.plot(xs, [y if y is not None else float("nan") for y in ys], marker="o", linewidth=1.2, label=_short(r))
            for x, y, s in zip(xs, ys, spills):
                if y is not None and s:
                    ax.scatter([x], [y], s=160, facecolors="none", edgecolors="red", linewidths=2, zorder=5)
                    ax.annotate(f"+{s}", (x, y), textcoords="offset points", xytext=(7, 6), fontsize=7, color="red")
        _draw_steps(ax, arch, drawn)
        ax.set_xticks(range(len(rows[0].releases)), rows[0].releases)
        ax.set_title(panel_title(arch, len(drawn), len(mine)), fontsize=10)
        if not ax.get_ylabel():
            ax.set_ylabel("registers")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(f"{title} (red rings: spills, with their count)")
    import warnings

    with warnings.catch_warnings():  # long legends beside the panels: bbox_inches="tight" fits them anyway
        warnings.simplefilter("ignore")
        fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return path
