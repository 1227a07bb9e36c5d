"""Changes against a reference, written the same way in ``compare`` and ``check``.

The number is the signed change of the value itself (occupancy 1 -> 2 is ``+1``, VGPRs 274 -> 242 is
``-32``); whether that is better or worse is said separately: a marker (✓ better, ✗ worse) in plain text
and markdown, and colour as well on a terminal. ``compare`` judges by the metric's direction, ``check`` by
the gate's rule (a growth within the tolerance is neither: no marker).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Verdict(str, Enum):
    BETTER = "better"
    WORSE = "worse"
    SAME = "same"  # unchanged, or (check) changed within the rule
    NOT_COMPARABLE = "n/c"  # one side has no value (failed compile, new, missing)


MARK = {Verdict.BETTER: "✓", Verdict.WORSE: "✗", Verdict.SAME: "", Verdict.NOT_COMPARABLE: "x"}
STYLE = {Verdict.BETTER: "green", Verdict.WORSE: "red", Verdict.SAME: None, Verdict.NOT_COMPARABLE: "yellow"}

LEGEND = ("(±N) is the change of the value itself against {ref}: ✓ better, ✗ worse, none: the same, "
          "x: not comparable")


def legend(ref: str) -> str:
    return LEGEND.format(ref=ref)


@dataclass(frozen=True)
class Delta:
    """``change`` = current - reference (None when either side is missing), and its verdict."""

    change: int | None
    verdict: Verdict

    @property
    def mark(self) -> str:
        return MARK[self.verdict]

    def text(self) -> str:
        """``+1 ✓``, ``-32 ✓``, ``+4 ✗``, ``+2`` (within the rule), ``=``, ``x``."""
        if self.change is None:
            return MARK[Verdict.NOT_COMPARABLE]
        if self.change == 0:
            return "="
        return f"{self.change:+d} {self.mark}".rstrip()

    @property
    def style(self) -> str | None:
        return STYLE[self.verdict]


def judge(value: int | None, ref: int | None, higher_is_better: bool) -> Delta:
    """The change from ``ref`` to ``value`` and, by the metric's direction alone, better or worse."""
    if value is None or ref is None:
        return Delta(None, Verdict.NOT_COMPARABLE)
    change = value - ref
    if change == 0:
        return Delta(0, Verdict.SAME)
    return Delta(change, Verdict.BETTER if (change > 0) == higher_is_better else Verdict.WORSE)


def with_delta(value: object, d: Delta | None, *, show_same: bool = False):
    """A cell: the value, then its change in brackets, coloured by the verdict (a rich Text).

    ``274 (-32 ✓)``; an unchanged value is shown bare unless ``show_same``; ``d`` None: no reference."""
    from rich.text import Text

    cell = Text(str(value))
    if d is None or (d.change == 0 and not show_same) or (d.change is None and str(value) == "-"):
        return cell  # no reference, unchanged, or no value of its own (its status says why)
    cell.append(" (")
    cell.append(d.text(), style=d.style)
    cell.append(")")
    return cell
