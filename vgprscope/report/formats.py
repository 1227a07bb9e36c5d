"""One result model, several formats: rich table, markdown, CSV, JSON (with a schema version).

Every terminal table goes through :func:`render_table` (see its docstring): it fits the table to the width
of the terminal or pipe it is printed to, numbers long notes as footnotes under it, and with ``wide``
shows every column at its natural width. Build tables with :func:`new_table` (or :func:`build_table` from
:class:`Column` specs) so that every command looks and folds the same way.
"""

from __future__ import annotations

import csv
import io
import os
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

# The width of the default view when stdout is not a terminal (a pipe, a file, a CI log) and $COLUMNS is
# not set: the narrowest terminal the tables are designed for, so a log reads like a terminal.
PIPE_WIDTH = 100
# --wide renders every column at its natural width, up to this many columns (a guard, not a layout).
WIDE_LIMIT = 1000


# True while a command renders for --output FILE: laid out as for a pipe, whatever stdout is
_TO_FILE: ContextVar[bool] = ContextVar("vgprscope_rendering_to_file", default=False)


@contextmanager
def rendering_to_file(to_file: bool):
    """Within it, tables are rendered for a file (``to_file``) rather than for stdout."""
    token = _TO_FILE.set(to_file)
    try:
        yield
    finally:
        _TO_FILE.reset(token)


# True while a result's table is wanted alone (``result.table(alone=True)``, a notebook's cell): no machine line,
# no legend; the footnotes stay (their markers are in the table), and so do the notes of what is not shown
_ALONE: ContextVar[bool] = ContextVar("vgprscope_table_alone", default=False)


@contextmanager
def table_alone(on: bool = True):
    """Within it, tables are rendered without the machine line and the legends (``alone``)."""
    token = _ALONE.set(on)
    try:
        yield
    finally:
        _ALONE.reset(token)


def alone() -> bool:
    """Whether the table is wanted without its machine line and legends (``table_alone``)."""
    return _ALONE.get()


def output_width(stream=None) -> int:
    """Columns the default view must fit: the terminal's on a terminal, else ``$COLUMNS``, else 100."""
    import shutil
    import sys

    stream = stream or sys.stdout
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if _isatty(stream):
        return shutil.get_terminal_size((PIPE_WIDTH, 40)).columns
    return PIPE_WIDTH


def _isatty(stream) -> bool:
    if _TO_FILE.get():
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Footnotes:
    """Numbered notes under a table: ``ref(text)`` gives the cell's marker ``[n]`` (the same text, the same
    number), ``lines()`` the notes themselves. Pass it to :func:`render_table` as ``footnotes``."""

    def __init__(self) -> None:
        self._texts: list[str] = []

    def ref(self, text: str) -> str:
        if text not in self._texts:
            self._texts.append(text)
        return f"[{self._texts.index(text) + 1}]"

    def lines(self) -> list[str]:
        return [f"[{i}] {t}" for i, t in enumerate(self._texts, 1)]

    def __bool__(self) -> bool:
        return bool(self._texts)


# where a word longer than a line may break, after the character: an autotune key's comma, a path's slash, a
# generated name's underscore or a module path's dot (Inductor's kernel names run past 100 columns)
_BREAKS = (",", "/", "_", ".")


def _break_at(word: str, room: int) -> int:
    """Where to break ``word`` to fit ``room`` columns: after the last separator that fits, preferring a
    comma, then a slash, an underscore, a dot; 0 when none does."""
    for sep in _BREAKS:
        cut = word.rfind(sep, 0, room) + 1
        if cut > 1:
            return cut
    return 0


def wrap(text: str, width: int, indent: str = "") -> str:
    """``text`` folded at spaces to ``width`` columns, continuation lines indented (footnotes, legends, titles).
    A word longer than a line (an autotune key, a path, an Inductor kernel's name) is broken after a comma,
    a slash, an underscore or a dot, never inside a name's own word."""
    width = max(width, 20)
    if all(len(word) <= width - len(indent) for word in text.split()):
        return "\n".join(textwrap.wrap(text, width=width, subsequent_indent=indent, break_on_hyphens=False)) or text
    lines: list[str] = []
    line = ""  # the line being filled; "" before the first word, ``indent`` at the start of a continuation
    for word in text.split():
        while word:
            sep = " " if line.strip() else ""
            if len(line) + len(sep) + len(word) <= width:
                line += sep + word
                break
            room = width - len(line) - len(sep)
            cut = _break_at(word, room) if len(word) > width - len(indent) else 0
            if cut:  # the long word starts on this line and breaks after a comma
                lines.append(line + sep + word[:cut])
                word = word[cut:]
            elif line.strip():
                lines.append(line)
            else:  # no comma to break at: the word is a line of its own
                lines.append(line + word)
                word = ""
            line = indent
    if line.strip():
        lines.append(line)
    return "\n".join(lines) or text


