"""What a diff did to each kernel's hot loop: its scratch traffic and matrix share per trip on both sides,
named by the loop's source lines (the gate loop of ``parse.loops.gate_loop``, read at parse time).

The gate's ``loop_spill_bytes`` / ``loop_matrix_share`` judge the same numbers; this names the loop, so a
release that keeps the register count but fills the loop with scratch traffic is said in words, per entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...gate.diff import EntryDiff


@dataclass(frozen=True)
class LoopChange:
    """One entry's hot loop on both sides (bytes per lane / thread and per trip; share in percent)."""

    key: str
    lines_before: str
    lines_after: str
    spill_before: int
    spill_after: int
    share_before: int | None
    share_after: int | None
    insts_before: int
    insts_after: int

    @property
    def grew(self) -> bool:
        return self.spill_after > self.spill_before

    @property
    def lines(self) -> str:
        """Where the loop is: its source lines after (and before, when they moved)."""
        if self.lines_before and self.lines_after and self.lines_before != self.lines_after:
            return f"{self.lines_after} (was {self.lines_before})"
        return self.lines_after or self.lines_before or "lines unknown"

    def text(self) -> str:
        """'baseline/attn_fwd/gfx942/defaults: hot loop at _fa_common.py:67-171: scratch traffic per trip
        0 -> 548 B (0 -> 58 instructions), matrix share 13 -> 12 %'."""
        share = (f", matrix share {self.share_before} -> {self.share_after} %"
                 if self.share_before is not None and self.share_after is not None
                 and self.share_before != self.share_after else "")
        return (f"{self.key}: hot loop at {self.lines}: scratch traffic per trip {self.spill_before} -> "
                f"{self.spill_after} B ({self.insts_before} -> {self.insts_after} instructions){share}")

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "lines_before": self.lines_before, "lines_after": self.lines_after,
                "spill_bytes_before": self.spill_before, "spill_bytes_after": self.spill_after,
                "scratch_insts_before": self.insts_before, "scratch_insts_after": self.insts_after,
                "matrix_share_before": self.share_before, "matrix_share_after": self.share_after}


def loop_changes(entries: Iterable[EntryDiff]) -> tuple[LoopChange, ...]:
    """Every compared entry whose hot loop's scratch traffic per trip changed (both sides read), most growth
    first."""
    out = []
    for d in entries:
        if d.baseline is None or d.current is None:
            continue
        b, a = d.baseline.usage, d.current.usage
        if b is None or a is None or b.loop_spill_bytes is None or a.loop_spill_bytes is None:
            continue
        if b.loop_spill_bytes == a.loop_spill_bytes:
            continue
        out.append(LoopChange(d.key, b.loop_lines or "", a.loop_lines or "", b.loop_spill_bytes, a.loop_spill_bytes,
                              b.loop_matrix_share, a.loop_matrix_share, b.loop_scratch_insts or 0,
                              a.loop_scratch_insts or 0))
    return tuple(sorted(out, key=lambda c: (-(c.spill_after - c.spill_before), c.key)))
