"""What ``vgprscope.explain`` returns: per kernel x arch, the live tensors and spill sites, with the exports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...report.machine import Machine
from ..result import TableDisplay, _machine, _n, dataframe

if TYPE_CHECKING:
    import pandas

    from .core import KernelExplanation


@dataclass(frozen=True, repr=False)
class ExplainResult(TableDisplay):
    """``vgprscope.explain``: per kernel x arch, the registers of each tensor live across each loop and the
    spill sites by source line."""

    explanations: tuple[KernelExplanation, ...]
    machine: Machine = field(default_factory=_machine, compare=False)

    def __iter__(self) -> Iterator[KernelExplanation]:
        return iter(self.explanations)

    def __len__(self) -> int:
        return len(self.explanations)

    def __repr__(self) -> str:
        failed = sum(not e.ok for e in self.explanations)
        return f"ExplainResult({_n(len(self.explanations), 'kernel')}, {failed} not explained)"

    def rows(self, what: str = "kernels") -> list[dict[str, Any]]:
        from .view import flat_rows

        return flat_rows(self.explanations, what)

    def to_pandas(self, what: str = "kernels") -> pandas.DataFrame:
        """One row per kernel (``"kernels"``), per live tensor of each loop (``"tensors"``) or per spill site
        (``"spills"``); the columns are there when no row is (a kernel without spills)."""
        from .view import ROW_COLUMNS

        return dataframe(self.rows(what), ROW_COLUMNS.get(what, ()))

    def to_json(self) -> str:
        from . import view as explain_view

        return explain_view.to_json(self.explanations, self.machine, "explain")

    def to_sarif(self) -> str:
        """Each spill site as a SARIF 2.1.0 result (``--format sarif``) at the source line the compiler gives."""
        from ... import __version__
        from ...report.sarif import spills_sarif

        files = {e.label: e.file for e in self.explanations}
        return json.dumps(spills_sarif(self.explanations, files, __version__), indent=1) + "\n"

    def markdown(self, title: str | None = "vgprscope explain", command: str | None = None) -> str:
        from . import view as explain_view

        return explain_view.to_markdown(self.explanations, self.machine, title=title, command=command)

    def _table(self, wide: bool) -> str:
        from . import view as explain_view

        return explain_view.to_table(self.explanations, self.machine, wide=wide)

    def to_html(self, path: str | Path | None = None, command: str | None = None,
                url_template: str | None = None) -> str:
        """The HTML report (``--format html``): one self-contained page with charts drawn from these explanations;
        written to ``path`` (atomically) where given; the page's text either way. ``command``: what the page
        says made it (default: this call from Python)."""
        from ..result import html_out, python_command, source_url
        from .view import to_html

        url, commit = source_url(self.machine, url_template)
        return html_out(to_html(self.explanations, self.machine, command or python_command("explain"),
                                url_template=url, commit=commit), path)
