"""The HTML report (``--format html``, a result's ``to_html``): one self-contained page, inline CSS and SVG,
nothing loaded from anywhere, readable in a browser and in a CI artifact viewer. Its pieces: the page (a
verdict first where there is one, the machine line, the compilers' versions, the command that made it), a
section, a table, a link to a kernel's file and line, and each record's occupancy staircases
(``occupancy_card``). The views (``analysis/<question>/view.py``) compose them from the records their tables
show: a chart here draws numbers the occupancy model and the compiler already gave, never its own."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.records import Diagnostic, Record
from . import svg
from .machine import Machine

CSS = """
:root { color-scheme: light; --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --bad: #cf222e;
  --bad-bg: #ffebe9; --good: #1a7f37; --good-bg: #dafbe1; --warn-bg: #fff8c5; --accent: #0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", "Helvetica Neue", Arial, sans-serif; color: var(--ink);
  margin: 0 auto; padding: 20px 28px 40px; max-width: 1280px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; } h3 { font-size: 15px; margin: 16px 0 6px; }
.meta { color: var(--muted); font-size: 12.5px; margin: 2px 0; } .meta code { font-size: 12px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; overflow-x: auto;
  white-space: pre-wrap; }
.verdict { font-size: 20px; font-weight: 600; padding: 12px 16px; border-radius: 8px; margin: 10px 0 14px;
  border: 1px solid; }
