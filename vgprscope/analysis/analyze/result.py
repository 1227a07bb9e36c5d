"""What ``vgprscope.analyze`` returns: the records, with the command's exports and views."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.records import Record
from ...report.machine import Machine
from ..result import TableDisplay, _counts, _machine, dataframe

if TYPE_CHECKING:
    import pandas

    from ...compile.toolchains import Toolchain
    from ..history.core import HistoryRow


@dataclass(frozen=True, repr=False)
class AnalyzeResult(TableDisplay):
    """``vgprscope.analyze``: one record per kernel x arch x config (a failed compile is a record with its
    error as ``status``). Iterating gives the records."""

    records: tuple[Record, ...]
    command: str = "analyze"
    machine: Machine = field(default_factory=_machine, compare=False)
    # the Tritons that compiled (``triton=``), oldest first; () for the installed one as is
    toolchains: tuple[Toolchain, ...] = ()
    # the rows the kernels' source does not take (a variant written for other archs, a value outside its
    # range: ``Record.refused``): not records of the table, a note under it
    refused: tuple[Record, ...] = ()

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_counts(self.records)})"

    @property
    def ok(self) -> tuple[Record, ...]:
        """The records that compiled and can launch."""
        return tuple(r for r in self.records if r.ok)

    @property
    def failed(self) -> tuple[Record, ...]:
        return tuple(r for r in self.records if not r.ok)

    def rows(self) -> list[dict[str, Any]]:
        """The CSV export's rows (``analysis.analyze.view.record_rows``)."""
        from .view import record_rows

        return record_rows(self.records)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from .view import to_json

        return to_json(self.records, self.machine, self.command, refused=self.refused)

    def history(self) -> list[HistoryRow]:
        """Each kernel x config x arch release by release (several ``triton=``), oldest first, with the
        releases where it starts to spill, crosses an occupancy step or drops occupancy (``.events()``)."""
        from ..history.core import history

        labels = [tc.label for tc in self.toolchains] or [""]
        by_side: dict[str, list[Record]] = {label: [] for label in labels}
        for r in self.records:
            by_side.setdefault(r.toolchain or labels[0], []).append(r)
        return history(list(by_side.items()))

    def markdown(self, title: str | None = None) -> str:
        """The CLI's ``--format md`` of these records (several toolchains: the history)."""
        if len(self.toolchains) > 1:
            from ..history import view as history_view

            return history_view.to_markdown(self.history(), self.machine)
        from . import view as records_view

        return records_view.to_markdown(self.records, self.machine, title=title or f"vgprscope {self.command}",
                                        refused=self.refused)

    def _table(self, wide: bool) -> str:
        """The CLI's terminal table of these records (several toolchains: the history)."""
        from . import view as records_view

        if len(self.toolchains) > 1:
            from ..history import view as history_view

            return history_view.to_table(self.history(), self.machine, wide=wide)
        naming = records_view.SCAN if self.command == "scan" else records_view.ANALYZE
        return records_view.table_text(self.records, self.machine, title=f"vgprscope {self.command}", wide=wide,
                                       naming=naming, refused=self.refused)

    def to_html(self, path: str | Path | None = None, command: str | None = None) -> str:
        """The HTML report (``--format html``): one self-contained page with charts drawn from these records;
        written to ``path`` (atomically) where given; the page's text either way. ``command``: what the page
        says made it (default: this call from Python)."""
        from ..result import html_out, python_command
        from .view import to_html

        return html_out(to_html(self.records, self.machine, command or python_command(self.command),
                                title=f"vgprscope {self.command}", refused=self.refused), path)
