"""What the library's calls return: frozen results holding the typed data, with the CLI's exports.

Each result keeps its records (or lines, frontiers, explanations, verdicts) as attributes; ``to_pandas()``
gives one row per record with the columns of the command's CSV export, flattened by the same function the
CSV export uses (the gate's verdicts, ``check`` and ``diff``: one row per entry and metric, ``gate_rows``);
``to_json()`` gives the command's JSON export, byte for byte what ``--format json`` prints; ``table()`` the
terminal table, ``markdown()`` the markdown a notebook shows (``NotebookDisplay``). pandas is imported by
``to_pandas`` only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import Record
from ..report.machine import Machine

if TYPE_CHECKING:
    import pandas

    from ..analysis.compare.core import VariantLine
    from ..compile.toolchains import Toolchain
    from ..analysis.explain.core import KernelExplanation
    from ..analysis.frontier.core import KernelFrontier
    from ..gate.baseline import Baseline, Entry
    from ..gate.config import GateConfig
    from ..gate.diff import GateResult
    from ..report.sarif import Location
    from ..analysis.history.core import HistoryRow
    from ..sources.triton_cache import CacheEntry


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


class NotebookDisplay:
    """A result in a notebook (Jupyter, VS Code): its table, as ``markdown()`` writes it (what ``--format md``
    prints), rendered by the notebook; ``repr()`` stays the one-line summary. Built when shown: nothing (no
    pandas) is imported for it."""

    def markdown(self) -> str:
        raise NotImplementedError

    def _repr_markdown_(self) -> str:
        return self.markdown()


@dataclass(frozen=True, repr=False)
class AnalyzeResult(NotebookDisplay):
    """``vgprscope.analyze``: one record per kernel x arch x config (a failed compile is a record with its
    error as ``status``). Iterating gives the records."""

    records: tuple[Record, ...]
    command: str = "analyze"
    machine: Machine = field(default_factory=_machine, compare=False)
    # the Tritons that compiled (``triton=``), oldest first; () for the installed one as is
    toolchains: tuple[Toolchain, ...] = ()

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
        from ..analysis.analyze.view import record_rows

        return record_rows(self.records)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from ..analysis.analyze.view import to_json

        return to_json(self.records, self.machine, self.command)

    def history(self) -> list[HistoryRow]:
        """Each kernel x config x arch release by release (several ``triton=``), oldest first, with the
        releases where it starts to spill, crosses an occupancy step or drops occupancy (``.events()``)."""
        from ..analysis.history.core import history

        labels = [tc.label for tc in self.toolchains] or [""]
        by_side: dict[str, list[Record]] = {label: [] for label in labels}
        for r in self.records:
            by_side.setdefault(r.toolchain or labels[0], []).append(r)
        return history(list(by_side.items()))

    def markdown(self, title: str | None = None) -> str:
        """The CLI's ``--format md`` of these records (several toolchains: the history)."""
        if len(self.toolchains) > 1:
            from ..analysis.history import view as history_view

            return history_view.to_markdown(self.history(), self.machine)
        from ..analysis.analyze import view as records_view

        return records_view.to_markdown(self.records, self.machine, title=title or f"vgprscope {self.command}")

    def table(self, wide: bool = False) -> str:
        """The CLI's terminal table of these records (several toolchains: the history)."""
        from ..analysis.analyze import view as records_view

        if len(self.toolchains) > 1:
            from ..analysis.history import view as history_view

            return history_view.to_table(self.history(), self.machine, wide=wide)
        naming = records_view.SCAN if self.command == "scan" else records_view.ANALYZE
        return records_view.table_text(self.records, self.machine, title=f"vgprscope {self.command}", wide=wide,
                                       naming=naming)


@dataclass(frozen=True, repr=False)
class ScanResult(AnalyzeResult):
    """``vgprscope.scan``: the kernels of a Triton cache, read as stored and retargeted (``records``), with
    every entry read (``entries``: partial or corrupt ones carry their reason)."""

    command: str = "scan"
    directory: Path = Path()
    entries: tuple[CacheEntry, ...] = ()
    summary: str = ""