def wrap_fields(fields: Sequence[str], width: int, sep: str = " | ") -> str:
    """Fields joined by ``sep``, broken into lines at separators so that none is wider than ``width``
    (the machine line). A field longer than the width is folded."""
    lines: list[str] = []
    cur = ""
    for f in fields:
        cand = f if not cur else cur + sep + f
        if len(cand) <= width or not cur:
            cur = cand
        else:
            lines.append(cur)
            cur = f
    if cur:
        lines.append(cur)
    return "\n".join(wrap(ln, width, "  ") if len(ln) > width else ln for ln in lines)


def new_table(title: str | None = None, **kw: Any):
    """A rich Table in the house style: no vertical rules (two spaces between columns), a rule under the
    header, the title on the left. Columns that must never fold should get ``no_wrap=True``."""
    from rich import box
    from rich.table import Table

    opts = {"box": box.SIMPLE_HEAD, "header_style": "bold", "pad_edge": False, "title_justify": "left",
            "show_edge": False, "padding": (0, 1, 0, 0)}
    return Table(title=title, **(opts | kw))


@dataclass(frozen=True)
class Column:
    """One column of a table built by :func:`build_table`: its header, how a row becomes its cell (a str
    or a rich Text), and its place in the layout. ``wide_only`` columns appear only with --wide,
    ``default_only`` ones (a compact form of a wide column) only without it; ``wrap`` columns may fold onto
    a second line at a narrow width (the others never fold). ``drop``: where the default view cannot fit
    its width otherwise, the columns with a ``drop`` rank are left out, lowest rank first (the table
    names them; see :func:`fit_columns`)."""

    header: str
    cell: Callable[[Any], Any]
    wide_only: bool = False
    default_only: bool = False
    wrap: bool = False
    justify: str = "left"
    min_width: int | None = None
    drop: int | None = None


def build_table(rows: Iterable[Any], columns: Sequence[Column], *, title: str | None = None, wide: bool = False,
                row_style: Callable[[Any], str | None] | None = None, section: Callable[[Any], Any] | None = None,
                title_of: Callable[[Any], Sequence[tuple[str, str | None]]] | None = None):
    """A table of ``rows`` with the default view's columns, or every column with ``wide``. ``section``:
    a key per row; a rule is drawn where it changes (rows of one variant together). ``title_of``: the
    title lines ((text, style) pairs) that name a row's group; where they change, they are printed
    across the table above the row (:func:`add_title`)."""
    table = new_table(title)
    shown = [c for c in columns if not (c.default_only if wide else c.wide_only)]
    add_columns(table, shown, wide)
    prev = object()
    rows = list(rows)
    for i, r in enumerate(rows):
        if title_of is not None and (i == 0 or title_of(r) != title_of(rows[i - 1])):
            for text, style in title_of(r):
                add_title(table, text, style)
        elif section is not None and i and section(r) != prev:
            table.rows[-1].end_section = True
        prev = section(r) if section is not None else prev
        table.add_row(*(c.cell(r) for c in shown), style=row_style(r) if row_style else None)
    return table


def add_columns(table, columns: Sequence[Column], wide: bool = False) -> None:
    """``columns`` added to a rich table as :func:`build_table` adds them, their ``drop`` ranks included."""
    for c in columns:
        table.add_column(c.header, justify=c.justify, no_wrap=not c.wrap and not wide, overflow="fold",
                         min_width=c.min_width)
    ranked = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop is not None)
    start = len(table.columns) - len(columns)
    drop_order(table, [table.columns[start + i] for _, i in ranked])


_LINES: dict[tuple[str, int], int] = {}  # (plain text, width) -> lines: tables repeat their cells


def _cell_lines(console, cell, width: int) -> int:
    """Lines ``cell`` takes in a column ``width`` wide (words wrap, longer words fold)."""
    from rich.cells import cell_len
    from rich.text import Text

    plain = _plain(cell)
    if "\n" not in plain and cell_len(plain) <= width:
        return 1
    key = (plain, width)
    if key not in _LINES:
        text = cell if isinstance(cell, Text) else Text(plain)
        _LINES[key] = max(1, len(text.wrap(console, width, overflow="fold")))
    return _LINES[key]


