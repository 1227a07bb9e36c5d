"""What every analysis's result shares: the machine line a result is headed with, rows as a DataFrame with the
CSV export's columns (pandas imported by ``to_pandas`` only), the notebook display, the one-line counts.

Each result (``analysis/<question>/result.py``) keeps its records (or lines, frontiers, explanations,
verdicts) as attributes; ``to_pandas()`` gives one row per record with the columns of the command's CSV
export, flattened by the same function the CSV export uses; ``to_json()`` gives the command's JSON export,
byte for byte what ``--format json`` prints; ``table()`` the terminal table, ``markdown()`` the markdown a
notebook shows (``NotebookDisplay``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import Record
from ..report.machine import Machine

if TYPE_CHECKING:
    import pandas


def _machine() -> Machine:
    from ..report.machine import compile_only

    return compile_only()


def dataframe(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> pandas.DataFrame:
    """Rows as a DataFrame whose columns are the CSV export's, in its order (``formats.csv_columns``);
    ``columns``: those every row kind has, there (after the rows' own) when no row has them, none at all."""
    from ..core.errors import VgprscopeError
    from ..report.formats import csv_columns

    try:
        import pandas as pd
    except ModuleNotFoundError:  # a dependency of vgprscope's, missing from a broken install
        raise VgprscopeError("to_pandas() needs pandas, which is not installed: pip install 'pandas>=2'") from None
    # nullable dtypes: a count stays an integer where another vendor's rows leave its column empty; a column
    # of floats stays floats where each happens to be whole (modelled bytes), as the CSV writes them
    rows = list(rows)
    seen = csv_columns(rows)
    columns = seen + [c for c in columns if c not in seen]
    floats = [c for c in columns if any(isinstance(r.get(c), float) for r in rows)]
    df = pd.DataFrame.from_records(rows, columns=columns).convert_dtypes()
    if floats:
        df[floats] = df[floats].astype("Float64")
    return df


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _counts(records: Sequence[Record]) -> str:
    failed = sum(not r.ok for r in records)
    archs = ", ".join(dict.fromkeys(r.arch for r in records)) or "none"
    return f"{_n(len(records), 'record')} ({len(records) - failed} ok, {failed} failed; archs: {archs})"


def html_out(text: str, path: str | Path | None) -> str:
    """A result's HTML report, written to ``path`` (atomically) where given; the text either way."""
    if path is not None:
        from ..core.fsutil import atomic_write

        atomic_write(Path(path), text)
    return text


def python_command(call: str) -> str:
    """What made a report from Python (the library does not know its caller's arguments)."""
    return f"vgprscope.{call}(...) from Python"


def source_url(machine: Machine, url_template: str | None = None) -> tuple[str, str]:
    """(the repository URL template, the commit) an HTML report links kernels' files with: ``url_template``,
    else ``source_url`` of the nearest ``[tool.vgprscope]`` ("" where none or unreadable)."""
    if url_template is None:
        from ..core.errors import VgprscopeError
        from ..gate.config import source_url_of

        try:
            url_template = source_url_of()
        except VgprscopeError:  # an unreadable pyproject: the report links the files themselves
            url_template = ""
    return url_template, machine.project.rpartition(" ")[2] if machine.project else ""


class NotebookDisplay:
    """A result in a notebook (Jupyter, VS Code): its table, as ``markdown()`` writes it (what ``--format md``
    prints), rendered by the notebook as markdown or HTML; ``repr()`` stays the one-line summary. Built when
    shown: nothing (no pandas) is imported for it."""

    def markdown(self) -> str:
        raise NotImplementedError

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def _repr_html_(self) -> str:
        """The same table as HTML, for the frontends that render HTML and not markdown (exported notebooks,
        nbviewer, some hosted notebooks); Jupyter prefers it when both are given."""
        from ..report.html import markdown_to_html

        return markdown_to_html(self.markdown())


class TableDisplay(NotebookDisplay):
    """A result with a terminal table (``_table``: the CLI's, with the machine line and the legends)."""

    def _table(self, wide: bool) -> str:
        raise NotImplementedError

    def table(self, wide: bool = False, alone: bool = False) -> str:
        """The terminal table (``alone``: without the machine line and the legends, as a notebook shows it;
        the footnotes and what is not shown stay)."""
        from ..report.formats import table_alone

        with table_alone(alone):
            text = self._table(wide)
        return text.lstrip("\n") if alone else text