@dataclass(frozen=True, repr=False)
class CompareResult(NotebookDisplay):
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

    def __repr__(self) -> str:
        return f"CompareResult({len(self.per_arch)} tables; {_counts(self.records)})"

    @property
    def lines(self) -> tuple[VariantLine, ...]:
        return tuple(ln for lines in self.per_arch.values() for ln in lines)

    def _per_arch(self) -> dict[str, list[VariantLine]]:
        return {k: list(v) for k, v in self.per_arch.items()}

    def rows(self) -> list[dict[str, Any]]:
        from ..analysis.compare.view import csv_rows

        return csv_rows(self._per_arch(), self.timings)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from ..analysis.compare import view as compare_view

        return compare_view.to_json(self._per_arch(), self.machine, self.timings)  # the frontier has its own key

    def columns(self) -> tuple[tuple[str, ...], Any]:
        """The columns beside the view's own: the frontier's two (``frontier``), then the timings
        (``bench``), each line's cells keyed by table and variant ('-' where a line has none)."""
        from .tasks import FRONTIER_HEADERS, frontier_cells, merge_columns

        per_arch = self._per_arch()
        fronts: tuple[str, ...] = FRONTIER_HEADERS if any(ln.frontier is not None for ln in self.lines) else ()
        cells = frontier_cells(per_arch) if fronts else None
        return merge_columns(per_arch, cells, fronts, self.timings, self.timing_headers)

    def table(self, wide: bool = False) -> str:
        """The CLI's tables (with ``frontier``, its two columns: each strategy's spill-free occupancy and the
        next level's spills; with ``bench``, the timings)."""
        from ..analysis.compare import view as compare_view

        headers, extra = self.columns()
        return compare_view.tables_text(self._per_arch(), self.machine, headers, extra, wide=wide)

    def markdown(self, title: str = "vgprscope compare") -> str:
        from ..analysis.compare import view as compare_view

        headers, extra = self.columns()
        return compare_view.tables_md(self._per_arch(), self.machine, title, headers, extra)

    def to_csv(self) -> str:
        from ..analysis.compare import view as compare_view

        return compare_view.to_csv(self._per_arch(), self.timings)


@dataclass(frozen=True, repr=False)
class FrontierResult(NotebookDisplay):
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
        from ..analysis.frontier.view import csv_rows

        return csv_rows(self.frontiers)

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_json(self) -> str:
        from ..analysis.frontier import view as frontier_view

        return frontier_view.to_json(self.frontiers, self.machine)

    def table(self, wide: bool = False) -> str:
        from ..analysis.frontier import view as frontier_view

        return frontier_view.tables_text(self.frontiers, self.machine, wide=wide)

    def markdown(self, title: str = "vgprscope frontier") -> str:
        from ..analysis.frontier import view as frontier_view

        return frontier_view.tables_md(self.frontiers, self.machine, title)

    def to_csv(self) -> str:
        from ..analysis.frontier import view as frontier_view

        return frontier_view.to_csv(self.frontiers)