def lines_at(text: str, width: int) -> int:
    """Lines ``text`` takes in a column ``width`` wide (to decide what becomes a footnote)."""
    import io

    from rich.console import Console

    return _cell_lines(Console(file=io.StringIO(), width=max(width, 1)), text, max(width, 1))


def _natural(console, options, cell) -> int:
    """A cell's width on one line (what rich measures as its maximum), quickly for plain text."""
    from rich.cells import cell_len
    from rich.measure import Measurement

    if isinstance(cell, str) or hasattr(cell, "plain"):
        return max((cell_len(line) for line in _plain(cell).split("\n")), default=0)
    return Measurement.get(console, options, cell).maximum


def _min_width(console, cells: Sequence[Any], natural: int, whole_words: bool, max_lines: int = 2) -> int:
    """The narrowest width at which every cell of a column takes at most ``max_lines`` lines; with
    ``whole_words`` no word is cut (a word longer than the width would be folded mid-word)."""
    longest = max((len(w) for c in cells for w in _plain(c).split()), default=1) if whole_words else 1
    for w in range(longest, natural + 1):
        if all(_cell_lines(console, c, w) <= max_lines for c in cells):
            return w
    return natural


def _measure(table, console) -> tuple[list[int], int]:
    """(each column's natural width, what borders and padding add to their sum)."""
    from rich.measure import Measurement

    options = console.options.update_width(WIDE_LIMIT)
    natural = [max(_natural(console, options, c) for c in [col.header, *col._cells]) for col in table.columns]
    try:  # rich's own account of borders and padding (what Table.__rich_measure__ adds to the cells)
        overhead = table._extra_width + sum(table._get_padding_width(i) for i in range(len(table.columns)))
    except AttributeError:
        overhead = Measurement.get(console, options, table).maximum - sum(natural)
    return natural, overhead


def _narrowed(table, console, width: int, natural: list[int], overhead: int, whole_words: bool,
              max_lines: int) -> list[int] | None:
    """Widths for the table's columns that fit ``width`` with no cell over ``max_lines`` lines (None where
    none do): each step narrows the foldable column that folds the fewest more rows per column saved."""
    widths = list(natural)
    folded: set[int] = set()
    floors = {}
    for i, col in enumerate(table.columns):
        if not col.no_wrap and col.width is None:
            fit = _min_width(console, list(col._cells), widths[i], whole_words, max_lines)
            head = max((len(w) for w in str(col.header).split()), default=1)
            floors[i] = max(fit, head, col.min_width or 1)
    # a cell takes more than one line at width w exactly where its one line is wider than w (or it has two)
    one_line = {i: [_one_line_width(c) for c in table.columns[i]._cells] for i in floors}
    while sum(widths) + overhead > width:
        excess = sum(widths) + overhead - width
        best = None
        for i, floor in floors.items():
            for w in range(floor, widths[i]):
                new = {r for r, n in enumerate(one_line[i]) if n > w and r not in folded}
                saved = widths[i] - w
                key = (0, len(new), -w) if saved >= excess else (1, len(new) / saved, -saved)
                if best is None or key < best[0]:
                    best = (key, i, w, new)
        if best is None:
            return None
        _, i, w, new = best
        widths[i] = w
        folded |= new
    return widths


def fits_unfolded(table, width: int) -> bool:
    """Whether ``table`` prints at ``width`` with every header, cell and title line on one line, measured
    without rendering it (a large table renders in seconds): its columns' natural widths fit."""
    from rich.cells import cell_len
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width)
    natural, overhead = _measure(table, console)
    titles = getattr(table, "vgprscope_titles", ())
    return sum(natural) + overhead <= width and all(cell_len(t) <= width for t, _ in titles)


def _one_line_width(cell: Any) -> float:
    """A cell's width on one line; infinite where it has a line break (it takes two lines at any width)."""
    from rich.cells import cell_len

    plain = _plain(cell)
    return float("inf") if "\n" in plain else cell_len(plain)


def _folded(table, console, widths: Sequence[int]) -> int:
    """How many rows take more than one line at ``widths``."""
    return len({r for col, w in zip(table.columns, widths) for r, c in enumerate(col._cells)
                if _one_line_width(c) > w})


def _renumber(table) -> None:
    """rich reads a column's place from its ``_index`` (the last one has no right padding): keep it true
    when columns are left out and put back."""
    for i, col in enumerate(table.columns):
        col._index = i


def drop_order(table, columns: Sequence[Any]) -> None:
    """The columns (rich columns of ``table``) the default view may leave out, first to go first, when the
    table cannot fit its width otherwise: a view states its priorities here; what is left out is named
    under the table (--wide shows every column)."""
    table.vgprscope_drop = list(columns)


