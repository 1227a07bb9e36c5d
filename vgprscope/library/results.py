"""What the register gate's calls return (``check``, ``baseline_save``): frozen results holding the typed data,
with the CLI's exports. The other calls' results live with their question (``analysis/<question>/result.py``).

Each result keeps its records (or lines, frontiers, explanations, verdicts) as attributes; ``to_pandas()``
gives one row per record with the columns of the command's CSV export, flattened by the same function the
CSV export uses (the gate's verdicts, ``check`` and ``diff``: one row per entry and metric, ``gate_rows``);
``to_json()`` gives the command's JSON export, byte for byte what ``--format json`` prints; ``table()`` the
terminal table, ``markdown()`` the markdown a notebook shows (``NotebookDisplay``). pandas is imported by
``to_pandas`` only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.result import NotebookDisplay, TableDisplay, _machine, dataframe
from ..core import exit_codes
from ..report.machine import Machine

if TYPE_CHECKING:
    import pandas

    from ..gate.baseline import Baseline, Entry
    from ..gate.config import GateConfig
    from ..gate.diff import GateResult
    from ..report.sarif import Location


# The gate's verdicts as data, for check and diff alike: one row per entry and metric (long), the columns of
# diff's CSV (``diff_view.CSV_FIELDS``) first. Long rather than wide: the metrics differ by vendor (an AMD
# entry has vgpr_total, an NVIDIA one regs), so a wide frame of both is mostly empty columns, and a long one
# filters, groups and pivots by metric as is.
GATE_FIELDS = ("key", "variant", "kernel", "arch", "slot", "before", "after", "result", "metric", "value_before",
               "value_after", "delta", "verdict", "fails")


def gate_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The gate's JSON export (``gate.report.to_json``) -> one row per entry and metric: ``before`` /
    ``after`` the baseline's and this run's Triton, ``value_before`` / ``value_after`` the metric's values,
    ``delta``, ``verdict`` (the metric's, by the gate's rule), ``fails``; then the entry's fields (config
    keys, state, ``entry_change``, ``entry_fails``, ``accepted``, each side's status) and the metric's rule
    (``rule``, ``rule_text``, ``metric_change``). A new or missing entry has a row per metric of its one
    side (verdict ``n/c``); an entry with no metric (a failed compile on both sides) one row without."""
    before, after = doc.get("baseline_triton_version"), doc.get("triton_version")
    out = []
    for row in doc["rows"]:
        head = {"key": row["key"], "variant": row["variant"], "kernel": row["kernel"], "arch": row["arch"],
                "slot": row["slot"], "before": before, "after": after, "result": row["result"]}
        entry = {"config_key": row["config_key"], "config_changed": row["config_changed"],
                 "baseline_config_key": row["baseline_config_key"], "state": row["state"],
                 "entry_change": row["change"], "entry_fails": row["fails"], "accepted": row["accepted"],
                 "status_baseline": row["status"]["baseline"], "status_current": row["status"]["current"],
                 "note": row.get("note")}  # e.g. compiled from the capture's snapshot
        metrics = [{"metric": m["metric"], "value_before": m["baseline"], "value_after": m["current"],
                    "delta": m["delta"], "verdict": m["verdict"], "fails": m["fails"], "rule": m["rule"],
                    "rule_text": m["rule_text"], "metric_change": m["change"],
                    # a count that grew within (or across) its occupancy step: what is left before the next
                    "headroom": (m.get("cliff") or {}).get("headroom")} for m in row["metrics"]]
        one_side = [(name, value, "value_before" if side == "baseline" else "value_after")
                    for side in ("baseline", "current") for name, value in (row.get(side) or {}).items()]
        metrics += [{"metric": name, "value_before": None, "value_after": None, column: value, "delta": None,
                     "verdict": "n/c", "fails": row["fails"]} for name, value, column in one_side]
        if not metrics:
            metrics = [{"metric": None, "fails": row["fails"]}]
        extra = ("rule", "rule_text", "metric_change", "headroom")
        empty = dict.fromkeys(GATE_FIELDS[8:]) | dict.fromkeys(extra)
        for m in metrics:
            full = head | empty | m
            out.append({k: full[k] for k in GATE_FIELDS} | entry | {k: full[k] for k in extra})
    return out


def underived(status: str) -> bool:
    """Whether a row's status says the gate could not derive what the current source launches: "capture again"
    (the call reads what the capture did not record), or what the kernel needs does not import here."""
    from ..runtime.derive import STALE
    from ..runtime.static import UNDERIVABLE

    return status.endswith(STALE) or UNDERIVABLE in status


