"""What ``vgprscope.compare`` returns: per table, one line per variant, with the command's exports and views."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.records import Record
from ...report.machine import Machine
from ..result import TableDisplay, _counts, _machine, dataframe

if TYPE_CHECKING:
    import pandas

    from .core import VariantLine


@dataclass(frozen=True, repr=False)
class CompareResult(TableDisplay):
    """``vgprscope.compare``: per table (an arch, and in a grid the point's label), one line per variant,
    its kernels' records in ``VariantLine.kernels``; ``records`` holds every record compiled."""

    per_arch: Mapping[str, tuple[VariantLine, ...]]
    records: tuple[Record, ...]
    machine: Machine = field(default_factory=_machine, compare=False)
    # ``bench``: per table and variant line, the GPU's timing cells (``timing_headers``); the machine is then
    # the GPU's. ``notes``: why there are none (no GPU).
    timings: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None
    timing_headers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # the variants' rows not compared: written for other archs, a value outside their range (a note each)
    refused: tuple[Record, ...] = ()

    def __repr__(self) -> str:
        return f"CompareResult({len(self.per_arch)} tables; {_counts(self.records)})"

    @property
    def lines(self) -> tuple[VariantLine, ...]:
        return tuple(ln for lines in self.per_arch.values() for ln in lines)

    def _per_arch(self) -> dict[str, list[VariantLine]]:
        return {k: list(v) for k, v in self.per_arch.items()}

    def rows(self) -> list[dict[str, Any]]:
        from .view import csv_rows

        return csv_rows(self._per_arch(), self.timings)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from . import view as compare_view

        # the frontier has its own key
        return compare_view.to_json(self._per_arch(), self.machine, self.timings, refused=self.refused)

    def columns(self) -> tuple[tuple[str, ...], Any]:
        """The columns beside the view's own: the frontier's two (``frontier``), then the timings
        (``bench``), each line's cells keyed by table and variant ('-' where a line has none)."""
        from .view import FRONTIER_HEADERS, frontier_cells, merge_columns

        per_arch = self._per_arch()
        fronts: tuple[str, ...] = FRONTIER_HEADERS if any(ln.frontier is not None for ln in self.lines) else ()
        cells = frontier_cells(per_arch) if fronts else None
        return merge_columns(per_arch, cells, fronts, self.timings, self.timing_headers)

    def _table(self, wide: bool) -> str:
        """The CLI's tables (with ``frontier``, its two columns: each strategy's spill-free occupancy and the
        next level's spills; with ``bench``, the timings)."""
        from . import view as compare_view

        headers, extra = self.columns()
        return compare_view.tables_text(self._per_arch(), self.machine, headers, extra, wide=wide,
                                        refused=self.refused)

    def markdown(self, title: str = "vgprscope compare") -> str:
        from . import view as compare_view

        headers, extra = self.columns()
        return compare_view.tables_md(self._per_arch(), self.machine, title, headers, extra, refused=self.refused)

    def to_csv(self) -> str:
        from . import view as compare_view

        return compare_view.to_csv(self._per_arch(), self.timings)

    def to_html(self, path: str | Path | None = None, command: str | None = None) -> str:
        """The HTML report (``--format html``): one self-contained page with charts drawn from these lines;
        written to ``path`` (atomically) where given; the page's text either way. ``command``: what the page
        says made it (default: this call from Python)."""
        from ..result import html_out, python_command
        from .view import to_html

        headers, extra = self.columns()
        return html_out(to_html(self._per_arch(), self.machine, command or python_command("compare"),
                                extra_headers=headers, extra=extra, refused=self.refused), path)