def fit_columns(table, console, width: int) -> list[Any]:
    """Give the table's foldable columns (``no_wrap`` False) fixed widths so that it fits ``width`` with
    no row folded where that is possible, never cutting a word. Where it cannot, the columns named by
    :func:`drop_order` are left out, in that order, until it fits on one line a row; with none left to
    leave out, rows fold onto two lines (as few as may be), then a third; only then are words cut, and
    what still does not fit is left to rich (which then folds further). Returns the columns left out (no longer in ``table.columns``:
    the caller puts them back)."""
    if not table.columns:
        return []
    dropped: list[Any] = []
    order = [c for c in getattr(table, "vgprscope_drop", []) if c in table.columns]
    while True:
        natural, overhead = _measure(table, console)
        if sum(natural) + overhead <= width:
            return dropped
        widths = _narrowed(table, console, width, natural, overhead, True, 2)
        # a folded cell is read as two values (or a word cut in two): a column left out, and named under
        # the table, reads better; rows fold only where no column may be left out
        if (widths is not None and not _folded(table, console, widths)) or not order:
            break
        col = order.pop(0)
        table.columns.remove(col)
        _renumber(table)
        dropped.append(col)
    for whole_words, lines in ((True, 3), (False, 2)):
        if widths is not None:
            break
        widths = _narrowed(table, console, width, natural, overhead, whole_words, lines)
    for col, w, nat in zip(table.columns, widths or natural, natural):
        if w < nat:
            col.width = w
    if widths is None:
        # it cannot fit in two lines a row: let every column fold rather than have rich crop a value
        for col in table.columns:
            col.no_wrap, col.overflow = False, "fold"
    return dropped


# A title row's one cell: the row is printed as the title itself, on lines of their own across the whole
# table (a private-use character: no data cell holds it).
TITLE_MARK = "\ue000"


def add_title(table, text: str, style: str | None = "bold") -> None:
    """A row that spans the table: ``text`` on a line of its own (folded at spaces to the table's width)
    above the rows that follow, a blank line before it. It names a group of rows (a kernel, a variant)
    without taking a column, so no column narrows for a long name. Add the columns first."""
    if table.rows:
        table.rows[-1].end_section = True
    table.__dict__.setdefault("vgprscope_titles", []).append((text, style))
    table.add_row(TITLE_MARK, *[""] * (len(table.columns) - 1))


def _title_text(text: str, style: str | None, width: int, tty: bool) -> str:
    """A title folded at spaces to ``width``, styled on a terminal."""
    folded = wrap(text, width, "  ")
    if not tty or not style:
        return folded
    from rich.console import Console
    from rich.text import Text

    con = Console(file=io.StringIO(), width=width, force_terminal=True, color_system="auto", soft_wrap=False)
    con.print(Text(folded, style=style), end="")
    return con.file.getvalue()


def _put_titles(out: str, titles: Sequence[tuple[str, str | None]], width: int, tty: bool) -> str:
    """The rendered table with each title row's line replaced by its title."""
    if not titles:
        return out
    it = iter(titles)
    lines = [ln if TITLE_MARK not in ln else _title_text(*next(it), width, tty) for ln in out.splitlines()]
    return "".join(ln + "\n" for ln in lines)


def _renumbered(out: str, fn_lines: Sequence[str]) -> tuple[str, list[str]]:
    """The table text and its footnotes with the footnotes numbered in order from 1 (after some left with a
    column): each ``[n]`` marker of a footnote becomes its new number."""
    import re

    new: dict[str, str] = {}
    for ln in fn_lines:
        m = re.match(r"\[(\d+)\]", ln)
        if m:
            new[m.group(1)] = str(len(new) + 1)
    if all(k == v for k, v in new.items()):
        return out, list(fn_lines)

    def sub(m: re.Match[str]) -> str:
        return f"[{new.get(m.group(1), m.group(1))}]"

    lines = [re.sub(r"^\[(\d+)\]", sub, ln) for ln in fn_lines]
    return re.sub(r"\[(\d+)\]", sub, out), lines


