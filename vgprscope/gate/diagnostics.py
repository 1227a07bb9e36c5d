"""The ``diagnostics`` rule: a compiler warning code an entry did not have in the baseline fails, one it no
longer has is an improvement; and which compilers (ptxas, LLVM) each side was built with.

An entry records the codes of what the compiler said (``Entry.diagnostics``: ptxas ``C7512``, a slug for a
warning without a code). A baseline entry written before vgprscope recorded them has none (``None``): there is
nothing to compare, and the rule judges nothing for it (re-save the baseline to start gating the compiler's
words). The rule is configured as the others are (``diagnostics:+0``, the default: no new code;
``diagnostics:+1``: one new code passes; ``diagnostics:off``: shown only; ``diagnostics:exact``: a code that
went away fails too, the baseline must be re-saved).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..core.parse.diagnostics import short_llvm, short_ptxas
from .rules import Change, Mode, Rule

METRIC = "diagnostics"


@dataclass(frozen=True)
class DiagnosticsDiff:
    """The codes an entry's compile gained and lost against its baseline entry, as the rule judges them."""

    baseline: tuple[str, ...]
    current: tuple[str, ...]
    rule: Rule
    change: Change
    fails: bool

    @property
    def new(self) -> tuple[str, ...]:
        return tuple(c for c in self.current if c not in self.baseline)

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(c for c in self.baseline if c not in self.current)

    def text(self) -> str:
        """``compiler warnings +C7512 (new, allowed +0)``, ``-C7511 (gone)``."""
        words = [f"+{c}" for c in self.new] + [f"-{c}" for c in self.removed]
        why = {Change.WORSE: f"new, allowed {self.rule.tolerance()}" if self.rule.mode is Mode.LIMIT else
               f"{self.rule.tolerance()}", Change.BETTER: "gone" + (", exact" if self.rule.mode is Mode.EXACT else ""),
               Change.SAME: "not gated" if self.rule.mode is Mode.OFF else f"within {self.rule.tolerance()}"}
        return f"compiler warnings {' '.join(words)} ({why.get(self.change, '')})"

    def as_json(self) -> dict[str, object]:
        return {"baseline": list(self.baseline), "current": list(self.current), "new": list(self.new),
                "removed": list(self.removed), "rule": self.rule.text(), "change": self.change.value,
                "fails": self.fails}


def judge(baseline: tuple[str, ...] | None, current: tuple[str, ...] | None, rule: Rule,
          fail_on_change: bool = False) -> DiagnosticsDiff | None:
    """The codes' verdict, None where either side does not record them (a baseline from before) or nothing
    changed."""
    if baseline is None or current is None or set(baseline) == set(current):
        return None
    new = len(set(current) - set(baseline))
    change, fails = rule.judge(0, new) if new else (Change.BETTER, rule.mode is Mode.EXACT)
    fails = fails or fail_on_change
    return DiagnosticsDiff(baseline, current, rule, change, fails)


def versions(usage_ptxas: str | None, llvm: str) -> dict[str, str]:
    """An entry's compilers by tool, as ``toolchain_notes`` reads them."""
    return {"ptxas": usage_ptxas or "", "LLVM": llvm}


def toolchain_notes(pairs: Iterable[tuple[Mapping[str, str], Mapping[str, str]]]) -> tuple[str, ...]:
    """What compiled the two sides, where it differs: ``ptxas changed: 12.9.86 -> 13.4.59 (3 entries)``, one
    note per tool. ``pairs``: each compared entry's (baseline, current) versions by tool (``ptxas``, ``LLVM``);
    a side that does not say (a baseline from before, an AMD entry's ptxas) is left out."""
    changes: dict[str, dict[tuple[str, str], int]] = {}
    for base, cur in pairs:
        for tool in ("ptxas", "LLVM"):
            a, b = base.get(tool, ""), cur.get(tool, "")
            if a and b and a != b:
                short = short_ptxas if tool == "ptxas" else short_llvm
                key = (short(a), short(b))
                changes.setdefault(tool, {})
                changes[tool][key] = changes[tool].get(key, 0) + 1
    notes = []
    for tool, moves in changes.items():
        said = ", ".join(f"{a} -> {b} ({n} {'entry' if n == 1 else 'entries'})" for (a, b), n in moves.items())
        notes.append(f"{tool} changed: {said}")
    return tuple(notes)


def unjudged_note(pairs: Iterable[tuple[tuple[str, ...] | None, tuple[str, ...] | None]]) -> tuple[str, ...]:
    """A note where the compiler said something the rule could not judge because the baseline entry records no
    codes (written before they were recorded): ``compiler warnings not judged on 2 entries (C7512): ...``."""
    codes: dict[str, None] = {}
    n = 0
    for base, cur in pairs:
        if base is None and cur:
            n += 1
            codes.update(dict.fromkeys(cur))
    if not n:
        return ()
    return (f"compiler warnings not judged on {n} {'entry' if n == 1 else 'entries'} ({', '.join(codes)}): the "
            "baseline predates recorded diagnostics; `vgprscope baseline save` records them",)
