"""Charts as inline SVG for the HTML report (``report/page.py``): a staircase with a point on it, horizontal
bars, stacked bars, and points over a budget axis. Drawing only: each takes numbers a view already holds
(a ladder the occupancy model gave, a record's counts) and computes nothing about kernels. Standard library
only; every piece of text is escaped; sizes come from a ``viewBox`` so a chart scales with the page."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

# the palette (also named in page.py's CSS): one meaning per colour across every chart
INK, GRID, STEP, STEP_FILL, POINT, BAD, GOOD, MUTED = (
    "#1f2328", "#d0d7de", "#0969da", "#ddf4ff", "#8250df", "#cf222e", "#1a7f37", "#656d76")
SERIES = ("#0969da", "#bf8700", "#8250df", "#1a7f37", "#cf222e", "#57606a", "#e16f24", "#54aeff", "#d4a72c",
          "#c297ff", "#4ac26b", "#ff8182", "#8c959f")

WIDTH, HEIGHT = 520, 250
PAD_L, PAD_R, PAD_T, PAD_B = 52, 18, 26, 44


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float) -> str:
    """A coordinate with at most one decimal (the SVG stays small and byte-stable)."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _ticks(hi: float, n: int = 5) -> list[int]:
    """Round tick values from 0 to ``hi`` (at most about ``n`` of them)."""
    if hi <= 0:
        return [0]
    raw = hi / n
    mag = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    step = max(int(step), 1)
    return list(range(0, int(hi) + 1, step))


@dataclass(frozen=True)
class Axes:
    """A plot area mapping data (x 0..x_max, y 0..y_max) to the SVG's pixels."""

    x_max: float
    y_max: float
    width: int = WIDTH
    height: int = HEIGHT

    def x(self, v: float) -> float:
        return PAD_L + (self.width - PAD_L - PAD_R) * (v / self.x_max if self.x_max else 0)

    def y(self, v: float) -> float:
        return self.height - PAD_B - (self.height - PAD_T - PAD_B) * (v / self.y_max if self.y_max else 0)

    def frame(self, x_label: str, y_label: str, y_ticks: Sequence[int] | None = None) -> list[str]:
        out = []
        for t in (y_ticks if y_ticks is not None else _ticks(self.y_max)):
            y = _num(self.y(t))
            out.append(f'<line x1="{PAD_L}" y1="{y}" x2="{self.width - PAD_R}" y2="{y}" stroke="{GRID}"/>')
            out.append(f'<text x="{PAD_L - 6}" y="{y}" text-anchor="end" dominant-baseline="middle">{t}</text>')
        for t in _ticks(self.x_max, 6):
            x = _num(self.x(t))
            out.append(f'<line x1="{x}" y1="{self.height - PAD_B}" x2="{x}" y2="{self.height - PAD_B + 4}" '
                       f'stroke="{INK}"/>')
            out.append(f'<text x="{x}" y="{self.height - PAD_B + 16}" text-anchor="middle">{t}</text>')
        out.append(f'<line x1="{PAD_L}" y1="{self.height - PAD_B}" x2="{self.width - PAD_R}" '
                   f'y2="{self.height - PAD_B}" stroke="{INK}"/>')
        out.append(f'<text x="{(PAD_L + self.width - PAD_R) / 2:.0f}" y="{self.height - 8}" '
                   f'text-anchor="middle" class="axis">{esc(x_label)}</text>')
        out.append(f'<text x="14" y="{(PAD_T + self.height - PAD_B) / 2:.0f}" text-anchor="middle" class="axis" '
                   f'transform="rotate(-90 14 {(PAD_T + self.height - PAD_B) / 2:.0f})">{esc(y_label)}</text>')
        return out


def _svg(body: Sequence[str], label: str, width: int = WIDTH, height: int = HEIGHT) -> str:
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{esc(label)}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{esc(label)}</title>{"".join(body)}</svg>')


@dataclass(frozen=True)
class Step:
    """``lo``..``hi`` (inclusive) give ``value``."""

    lo: int
    hi: int
    value: int