def render_table(renderable, *, footnotes: Footnotes | Sequence[str] = (), notes: Sequence[str] = (),
                 wide: bool = False, width: int | None = None, elsewhere: str = "", kept: Sequence[str] = ()) -> str:
    """A rich table (or any renderable) as text for stdout: THE way a command turns a table into text.

    - ``width``: the columns to fit; default :func:`output_width` (the terminal's, else $COLUMNS, else 100
      in a pipe or file). Columns made with ``no_wrap=True`` keep one line; the others fold, so design the
      default view to need at most two lines a row at 100 columns (tests/report/test_tables.py checks).
    - ``footnotes``: a :class:`Footnotes` (cells hold its ``[n]`` markers) or lines, printed under the table
      and wrapped to the width; ``kept``: unnumbered lines after them that say what the table leaves out (what
      was not compiled); ``notes``: unnumbered lines after those (a legend: left out by ``table_alone``).
    - ``wide``: every row at its natural width (the --wide view), however wide that is.
    - A column left out for want of width (``drop_order``) is named under the table; a footnote whose
      marker stood only in it goes too, unless ``elsewhere`` (the text of other tables that share the
      footnotes) holds the marker.

    Colour only on a terminal; pipes and files get the same layout without escape codes.
    """
    import sys

    from rich.console import Console

    width = width or output_width()
    tty = _isatty(sys.stdout)
    if wide:
        from rich.measure import Measurement

        probe = Console(file=io.StringIO(), width=WIDE_LIMIT)
        width = max(width, Measurement.get(probe, probe.options, renderable).maximum)
    console = Console(file=io.StringIO(), width=width, force_terminal=tty, color_system="auto" if tty else None,
                      soft_wrap=False)
    dropped: list[Any] = []
    # a table's title is a line across the whole width, folded at spaces there: rich would fold it to
    # the table's own width, however narrow
    title = getattr(renderable, "title", None)
    head = ""
    if isinstance(title, str) and title:
        renderable.title = None
        head = _title_text(title, "italic", width, tty) + "\n"
    if not wide and hasattr(renderable, "columns"):
        # fitted for this print only: the same table printed again (--wide, another width) starts afresh
        columns = list(renderable.columns)
        saved = [(c.width, c.no_wrap, c.overflow) for c in columns]
        dropped = fit_columns(renderable, console, width)
        renderable.vgprscope_dropped = [_plain(c.header) for c in dropped]  # what the caller's notes may skip
        console.print(renderable)
        renderable.columns[:] = columns
        _renumber(renderable)
        for c, (w, nw, ov) in zip(columns, saved):
            c.width, c.no_wrap, c.overflow = w, nw, ov
    else:
        console.print(renderable)
    out = console.file.getvalue()
    if not tty:  # rich pads every line to the table's width: no trailing blanks in a log or a file
        out = "".join(ln.rstrip() + "\n" for ln in out.splitlines())
    out = head + _put_titles(out, getattr(renderable, "vgprscope_titles", ()), width, tty)
    if head:
        renderable.title = title
    fn_lines = footnotes.lines() if isinstance(footnotes, Footnotes) else list(footnotes)
    if dropped:  # a note whose marker stood only in a column left out has nothing to annotate
        gone = " ".join(_plain(c) for col in dropped for c in col._cells)
        fn_lines = [ln for ln in fn_lines if not ln.startswith("[") or (mark := ln.split("]")[0] + "]") not in gone
                    or mark in out or mark in elsewhere]
        # a legend of a column left out ("limiter: next = ...") has nothing to explain
        heads = tuple(_plain(c.header) for c in dropped)
        notes = [n for n in notes if not n.startswith(tuple(f"{h}{sep}" for h in heads for sep in (" =", ":")))]
        notes = [f"not shown at {width} columns: {', '.join(heads)} (--wide shows every column)", *notes]
        if not elsewhere:  # the notes left are numbered 1, 2, ... again, no number skipped
            out, fn_lines = _renumbered(out, fn_lines)
    if alone():  # the table alone: what is not shown stays, the legends go
        notes = [n for n in notes if n.startswith("not shown at ")]
    extra = [wrap(ln, width, "    ") for ln in fn_lines] + [wrap(ln, width, "  ") for ln in (*kept, *notes)]
    return out + "".join(e + "\n" for e in extra)


# ---- records: json / csv / markdown --------------------------------------------------------------


def csv_columns(flats: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns of rows: the union of their keys in first-seen order (rows of both vendors)."""
    header: dict[str, None] = {}
    for f in flats:
        header.update(dict.fromkeys(f))
    return list(header)


def dicts_to_csv(flats: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV, the header ``csv_columns`` of them."""
    header = csv_columns(flats)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=header, lineterminator="\n")
    w.writeheader()
    w.writerows(flats)
    return buf.getvalue()


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(_md_escape(_plain(c)) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _plain(cell: Any) -> str:
    """A cell as plain text: a rich Text loses its style, keeps its characters (markers included)."""
    return getattr(cell, "plain", None) if hasattr(cell, "plain") else str(cell)