@dataclass(frozen=True, repr=False)
class CheckResult(TableDisplay):
    """``vgprscope.check``: the gate's verdict on every entry (``result``: ``gate.diff.GateResult``), the
    entries this run compiled, and the exit code the CLI would give (0 passed, 1 failed, 2 a captured launch
    the current source makes could not be derived: its row says "capture again", or what it needs that does not
    import here)."""

    result: GateResult
    entries: tuple[Entry, ...]
    baseline: str
    machine: Machine = field(default_factory=_machine, compare=False)
    config: GateConfig | None = field(default=None, compare=False)  # the configuration the run used
    # (label, kernel) -> the file defining the kernel, as the run's sources name it (``locations``)
    files: Mapping[tuple[str, str], str] = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return f"CheckResult(passed={self.passed}, {len(self.result.entries)} entries)"

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def judged(self) -> bool:
        """Whether the gate could judge every entry: never a verdict on a launch it did not derive."""
        return not any(underived(e.status) for e in self.entries)

    @property
    def exit_code(self) -> int:
        return exit_codes.of_gate(self.judged, self.passed)

    def rows(self) -> list[dict[str, Any]]:
        """One row per entry and metric, the shape of ``DiffResult.to_pandas()`` (``gate_rows``)."""
        return gate_rows(json.loads(self.to_json()))

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def locations(self) -> dict[str, Location]:
        """Each entry's kernel at its ``def`` line (SARIF, the HTML report, the workflow annotations)."""
        from ..gate.sarif import kernel_locations

        return kernel_locations(self.result, self.files)

    def to_sarif(self) -> str:
        """The gate's regressions as SARIF 2.1.0 (``--format sarif``), each at its kernel's ``def`` line."""
        from .. import __version__
        from ..gate.sarif import gate_sarif

        log = gate_sarif(self.result, self.locations(), __version__, self.exit_code)
        return json.dumps(log, indent=1) + "\n"

    def to_json(self) -> str:
        from ..gate import report

        return report.to_json(self.result, self.machine.as_dict(), self.baseline, exit_code=self.exit_code)

    def _table(self, wide: bool) -> str:
        from ..gate import report

        return report.to_table(self.result, self.machine.fields(), self.baseline, wide=wide)

    def markdown(self) -> str:
        """``check --format md``: the verdict, the changed entries, the unchanged ones folded away."""
        from ..gate import report

        return report.to_markdown(self.result, self.machine.line(), self.baseline)

    def to_html(self, path: str | Path | None = None, command: str | None = None,
                url_template: str | None = None) -> str:
        """The HTML report (``--format html``): one self-contained page with charts drawn from these verdicts;
        written to ``path`` (atomically) where given; the page's text either way. ``command``: what the page
        says made it (default: this call from Python)."""
        from ..analysis.result import html_out, python_command, source_url
        from ..gate import html as gate_html
        from ..report.page import versions_of

        given = url_template if url_template is not None else (self.config.source_url if self.config else None)
        url, commit = source_url(self.machine, given)
        records = [gate_html.entry_record(e) for e in self.entries]
        versions = [f"Triton {self.result.current_triton}", *(v for v in versions_of(records)
                                                              if not v.startswith("Triton "))]
        text = gate_html.to_html(self.result, self.machine, self.baseline, command="check",
                              command_line=command or python_command("check"),
                              locations=self.locations(), url_template=url, commit=commit,
                              exit_code=self.exit_code, versions=versions)
        return html_out(text, path)


@dataclass(frozen=True, repr=False)
class BaselineSaveResult(NotebookDisplay):
    """``vgprscope.baseline_save``: the entries compiled, and the baseline written to ``path`` (None when no
    entry compiled: a baseline of failures gates nothing, and nothing was written)."""

    entries: tuple[Entry, ...]
    written: Baseline | None
    path: Path
    triton_version: str
    config: GateConfig | None = field(default=None, compare=False)

    def _said(self) -> str:
        what = f"wrote {len(self.written.entries)} entries" if self.written is not None else "nothing written"
        return f"{self.path}: {what}, Triton {self.triton_version}"

    def __repr__(self) -> str:
        return f"BaselineSaveResult({self._said()})"

    @property
    def failed(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.status != "ok")

    def rows(self) -> list[dict[str, Any]]:
        """One row per entry compiled: the baseline file's fields."""
        return [dict(e.as_json(), key=e.key) for e in self.entries]

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        return self.written.to_json() if self.written is not None else json.dumps({"entries": {}}, indent=1) + "\n"

    def markdown(self) -> str:
        """What was saved: one row per entry compiled, its status and the metrics the gate compares."""
        from ..report.formats import md_table

        metrics = list(dict.fromkeys(m for e in self.entries for m in e.metrics))
        rows = [[e.key, e.status, *(e.metrics.get(m, "-") for m in metrics)] for e in self.entries]
        head = f"## vgprscope baseline save: {self._said()}\n\n"
        return head + md_table(["entry", "status", *metrics], rows)