def staircase(steps: Sequence[Step], point: tuple[int, int] | None, *, x_label: str, y_label: str, label: str,
              point_label: str = "", ceiling: tuple[int, str] | None = None,
              before: tuple[int, int, str] | None = None) -> str:
    """Occupancy against a resource: the steps (a falling staircase), the kernel's ``point`` (x, its
    occupancy) with ``point_label``, the step it stands on shaded, ``ceiling`` (a value and its words: what
    another resource allows) as a dashed line, and ``before`` (x, occupancy, words: where the baseline stood)
    as a hollow grey point with an arrow to the point."""
    if not steps:
        return ""
    x_max = max(s.hi for s in steps)
    if point is not None:
        x_max = max(x_max, point[0])
    if before is not None:
        x_max = max(x_max, before[0])
    y_max = max([s.value for s in steps] + ([point[1]] if point else [])) or 1
    ax = Axes(x_max, y_max + max(1, y_max // 8))
    out = ax.frame(x_label, y_label, _ticks(y_max, min(y_max, 8)))
    here = next((s for s in steps if point is not None and s.lo <= point[0] <= s.hi), None)
    if here is not None:
        out.append(f'<rect x="{_num(ax.x(here.lo - 1))}" y="{PAD_T}" width="{_num(ax.x(here.hi) - ax.x(here.lo - 1))}" '
                   f'height="{_num(ax.height - PAD_B - PAD_T)}" fill="{STEP_FILL}"/>')
    path = []
    for s in steps:
        x0, x1, y = ax.x(s.lo - 1), ax.x(s.hi), ax.y(s.value)
        path.append(f"{'M' if not path else 'L'}{_num(x0)},{_num(y)} L{_num(x1)},{_num(y)}")
    out.append(f'<path d="{" ".join(path)}" fill="none" stroke="{STEP}" stroke-width="2"/>')
    for s in steps:  # each step's value over its tread, where the tread is wide enough to read
        if ax.x(s.hi) - ax.x(s.lo - 1) >= 14:
            out.append(f'<text x="{_num((ax.x(s.lo - 1) + ax.x(s.hi)) / 2)}" y="{_num(ax.y(s.value) - 4)}" '
                       f'text-anchor="middle" class="step">{s.value}</text>')
    if ceiling is not None:
        y = _num(ax.y(ceiling[0]))
        out.append(f'<line x1="{PAD_L}" y1="{y}" x2="{ax.width - PAD_R}" y2="{y}" stroke="{BAD}" '
                   f'stroke-dasharray="5 4"/>')
        out.append(f'<text x="{ax.width - PAD_R - 2}" y="{_num(ax.y(ceiling[0]) + 12)}" text-anchor="end" '
                   f'class="bad">{esc(ceiling[1])}</text>')
    if before is not None:
        bx, by = ax.x(before[0]), ax.y(before[1])
        out.append(f'<circle cx="{_num(bx)}" cy="{_num(by)}" r="5" fill="#fff" stroke="{MUTED}" stroke-width="2">'
                   f'<title>{esc(before[2])}</title></circle>')
        if point is not None and (before[0], before[1]) != (point[0], point[1]):
            out.append(f'<line x1="{_num(bx)}" y1="{_num(by)}" x2="{_num(ax.x(point[0]))}" y2="{_num(ax.y(point[1]))}" '
                       f'stroke="{MUTED}" stroke-dasharray="3 2"/>')
        out.append(f'<text x="{_num(bx)}" y="{_num(by + 16)}" text-anchor="middle" class="axis">{esc(before[2])}</text>')
    if point is not None:
        px, py = ax.x(point[0]), ax.y(point[1])
        anchor = "end" if px > ax.width * 0.6 else "start"
        dx = -8 if anchor == "end" else 8
        out.append(f'<circle cx="{_num(px)}" cy="{_num(py)}" r="5" fill="{POINT}" stroke="#fff" stroke-width="1.5">'
                   f'<title>{esc(point_label)}</title></circle>')
        out.append(f'<text x="{_num(px + dx)}" y="{_num(py - 9)}" text-anchor="{anchor}" class="point">'
                   f'{esc(point_label)}</text>')
    return _svg(out, label)


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str = ""  # beside the bar (default: the value)
    bad: bool = False
    title: str = ""  # a tooltip (a source line)


def bars(items: Sequence[Bar], *, label: str, unit: str = "", width: int = WIDTH) -> str:
    """Horizontal bars, one row each, longest scale at the widest value; ``bad`` bars in red."""
    if not items:
        return ""
    row, label_w = 22, min(200, 12 + 7 * max(len(b.label) for b in items))
    height = PAD_T + row * len(items) + 18
    top = max(b.value for b in items) or 1
    span = width - label_w - 200
    out = []
    for i, b in enumerate(items):
        y = PAD_T + i * row
        w = span * b.value / top
        colour = BAD if b.bad else STEP
        tip = f"<title>{esc(b.title or b.label)}</title>"
        out.append(f'<text x="{label_w - 6}" y="{y + 11}" text-anchor="end" dominant-baseline="middle">'
                   f'{esc(b.label)}{tip}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 3}" width="{_num(max(w, 1))}" height="{row - 7}" fill="{colour}" '
                   f'rx="2">{tip}</rect>')
        out.append(f'<text x="{_num(label_w + max(w, 1) + 5)}" y="{y + 11}" dominant-baseline="middle">'
                   f'{esc(b.text or _num(b.value))}</text>')
    if unit:
        out.append(f'<text x="{label_w}" y="{PAD_T - 8}" class="axis">{esc(unit)}</text>')
    return _svg(out, label, width, height)


def stacked(rows: Sequence[tuple[str, Sequence[tuple[str, int]]]], *, label: str, width: int = WIDTH) -> str:
    """One horizontal bar per row, split into its named parts (a colour per part name, a legend below)."""
    if not rows:
        return ""
    names = list(dict.fromkeys(n for _, parts in rows for n, v in parts if v))
    colour = {n: SERIES[i % len(SERIES)] for i, n in enumerate(names)}
    row, label_w = 24, min(160, 12 + 7 * max(len(r[0]) for r in rows))
    legend_rows = (len(names) + 3) // 4
    height = PAD_T + row * len(rows) + 14 + 18 * legend_rows
    span = width - label_w - 46
    widest = max(sum(v for _, v in parts) for _, parts in rows) or 1
    out = []
    for i, (name, parts) in enumerate(rows):
        y = PAD_T + i * row
        total = sum(v for _, v in parts) or 1
        x = float(label_w)
        out.append(f'<text x="{label_w - 6}" y="{y + 11}" text-anchor="end" dominant-baseline="middle">'
                   f'{esc(name)}</text>')
        for part, v in parts:
            if not v:
                continue
            w = span * v / widest
            out.append(f'<rect x="{_num(x)}" y="{y + 3}" width="{_num(w)}" height="{row - 8}" fill="{colour[part]}">'
                       f'<title>{esc(f"{part}: {v} of {total}")}</title></rect>')
            if w > 26:
                out.append(f'<text x="{_num(x + w / 2)}" y="{y + 11}" text-anchor="middle" dominant-baseline="middle" '
                           f'class="on">{v}</text>')
            x += w
        out.append(f'<text x="{_num(x + 4)}" y="{y + 11}" dominant-baseline="middle">{total}</text>')
    ly = PAD_T + row * len(rows) + 10
    for i, n in enumerate(names):
        lx, lyy = label_w + (i % 4) * 100, ly + (i // 4) * 18
        out.append(f'<rect x="{lx}" y="{lyy}" width="10" height="10" fill="{colour[n]}"/>'
                   f'<text x="{lx + 14}" y="{lyy + 9}">{esc(n)}</text>')
    if rows:
        out.append(f'<text x="{label_w}" y="{PAD_T - 8}" class="axis">instructions per trip</text>')
    return _svg(out, label, width, height)


@dataclass(frozen=True)
class Point:
    x: int
    y: int
    bad: bool  # spills (or does not compile)
    text: str = ""  # beside the point (spill bytes)
    title: str = ""


def points(series: Sequence[tuple[str, Sequence[Point]]], *, x_label: str, y_label: str, label: str,
           marks: Sequence[tuple[int, str]] = ()) -> str:
    """Each series' points joined in x order: green where spill-free, red where it spills (with its text);
    ``marks``: vertical lines at x with their words (the smallest spill-free budget)."""
    pts = [p for _, ps in series for p in ps]
    if not pts:
        return ""
    x_max = max(p.x for p in pts) or 1
    y_max = max(p.y for p in pts) or 1
    ax = Axes(x_max * 1.05, y_max + max(1, y_max // 6))
    out = ax.frame(x_label, y_label, _ticks(y_max, min(y_max, 8)))
    for x, words in marks:
        px = _num(ax.x(x))
        anchor = "end" if ax.x(x) > ax.width * 0.6 else "start"
        out.append(f'<line x1="{px}" y1="{PAD_T}" x2="{px}" y2="{ax.height - PAD_B}" stroke="{GOOD}" '
                   f'stroke-dasharray="4 3"/><text x="{px}" y="{PAD_T - 6}" text-anchor="{anchor}" class="good">'
                   f'{esc(words)}</text>')
    taken: list[tuple[float, float, float]] = []  # the labels drawn: (left, right, y), none drawn over another
    for i, (_, ps) in enumerate(series):
        colour = SERIES[i % len(SERIES)]
        ordered = sorted(ps, key=lambda p: p.x)
        if len(ordered) > 1:
            d = " ".join(f"{'M' if j == 0 else 'L'}{_num(ax.x(p.x))},{_num(ax.y(p.y))}" for j, p in enumerate(ordered))
            out.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.5" opacity="0.6"/>')
        for p in ordered:
            fill = BAD if p.bad else GOOD
            out.append(f'<circle cx="{_num(ax.x(p.x))}" cy="{_num(ax.y(p.y))}" r="4.5" fill="{fill}" '
                       f'stroke="{colour}" stroke-width="1.5"><title>{esc(p.title or p.text)}</title></circle>')
            if p.text:  # above the point, else below it, else only in its tooltip
                left, right = ax.x(p.x) + 6, ax.x(p.x) + 6 + 6 * len(p.text)
                for y in (ax.y(p.y) - 7, ax.y(p.y) + 15):
                    if right < ax.width and not any(a < right and left < b and abs(y - ty) < 12 for a, b, ty in taken):
                        taken.append((left, right, y))
                        out.append(f'<text x="{_num(left)}" y="{_num(y)}" class="bad">{esc(p.text)}</text>')
                        break
    if len(series) > 1:
        for i, (name, _) in enumerate(series):
            lx = PAD_L + 8 + (i % 3) * 150
            ly = PAD_T + 4 + (i // 3) * 14
            out.append(f'<rect x="{lx}" y="{ly - 8}" width="10" height="3" fill="{SERIES[i % len(SERIES)]}"/>'
                       f'<text x="{lx + 14}" y="{ly - 4}">{esc(name)}</text>')
    return _svg(out, label)
