"""What ``vgprscope.diff`` returns: the core's diff of two toolchains (``vgprscope.analysis.diff.core.SidesDiff``) with the
library's exports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core import exit_codes
from ...report.machine import Machine
from ..result import TableDisplay, _machine, dataframe
from .core import SidesDiff

if TYPE_CHECKING:
    import pandas

    from ...report.sarif import Location


@dataclass(frozen=True, repr=False)
class DiffResult(SidesDiff, TableDisplay):
    """``vgprscope.diff``: the gate's verdict on the after side against the before side, per kernel x config
    x arch (``gate``), each regressed kernel's spill sites before and after (``spills``), the records of
    both sides; ``summary()`` the one line of what moved."""

    machine: Machine = field(default_factory=_machine, compare=False)

    @classmethod
    def of(cls, core: SidesDiff) -> DiffResult:
        from dataclasses import fields as fields_of

        return cls(**{f.name: getattr(core, f.name) for f in fields_of(SidesDiff)})

    def __repr__(self) -> str:
        return f"DiffResult({self.summary()})"

    @property
    def exit_code(self) -> int:
        """The code ``vgprscope diff`` exits with: 0 passed, 1 a regression, 2 not judged (``judged``)."""
        return exit_codes.of_gate(self.judged, self.passed)

    def rows(self) -> list[dict[str, Any]]:
        """The CSV export's rows: one per entry and metric, both sides, the change, the verdict."""
        from .view import csv_rows

        return csv_rows(self)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from . import view as diff_view

        return diff_view.to_json(self, self.machine)

    def _table(self, wide: bool) -> str:
        from . import view as diff_view

        return diff_view.to_table(self, self.machine, wide=wide)

    def markdown(self) -> str:
        from . import view as diff_view

        return diff_view.to_markdown(self, self.machine)

    def to_csv(self) -> str:
        from . import view as diff_view

        return diff_view.to_csv(self)

    def to_sarif(self) -> str:
        """The after side's regressions as SARIF 2.1.0 (``--format sarif``), each at its kernel's ``def`` line."""
        import json

        from ... import __version__
        from ...gate.sarif import gate_sarif

        log = gate_sarif(self.gate, self.locations(), __version__, 0 if self.passed else 1)
        return json.dumps(log, indent=1) + "\n"

    def locations(self) -> dict[str, Location]:
        """Each entry's kernel at its ``def`` line in its file (as the records name it); none where it is gone."""
        from ...gate.sarif import kernel_locations

        return kernel_locations(self.gate, {(r.variant, r.kernel): r.identity.file
                                            for r in (*self.records_after, *self.records_before)
                                            if r.identity is not None})

    def to_html(self, path: str | Path | None = None, command: str | None = None,
                url_template: str | None = None) -> str:
        """The HTML report (``--format html``): one self-contained page with charts drawn from these verdicts;
        written to ``path`` (atomically) where given; the page's text either way. ``command``: what the page
        says made it (default: this call from Python)."""
        from ..result import html_out, python_command, source_url
        from .view import to_html

        url, commit = source_url(self.machine, url_template)
        return html_out(to_html(self, self.machine, command or python_command("diff"), self.locations(), url,
                                commit), path)
