"""What ``vgprscope.frontier`` returns: per kernel x arch x config, every occupancy level compiled."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...report.machine import Machine
from ..result import TableDisplay, _machine, _n, dataframe

if TYPE_CHECKING:
    import pandas

    from .core import KernelFrontier


@dataclass(frozen=True, repr=False)
class FrontierResult(TableDisplay):
    """``vgprscope.frontier``: per kernel x arch x config, every occupancy level compiled and what it gave."""

    frontiers: tuple[KernelFrontier, ...]
    machine: Machine = field(default_factory=_machine, compare=False)

    def __iter__(self) -> Iterator[KernelFrontier]:
        return iter(self.frontiers)

    def __len__(self) -> int:
        return len(self.frontiers)

    def __repr__(self) -> str:
        levels = sum(len(kf.levels) for kf in self.frontiers)
        return f"FrontierResult({_n(len(self.frontiers), 'kernel')}, {_n(levels, 'level')})"

    def rows(self) -> list[dict[str, Any]]:
        from .view import csv_rows

        return csv_rows(self.frontiers)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from . import view as frontier_view

        return frontier_view.to_json(self.frontiers, self.machine)

    def _table(self, wide: bool) -> str:
        from . import view as frontier_view

        return frontier_view.tables_text(self.frontiers, self.machine, wide=wide)

    def markdown(self, title: str = "vgprscope frontier") -> str:
        from . import view as frontier_view

        return frontier_view.tables_md(self.frontiers, self.machine, title)

    def to_csv(self) -> str:
        from . import view as frontier_view

        return frontier_view.to_csv(self.frontiers)

    def to_html(self, path: str | Path | None = None, command: str | None = None) -> str:
        """The HTML report (``--format html``): one self-contained page with charts drawn from these levels;
        written to ``path`` (atomically) where given; the page's text either way. ``command``: what the page
        says made it (default: this call from Python)."""
        from ..result import html_out, python_command
        from .view import to_html

        return html_out(to_html(self.frontiers, self.machine, command or python_command("frontier")), path)
