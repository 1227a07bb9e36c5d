"""The compiler's own words: ptxas's warnings and coded advisories, LLVM's (and MLIR's) warnings, remarks and
errors, parsed into ``Diagnostic`` records; the reason a failed compile gives; the toolchain's versions as
short labels. Pure functions: text in, records out.

What counts as a diagnostic:
- ptxas (``ptxas``, ``ptxas-blackwell``; ``ptxas FILE, line N; warning : ...`` too): every ``warning``,
  ``error`` and ``fatal`` line, and an ``info`` line only where it carries a code (``(C7511) Potential
  Performance Loss: wgmma.mma_async instructions are serialized ...``): the plain ``info`` lines are the
  ``-v`` figures the usage parser reads.
- LLVM / MLIR, from what a compile wrote to its C-level stderr (the compile worker keeps those lines):
  ``LLVM ERROR: ...``, ``[LOC: ]warning: ...``, ``[LOC: ]remark: ...``, ``[LOC: ]error: ...``; ``note:`` lines
  belong to the error before them (a failed pass's name is read from one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..records import Diagnostic

__all__ = ["compile_diagnostics", "failure_reason", "llvm_diagnostics", "ptxas_diagnostics", "short_llvm", "short_ptxas", "slug"]

_PTXAS_RE = re.compile(r"^(?P<tool>ptxas(?:-[\w]+)?)(?:\s+(?P<file>[^\s,]+), line (?P<line>\d+);)?\s+"
                       r"(?P<severity>info|warning|error|fatal)\s*:\s*(?:\((?P<code>C\d+)\)\s*)?(?P<message>.*?)\s*$")
# where one ptxas line of a joined stderr starts (the compile worker's error line joins them with spaces)
_PTXAS_SPLIT_RE = re.compile(r"\s+(?=ptxas(?:-\w+)?\s+(?:info|warning|error|fatal)\s*:)")
# ptxas's closing line after its errors: it says nothing the errors before it do not
_PTXAS_ABORTED = "Ptx assembly aborted due to errors"
# the PTX line a message names itself ("... at line 1596 in function k", "... in line 12"), where ptxas's
# prefix gives none
_IN_LINE_RE = re.compile(r"\b(?:at|in) line (\d+)\b")
_LLVM_ERROR = "LLVM ERROR: "
_LLVM_RE = re.compile(r"^(?:(?P<loc>.*?):\s)?(?P<severity>warning|remark|error|note):\s+(?P<message>.*?)\s*$")
_LEAD_LOC_RE = re.compile(r"^(\S+?:\d+:\d+):\s+(.*)$")
# MLIR's headline of any failed pass pipeline: the reason is elsewhere (an LLVM ERROR, the pass's own error)
_PIPELINE_FAILED = "Failures have been detected while processing an MLIR pass pipeline"
_FAILED_PASS_RE = re.compile(r"Pipeline failed while executing \[`([^`]+)`")
_QUOTED_RE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z_.]*")


def slug(message: str, words: int = 4) -> str:
    """The code of a diagnostic the compiler gives none: its first words, lower case, without quoted names
    or numbers (``Too many maxnreg specified for entry k, will be ignored`` -> ``too-many-maxnreg-specified``),
    so one warning has one code whichever kernel it names."""
    found = _WORD_RE.findall(_QUOTED_RE.sub(" ", message))
    return "-".join(w.lower().strip(".") for w in found[:words]) or "unnamed"


def ptxas_diagnostics(log: str) -> tuple[Diagnostic, ...]:
    """ptxas's warnings, errors and coded advisories in a ``ptxas -v`` log, each once, in order."""
    out: list[Diagnostic] = []
    for line in log.splitlines():
        m = _PTXAS_RE.match(line.strip())
        if m is None or (m["severity"] == "info" and not m["code"]) or m["message"] == _PTXAS_ABORTED:
            continue
        message = m["message"]
        where = f"PTX line {m['line']}" if m["line"] else ""
        at = _IN_LINE_RE.search(message)
        if at and not where:
            where = f"PTX line {at[1]}"
        severity = "error" if m["severity"] == "fatal" else m["severity"]
        d = Diagnostic("ptxas", m["code"] or slug(message), severity, message, where)
        if d not in out:
            out.append(d)
    return tuple(out)