@dataclass(frozen=True, repr=False)
class ExplainResult(NotebookDisplay):
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
        from ..analysis.explain.view import flat_rows

        return flat_rows(self.explanations, what)

    def to_pandas(self, what: str = "kernels") -> pandas.DataFrame:
        """One row per kernel (``"kernels"``), per live tensor of each loop (``"tensors"``) or per spill site
        (``"spills"``); the columns are there when no row is (a kernel without spills)."""
        from ..analysis.explain.view import ROW_COLUMNS

        return dataframe(self.rows(what), ROW_COLUMNS.get(what, ()))

    def to_json(self) -> str:
        from ..analysis.explain import view as explain_view

        return explain_view.to_json(self.explanations, self.machine, "explain")

    def to_sarif(self) -> str:
        """Each spill site as a SARIF 2.1.0 result (``--format sarif``) at the source line the compiler gives."""
        from .. import __version__
        from ..report.sarif import spills_sarif

        files = {e.label: e.file for e in self.explanations}
        return json.dumps(spills_sarif(self.explanations, files, __version__), indent=1) + "\n"

    def markdown(self, title: str | None = "vgprscope explain", command: str | None = None) -> str:
        from ..analysis.explain import view as explain_view

        return explain_view.to_markdown(self.explanations, self.machine, title=title, command=command)

    def table(self, wide: bool = False) -> str:
        from ..analysis.explain import view as explain_view

        return explain_view.to_table(self.explanations, self.machine, wide=wide)


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


@dataclass(frozen=True, repr=False)
class CheckResult(NotebookDisplay):
    """``vgprscope.check``: the gate's verdict on every entry (``result``: ``gate.diff.GateResult``), the
    entries this run compiled, and the exit code the CLI would give (0 passed, 1 failed, 2 a captured launch
    the current source makes could not be derived: its row says "capture again")."""

    result: GateResult
    entries: tuple[Entry, ...]
    baseline: str
    machine: Machine = field(default_factory=_machine, compare=False)
    config: GateConfig | None = field(default=None, compare=False)  # the configuration the run used

    def __repr__(self) -> str:
        return f"CheckResult(passed={self.passed}, {len(self.result.entries)} entries)"

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def exit_code(self) -> int:
        from ..compile.derive import STALE

        if any(e.status.endswith(STALE) for e in self.entries):
            return 2  # never a verdict on a launch the gate did not derive
        return 0 if self.result.passed else 1

    def rows(self) -> list[dict[str, Any]]:
        """One row per entry and metric, the shape of ``DiffResult.to_pandas()`` (``gate_rows``)."""
        return gate_rows(json.loads(self.to_json()))

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.rows())

    def to_sarif(self) -> str:
        """The gate's regressions as SARIF 2.1.0 (``--format sarif``), each at its kernel's ``def`` line."""
        from .. import __version__
        from ..gate.sarif import gate_sarif

        log = gate_sarif(self.result, kernel_locations(self.config, self.result), __version__, self.exit_code)
        return json.dumps(log, indent=1) + "\n"

    def to_json(self) -> str:
        from ..gate import report

        return report.to_json(self.result, self.machine.as_dict(), self.baseline, exit_code=self.exit_code)

    def table(self, wide: bool = False) -> str:
        from ..gate import report

        return report.to_table(self.result, self.machine.fields(), self.baseline, wide=wide)

    def markdown(self) -> str:
        """``check --format md``: the verdict, the changed entries, the unchanged ones folded away."""
        from ..gate import report

        return report.to_markdown(self.result, self.machine.line(), self.baseline)


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


def kernel_locations(config: GateConfig | None, result: GateResult) -> dict[str, Location]:
    """Each gate entry's kernel, located at its ``def`` line: a bundled or kernel-directory variant's file, a
    captured kernel's file (as the capture records it); an entry whose file is gone has none."""
    from ..report.sarif import kernel_location

    files: dict[tuple[str, str], str] = {}
    if config is not None:
        from .selection import selected_variants

        for v in selected_variants(config.set):
            for name in v.kernels:
                files[(v.name, name)] = str(v.file)
        if config.set.capture is not None and Path(config.set.capture).is_file():
            from ..capture.model import load_capture

            for kernel in load_capture(config.set.capture).kernels:
                files.setdefault((kernel.label, kernel.qualname), kernel.file)
                files.setdefault(("inductor", kernel.qualname), kernel.file)
    out: dict[str, Location] = {}
    for d in result.entries:
        e = d.entry
        where = kernel_location(files.get((e.variant, e.kernel)), e.kernel)
        if where is not None:
            out[d.key] = where
    return out
