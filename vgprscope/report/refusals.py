"""The rows a table does not show because their source does not take them (``Record.refused``: a variant
written for other archs, a value outside a variant's range): one note line per variant and reason, naming the
archs, under the table instead of a failed row each."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.records import Record


def refusals(records: Sequence[Record]) -> list[str]:
    """``ws-regalloc on gfx90a, gfx942, sm_80: written for sm_90``: the refused records grouped by variant and
    reason, in their order, each arch once."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in records:
        if r.refused:
            archs = groups.setdefault((r.variant, r.refused), [])
            if r.arch not in archs:
                archs.append(r.arch)
    return [f"{variant} on {', '.join(archs)}: {why}" for (variant, why), archs in groups.items()]


def refusal_notes(records: Sequence[Record]) -> list[str]:
    """The notes under a table: ``not compiled: ws-regalloc on gfx90a, gfx942, sm_80: written for sm_90``."""
    return [f"not compiled: {line}" for line in refusals(records)]