def _location(loc: str | None) -> str:
    """``/path/kernel.py:12:5`` -> ``kernel.py:12``; LLVM's ``<unknown>:0:0`` and none -> ""."""
    if not loc or loc.startswith("<unknown>"):
        return ""
    parts = loc.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return f"{os.path.basename(parts[0])}:{parts[1]}"
    return os.path.basename(loc)


def llvm_diagnostics(log: str) -> tuple[Diagnostic, ...]:
    """LLVM's and MLIR's errors, warnings and remarks in a compile's C-level output, each once, in order;
    MLIR's pipeline headline stands for nothing and is left out (the error it follows is kept)."""
    out: list[Diagnostic] = []
    for line in log.splitlines():
        line = line.strip()
        if line.startswith(_LLVM_ERROR):
            message = line[len(_LLVM_ERROR):].strip()
            d = Diagnostic("llvm", slug(message), "error", message)
        else:
            m = _LLVM_RE.match(line)
            if m is None or m["severity"] == "note" or m["message"].startswith(_PIPELINE_FAILED):
                continue
            message, loc = m["message"], m["loc"]
            lead = _LEAD_LOC_RE.match(message)  # AMDGPU's ``warning: FILE:LINE:COL: message`` form
            if loc is None and lead:
                loc, message = lead[1], lead[2]
            d = Diagnostic("llvm", slug(message), m["severity"], message, _location(loc))
        if d not in out:
            out.append(d)
    return tuple(out)


def compile_diagnostics(answer: Mapping[str, Any]) -> tuple[Diagnostic, ...]:
    """Every diagnostic of one compile worker's answer: LLVM's and MLIR's (``compile_log``), then ptxas's
    (``ptxas_log``), in the order the compiler ran."""
    ptxas = str(answer.get("ptxas_log") or "")
    if not ptxas and "error" in answer:  # a ptxas that failed: its stderr is in the error line, joined
        ptxas = _PTXAS_SPLIT_RE.sub("\n", str(answer["error"]))
    return llvm_diagnostics(str(answer.get("compile_log") or "")) + ptxas_diagnostics(ptxas)


def failure_reason(log: str) -> str | None:
    """The compiler's own reason a compile failed, from its C-level output: the ``LLVM ERROR:`` line, else the
    first MLIR / LLVM ``error:`` other than the pipeline's headline; with the pass that failed where MLIR names
    it. None where the output says no reason (the exception's own line stands)."""
    fatal = next((ln.strip() for ln in log.splitlines() if ln.strip().startswith(_LLVM_ERROR)), None)
    if fatal is not None:
        head = fatal
    else:
        error = next((d for d in llvm_diagnostics(log) if d.severity == "error"), None)
        if error is None:
            return None
        head = f"{error.where}: {error.message}" if error.where else error.message
    failed = _FAILED_PASS_RE.search(log)
    return f"{head} (in pass {failed[1]})" if failed else head


def short_ptxas(version: str) -> str:
    """``Cuda compilation tools, release 13.4, V13.4.59`` -> ``13.4.59``; "" stays ""."""
    m = re.search(r"\bV(\d+(?:\.\d+)+)", version) or re.search(r"release (\d+(?:\.\d+)+)", version)
    return m[1] if m else version.strip()


def short_llvm(version: str) -> str:
    """``24.0.0git (b010a18d2b648cab83c83967ff26b8fde11acdc6)`` -> ``24.0.0git b010a18d2b64``."""
    m = re.match(r"\s*(\S+)\s*\(([0-9a-f]{12})[0-9a-f]*\)", version)
    return f"{m[1]} {m[2]}" if m else version.strip()
