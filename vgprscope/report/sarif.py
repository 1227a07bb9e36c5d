"""SARIF 2.1.0 (Static Analysis Results Interchange Format) for code scanning: the gate's regressions (``check``,
``diff``) and explain's spill sites, each located in the user's own source.

One result per failing metric of an entry (``vgprscope.<metric>``: ``vgprscope.vgpr_total``,
``vgprscope.occupancy``, ...), per entry that went missing (``vgprscope.missing``) or stopped compiling
(``vgprscope.status``), at the line of the kernel's ``def`` in its file; a growth the rules let pass is a
``warning``, a failure an ``error``. Explain adds one result per spill site (``vgprscope.spill``) at the
source line the compiler attributes it to (``warning`` inside a loop, ``note`` outside). Paths are relative
to the working directory (the repository root in CI) when the file lies inside it, as code scanning wants.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
VERSION = "2.1.0"
INFO_URI = "https://pypi.org/project/vgprscope/"

_RULE_TEXT = {
    "missing": "A baseline entry the run no longer produces (a kernel no longer launched, renamed, or removed)",
    "status": "The kernel no longer compiles, or can no longer launch, where the baseline's did",
    "spill": "A register spill: a store to or reload from scratch / local memory",
    "occupancy": "Theoretical occupancy may not drop",
}


@dataclass(frozen=True)
class Location:
    """A file (relative to the working directory where it lies inside it) and a 1-based line."""

    uri: str
    line: int


def _uri(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def kernel_location(file: str | None, kernel: str, root: Path | None = None) -> Location | None:
    """The line of ``def <kernel>(`` in ``file`` (1 when the file has no such line), or None without a file."""
    if not file:
        return None
    path = Path(file)
    if not path.is_file():
        return None
    pattern = re.compile(rf"^\s*def\s+{re.escape(kernel.rpartition('.')[2])}\s*\(")
    line = 1
    try:
        for i, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.match(text):
                line = i
                break
    except OSError:
        return None
    return Location(_uri(path, root or Path.cwd()), line)


def _rule(rule_id: str, metric: str | None = None) -> dict[str, Any]:
    from ..gate.metrics import metric_info

    name = rule_id.removeprefix("vgprscope.")
    if name in _RULE_TEXT:
        text = _RULE_TEXT[name]
    else:
        m = metric_info(metric or name)
        verb = "drop" if m.higher_is_better else "grow"
        text = f"{m.what} ({m.unit}) may not {verb} past the gate's rule"
    return {"id": rule_id, "name": name, "shortDescription": {"text": text},
            "helpUri": INFO_URI, "properties": {"tags": ["performance", "registers"]}}


def _result(rule_id: str, level: str, message: str, where: Location | None, fingerprint: str,
            props: Mapping[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": rule_id, "level": level, "message": {"text": message},
                           "partialFingerprints": {"vgprscopeKey/v1": fingerprint}}
    if where is not None:
        out["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": where.uri},
                                                  "region": {"startLine": max(where.line, 1)}}}]
    if props:
        out["properties"] = dict(props)
    return out


def _log(results: list[dict[str, Any]], rule_ids: Iterable[tuple[str, str | None]], version: str,
         invocation: Mapping[str, Any] | None = None) -> dict[str, Any]:
    rules = [_rule(rid, metric) for rid, metric in dict.fromkeys(rule_ids)]
    index = {r["id"]: i for i, r in enumerate(rules)}
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    run: dict[str, Any] = {"tool": {"driver": {"name": "vgprscope", "version": version, "informationUri": INFO_URI,
                                               "rules": rules}},
                           "results": results, "columnKind": "unicodeCodePoints"}
    if invocation:
        run["invocations"] = [dict(invocation)]
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def gate_sarif(result: Any, locations: Mapping[str, Location], version: str,
               exit_code: int | None = None) -> dict[str, Any]:
    """A ``gate.diff.GateResult`` (check or diff) as a SARIF log: a result per failing metric, per missing or
    broken entry, and a warning per growth the rules let pass. ``locations``: entry key -> the kernel's line
    (an entry without one, e.g. a kernel whose file is gone, has no location, only its message)."""
    from ..gate.diff import State
    from ..gate.rules import Change

    results: list[dict[str, Any]] = []
    rule_ids: list[tuple[str, str | None]] = []
    for d in result.entries:
        e = d.entry
        where = locations.get(d.key)
        head = f"{e.variant}/{e.kernel} on {e.arch} [{e.slot}]"
        if d.state is State.MISSING:
            if d.fails:
                rule_ids.append(("vgprscope.missing", None))
                results.append(_result("vgprscope.missing", "error", f"{head}: in the baseline, not produced by "
                                       "this run (renamed, no longer launched, or removed)", where, d.key))
            continue
        if d.state is State.NEW:
            continue
        if d.status is not None and d.status.fails:
            rule_ids.append(("vgprscope.status", None))
            results.append(_result("vgprscope.status", "error", f"{head}: {d.status.baseline} -> {d.status.current}",
                                   where, d.key))
        for m in d.metrics:
            if m.delta == 0 or not m.worse:
                continue
            if not m.fails and m.change is Change.BETTER:
                continue
            level = "error" if m.fails else "warning"
            rid = f"vgprscope.{m.metric}"
            rule_ids.append((rid, m.metric))
            verdict = "fails the rule" if m.fails else "within the rule"
            results.append(_result(rid, level, f"{head}: {m.metric} {m.baseline} -> {m.current} "
                                   f"({m.delta:+d}), {verdict} {m.rule.text()}", where, f"{d.key}/{m.metric}",
                                   {"baseline": m.baseline, "current": m.current, "delta": m.delta}))
    invocation = {"executionSuccessful": exit_code in (0, 1)} if exit_code is not None else None
    return _log(results, rule_ids, version, invocation)


def _site_location(chain: Sequence[str], kernel_file: str | None, root: Path) -> Location | None:
    """A spill site's innermost ``file.py:line``, found beside the kernel's file or under the working
    directory (the compiler's line info names files by their base name here)."""
    for frame in chain:
        name, _, line = frame.rpartition(":")
        if not line.isdigit() or not name:
            continue
        candidates = []
        if kernel_file:
            candidates.append(Path(kernel_file).parent / name)
        candidates.append(root / name)
        for c in candidates:
            if c.is_file():
                return Location(_uri(c, root), int(line))
        found = next(iter(sorted(root.rglob(name))), None) if root.is_dir() else None
        if found is not None and ".venv" not in found.parts:
            return Location(_uri(found, root), int(line))
    return None


def spills_sarif(explanations: Sequence[Any], files: Mapping[str, str | None], version: str,
                 root: Path | None = None) -> dict[str, Any]:
    """Explain's spill sites as SARIF results, one per site: ``files``: an explanation's label -> its kernel's
    file (to find the sites' files beside it)."""
    root = root or Path.cwd()
    results: list[dict[str, Any]] = []
    rule_ids: list[tuple[str, str | None]] = []
    for e in explanations:
        kernel_file = files.get(e.label)
        for s in e.spills:
            where = _site_location(s.location, kernel_file, root) or kernel_location(kernel_file, e.kernel, root)
            rule_ids.append(("vgprscope.spill", None))
            inside = "inside a loop" if s.in_loop else "outside any loop"
            results.append(_result(
                "vgprscope.spill", "warning" if s.in_loop else "note",
                f"{e.label} on {e.arch} ({e.config}): {s.stores} spill stores, {s.reloads} reloads {inside} at "
                f"{' <- '.join(s.location)}", where, f"{e.label}/{e.arch}/{e.config}/{'<-'.join(s.location)}",
                {"stores": s.stores, "reloads": s.reloads, "in_loop": s.in_loop}))
    return _log(results, rule_ids, version)