.verdict.pass { background: var(--good-bg); border-color: var(--good); color: #116329; }
.verdict.fail { background: var(--bad-bg); border-color: var(--bad); color: #a40e26; }
.verdict.none { background: var(--warn-bg); border-color: #bf8700; color: #7d4e00; }
.verdict small { display: block; font-size: 13px; font-weight: 400; color: var(--ink); margin-top: 3px; }
.scroll { max-width: 100%; overflow-x: auto; margin: 6px 0 12px; }
table { border-collapse: collapse; font-size: 13px; }
td { max-width: 460px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.worse td { background: var(--bad-bg); } tr.worse td:first-child { border-left: 3px solid var(--bad); font-weight: 600; }
tr.better td:first-child { border-left: 3px solid var(--good); }
tr.changed td:first-child, tr.new td:first-child { border-left: 3px solid #bf8700; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 14px; }
.cards.one { grid-template-columns: 1fr; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: #fff; margin-bottom: 12px; }
.card h3 { margin: 0 0 4px; } .card .charts { display: flex; flex-wrap: wrap; gap: 6px; }
.card .charts > div { flex: 1 1 420px; min-width: 320px; max-width: 620px; }
.card.failed { background: var(--bad-bg); }
.facts { margin: 6px 0 0; padding-left: 18px; font-size: 13px; } .facts li { margin: 1px 0; }
.chart { width: 100%; max-width: 640px; height: auto; display: block; }
.chart text { font-size: 11px; fill: var(--ink); } .chart text.axis { fill: var(--muted); font-size: 11px; }
.chart text.step { fill: #0550ae; font-size: 10px; } .chart text.point { font-weight: 600; fill: #6639ba; }
.chart text.bad { fill: var(--bad); font-size: 10.5px; } .chart text.good { fill: var(--good); font-size: 10.5px; }
.chart text.on { fill: #fff; font-size: 10px; }
.diag { color: #7d4e00; font-size: 12.5px; } .bad { color: var(--bad); } .good { color: var(--good); }
details > summary { cursor: pointer; color: var(--accent); margin: 6px 0; }
a { color: var(--accent); }
footer { margin-top: 30px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 8px; }
@media print { .cards { display: block; } .card { break-inside: avoid; margin-bottom: 10px; } }
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


@dataclass(frozen=True)
class HeadLine:
    """The line a report starts with: ``state`` pass, fail or none (nothing could be compared)."""

    text: str
    state: str
    detail: str = ""


def versions_of(records: Iterable[Record]) -> list[str]:
    """The compilers that made ``records``: each Triton, LLVM and ptxas build, once each."""
    out: dict[str, None] = {}
    for r in records:
        for name, value in (("Triton", r.triton_version), ("LLVM", r.llvm_version), ("ptxas", r.ptxas_version)):
            if value:
                out[f"{name} {value}"] = None
    return list(out)


def document(title: str, sections: Sequence[str], *, machine: Machine | None, command: str,
             versions: Sequence[str] = (), verdict: HeadLine | None = None) -> str:
    """The whole page: the verdict first (where there is one), then the machine line, the compilers and the
    command that made the report, then the sections."""
    head = [f"<h1>{esc(title)}</h1>"]
    if verdict is not None:
        detail = f"<small>{esc(verdict.detail)}</small>" if verdict.detail else ""
        head.append(f'<div class="verdict {esc(verdict.state)}" id="verdict">{esc(verdict.text)}{detail}</div>')
    if machine is not None:
        head.append(f'<p class="meta" id="machine">{esc(machine.line())}</p>')
    if versions:
        head.append(f'<p class="meta" id="versions">compiled by {esc(", ".join(versions))}</p>')
    head.append(f'<p class="meta" id="command">made by <code>{esc(command)}</code></p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n" + "\n".join(head)
            + "\n</header>\n<main>\n" + "\n".join(s for s in sections if s) + "\n</main>\n"
            "<footer>vgprscope: registers, spills, LDS / shared memory and occupancy of Triton kernels, from the "
            "compiler's output and the occupancy rules. Self-contained: this page loads nothing.</footer>\n"
            "</body>\n</html>\n")


def section(title: str, body: str, ident: str = "") -> str:
    if not body:
        return ""
    at = f' id="{esc(ident)}"' if ident else ""
    return f"<section{at}>\n<h2>{esc(title)}</h2>\n{body}\n</section>"


NUMERIC = ' class="n"'


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], row_classes: Sequence[str] = (),
          numeric: Sequence[int] = (), raw: Sequence[int] = ()) -> str:
    """A table; ``row_classes`` per row (``worse`` highlights it); columns ``numeric`` right-aligned; the
    cells of columns ``raw`` are HTML already (a link), the others are escaped."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{esc(row_classes[i])}"' if i < len(row_classes) and row_classes[i] else ""
        tds = "".join(f"<td{NUMERIC if j in numeric else ''}>{c if j in raw else esc(c)}</td>"
                      for j, c in enumerate(row))
        body.append(f"<tr{cls}>{tds}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def from_markdown(md: str) -> str:
    """A view's markdown (its ``--format md``: the same tables) as HTML."""
    from .html import markdown_to_html

    return markdown_to_html(md).replace("<table>", '<div class="scroll"><table>').replace("</table>", "</table></div>")


def folded(summary: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>\n{body}\n</details>" if body else ""


def source_link(uri: str | None, line: int | None, text: str | None = None, *, url_template: str = "",
                commit: str = "") -> str:
    """``text`` (default ``uri:line``) linked to the file and line: through ``url_template`` where given
    (``https://github.com/ORG/REPO/blob/{commit}/{path}#L{line}``), else to the file itself (a relative
    path, or a file: URI outside the working directory)."""
    if not uri:
        return esc(text or "")
    shown = text or (f"{uri}:{line}" if line else uri)
    if url_template and not uri.startswith("file:"):
        href = url_template.format(path=uri, line=line or 1, commit=commit or "HEAD")
    else:
        href = uri + (f"#L{line}" if line else "")
    return f'<a href="{esc(href)}">{esc(shown)}</a>'


def diagnostics_html(diagnostics: Sequence[Diagnostic]) -> str:
    return "<br>".join(f'<span class="diag">{esc(d.text())}</span>' for d in diagnostics)


# ---- a record's occupancy: its place on the arch's staircases ---------------------------------------------


def occupancy_card(rec: Record, title: str | None = None, extra: Sequence[str] = (),
                   before: Record | None = None) -> str:
    """One kernel x arch: the register staircase (occupancy against registers, from the arch's ladder for this
    launch's workgroup / block) with the kernel's point, the LDS / shared memory staircase with its point when
    it uses any, the limiter, the next step and the headroom as the occupancy model said them; ``before``: the
    same kernel's baseline record, its point drawn where it stood."""
    name = title or f"{rec.variant} / {rec.kernel} on {rec.arch}"
    config = esc(rec.config.short())
    if not rec.ok or rec.usage is None or rec.occupancy is None:
        return (f'<div class="card failed"><h3>{esc(name)}</h3><p class="meta">{config}</p>'
                f'<p class="bad">{esc(rec.status)}</p></div>')
    from ..backends import backend_of, backend_of_usage
    from ..core.archs import ARCHS
    from .vendor_words import words_of

    occ, arch = rec.occupancy, ARCHS.get(rec.arch)
    backend = backend_of_usage(rec.usage)
    words = words_of(backend.vendor)
    figures = backend.figures(rec.usage)
    charts = []
    if arch is not None and backend_of(arch) is backend and rec.config.num_warps:
        size = rec.config.num_warps * arch.wave_size
        limits = dict(occ.limits)
        reg_key = next((m.step for m in backend.metrics if m.role == "registers"), "")
        mem_key = next((m.step for m in backend.metrics if m.role == "memory"), "")
        was = _was(before, backend, reg_key, mem_key)
        ladders = [(reg_key, backend.ladder(arch, size), figures.registers, "", words.ladder_words)]
        if figures.memory_bytes > 0:
            ladders.append((mem_key, backend.ladder(arch, size, memory=True), figures.memory_bytes, " B", words.memory_axis))
        for i, (key, ladder, x, unit, axis) in enumerate(ladders):
            steps = [svg.Step(s.lo, s.hi, s.value) for s in ladder]
            y = on_ladder(backend, limits, key, occ.value)
            # what the kernel's other counts allow (a dashed line where it is below the staircase's top)
            other = min((v for k, v in limits.items() if k != key and k in _counts(backend)), default=None)
            ceiling = (other, f"its other counts allow {other}") if other is not None and steps and other < max(
                s.value for s in steps) else None
            charts.append(svg.staircase(
                steps, (x, y), x_label=axis, y_label=occ.unit, label=f"{name}: {occ.unit} against {axis}",
                point_label=f"{x}{unit} → {y}", ceiling=ceiling, before=was[i] if was else None))
    facts = [f"occupancy <b>{occ.value} {esc(occ.unit)}</b> of {occ.max_value} ({occ.percent:g} %)"
             + (f", {occ.warps_per_sm} warps/SM" if occ.warps_per_sm is not None else ""),
             (f"limited by <b>{esc(', '.join(occ.limiters))}</b>" if occ.limiters else "at the launch's maximum")
             +
             f" (each limit: {esc(', '.join(f'{k} {v}' for k, v in occ.limits))})",
             f"next step: {esc(occ.next_step)}", f"headroom: {esc(occ.headroom)}"]
    if occ.note:
        facts.append(f"note: {esc(occ.note)}")
    facts += list(extra)
    body = "".join(f"<div>{c}</div>" for c in charts if c)
    return (f'<div class="card"><h3>{esc(name)}</h3><p class="meta">{config}</p><div class="charts">{body}</div>'
            f'<ul class="facts">{"".join(f"<li>{f}</li>" for f in facts)}</ul></div>')


def _counts(backend: Any) -> set[str]:
    """The occupancy limits a kernel's own counts drive (registers, SGPRs, LDS / shared memory): the keys of
    ``Occupancy.limits`` its backend's metrics step on; the others are the launch's own ceiling."""
    return {m.step for m in backend.metrics if m.step}


def on_ladder(backend: Any, limits: dict[str, int], key: str, default: int) -> int:
    """Where a count's staircase puts the kernel: the occupancy that count alone allows, under the launch's own
    ceiling (the ladder's value at the kernel's count)."""
    launch = [v for k, v in limits.items() if k not in _counts(backend)]
    return min([limits.get(key, default), *launch])


def _was(before: Record | None, backend: Any, reg_key: str, mem_key: str) -> tuple[Any, Any] | None:
    """Where the baseline record stood on the two staircases: (registers, occupancy, words), (bytes, ...)."""
    if before is None or before.usage is None or before.occupancy is None or before.usage.vendor != backend.vendor.value:
        return None
    f, limits = backend.figures(before.usage), dict(before.occupancy.limits)
    reg = (f.registers, on_ladder(backend, limits, reg_key, before.occupancy.value), f"baseline {f.registers}")
    mem = (f.memory_bytes, on_ladder(backend, limits, mem_key, before.occupancy.value),
           f"baseline {f.memory_bytes} B") if f.memory_bytes else None
    return reg, mem


def occupancy_cards(records: Sequence[Record], titles: Sequence[str] | None = None,
                    before: Sequence[Record | None] | None = None) -> str:
    if not records:
        return ""
    cards = [occupancy_card(r, titles[i] if titles else None, before=before[i] if before else None)
             for i, r in enumerate(records)]
    return f'<div class="cards one">{"".join(cards)}</div>'
