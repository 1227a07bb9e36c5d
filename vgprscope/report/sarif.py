"""SARIF 2.1.0 (Static Analysis Results Interchange Format) for code scanning: the log, its rules and results,
located in the user's own source; explain's spill sites (the gate's regressions: ``gate.sarif``).

One result per failing metric of an entry (``vgprscope.<metric>``: ``vgprscope.vgpr_total``,
``vgprscope.core.occupancy``, ...), per entry that went missing (``vgprscope.missing``) or stopped compiling
(``vgprscope.status``), at the line of the kernel's ``def`` in its file; a growth the rules let pass is a
``warning``, a failure an ``error``. Explain adds one result per spill site (``vgprscope.spill``) at the
source line the compiler attributes it to (``warning`` inside a loop, ``note`` outside). Paths are relative
to the working directory (the repository root in CI) when the file lies inside it, as code scanning wants.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
VERSION = "2.1.0"

RULE_TEXT = {
    "missing": "A baseline entry the run no longer produces (a kernel no longer launched, renamed, or removed)",
    "status": "The kernel no longer compiles, or can no longer launch, where the baseline's did",
    "spill": "A register spill: a store to or reload from scratch / local memory",
    "occupancy": "Theoretical occupancy may not drop",
    "compiler": "What the compiler (ptxas, LLVM) said while compiling the kernel: a warning, a performance advisory "
                "or an error, with its code",
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


def relative_uri(file: str, root: Path | None = None) -> str:
    """``file`` relative to ``root`` (the working directory) where it lies inside it, else its file: URI."""
    return _uri(Path(file), root or Path.cwd())


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


def rule(rule_id: str, text: str) -> dict[str, Any]:
    """A SARIF reportingDescriptor: the rule's id, name and one-line description."""
    return {"id": rule_id, "name": rule_id.removeprefix("vgprscope."), "shortDescription": {"text": text},
            "properties": {"tags": ["performance", "registers"]}}


def result(rule_id: str, level: str, message: str, where: Location | None, fingerprint: str,
            props: Mapping[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": rule_id, "level": level, "message": {"text": message},
                           "partialFingerprints": {"vgprscopeKey/v1": fingerprint}}
    if where is not None:
        out["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": where.uri},
                                                  "region": {"startLine": max(where.line, 1)}}}]
    if props:
        out["properties"] = dict(props)
    return out


def log(results: list[dict[str, Any]], rule_texts: Mapping[str, str], version: str,
        invocation: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run: ``rule_texts`` the description of each rule id the results use."""
    rules = [rule(rid, rule_texts[rid]) for rid in dict.fromkeys(r["ruleId"] for r in results)]
    index = {r["id"]: i for i, r in enumerate(rules)}
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    run: dict[str, Any] = {"tool": {"driver": {"name": "vgprscope", "version": version, "rules": rules}},
                           "results": results, "columnKind": "unicodeCodePoints"}
    if invocation:
        run["invocations"] = [dict(invocation)]
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def _installed(relative: Path) -> bool:
    """A file of an installed package or a tool's directory under the repository (a virtual environment, a
    cache): never the user's source."""
    return any(part.startswith(".") or part in ("site-packages", "dist-packages") for part in relative.parts[:-1])


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
        found = next((f for f in sorted(root.rglob(name)) if not _installed(f.relative_to(root))), None) \
            if root.is_dir() else None
        if found is not None:
            return Location(_uri(found, root), int(line))
    return None


def spills_sarif(explanations: Sequence[Any], files: Mapping[str, str | None], version: str,
                 root: Path | None = None) -> dict[str, Any]:
    """Explain's spill sites as SARIF results, one per site: ``files``: an explanation's label -> its kernel's
    file (to find the sites' files beside it)."""
    root = root or Path.cwd()
    results: list[dict[str, Any]] = []
    for e in explanations:
        kernel_file = files.get(e.label)
        for s in e.spills:
            where = _site_location(s.location, kernel_file, root) or kernel_location(kernel_file, e.kernel, root)
            inside = "inside a loop" if s.in_loop else "outside any loop"
            results.append(result(
                "vgprscope.spill", "warning" if s.in_loop else "note",
                f"{e.label} on {e.arch} ({e.config}): {s.stores} spill stores, {s.reloads} reloads {inside} at "
                f"{' <- '.join(s.location)}", where, f"{e.label}/{e.arch}/{e.config}/{'<-'.join(s.location)}",
                {"stores": s.stores, "reloads": s.reloads, "in_loop": s.in_loop}))
        for d in getattr(e, "diagnostics", ()):  # the compiler's own words: at its line where it gives one
            where = (_site_location([d.where], kernel_file, root) if ".py:" in d.where else None) \
                or kernel_location(kernel_file, e.kernel, root)
            results.append(result(
                "vgprscope.compiler", "error" if d.severity == "error" else
                "warning" if d.severity == "warning" else "note", f"{e.label} on {e.arch} ({e.config}): {d.text()}",
                where, f"{e.label}/{e.arch}/{e.config}/{d.tool}/{d.code}", {"code": d.code, "tool": d.tool}))
    return log(results, {"vgprscope.spill": RULE_TEXT["spill"], "vgprscope.compiler": RULE_TEXT["compiler"]},
               version)
