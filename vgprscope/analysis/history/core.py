"""A kernel's resources release by release (``vgprscope analyze --triton 3.4.0..3.9.0``).

Each row is one kernel x config x arch (its slot) across the toolchains, oldest first, with the releases where
something happened marked: the first where it spills, where its spills jump (at least double: 4 -> 64 is
what users of a kernel report, 4 -> 5 is not), where its registers cross an occupancy step (the occupancy
the registers alone allow changes, whatever else binds), and where its occupancy drops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...backends import backend_of_usage
from ...core.records import Record

# A spill count that grows by this factor from one release to the next is marked (a jump)
SPILL_JUMP = 2


def registers(rec: Record) -> int | None:
    """What occupancy sees of a kernel's registers: the unified VGPR count (AMD) or registers per thread."""
    u = rec.usage
    return backend_of_usage(u).figures(u).registers if u is not None else None


def register_limit(rec: Record) -> int | None:
    """The occupancy the registers alone allow (the 'vgpr' / 'regs' limit of the occupancy model)."""
    occ = rec.occupancy
    if occ is None:
        return None
    limits = dict(occ.limits)
    return limits.get("vgpr", limits.get("regs"))


@dataclass(frozen=True)
class Event:
    release: str  # the toolchain label where it happened
    kind: str  # "spills", "jump", "step", "drop", "fails"
    text: str


@dataclass(frozen=True)
class HistoryRow:
    label: str
    kernel: str
    arch: str
    slot: str
    config: str
    releases: tuple[str, ...]
    records: tuple[Record | None, ...]  # one per release (None: no such row there)

    def events(self) -> tuple[Event, ...]:
        out: list[Event] = []
        prev: Record | None = None
        for release, rec in zip(self.releases, self.records):
            if rec is None:
                continue
            if prev is not None and prev.ok and not rec.ok:
                out.append(Event(release, "fails", f"stops compiling at {release}: {rec.status}"))
            if prev is not None and prev.ok and rec.ok and prev.usage is not None and rec.usage is not None:
                a_sp, b_sp = prev.usage.spills, rec.usage.spills
                if a_sp == 0 and b_sp > 0:
                    out.append(Event(release, "spills", f"spills from {release} ({b_sp})"))
                elif a_sp > 0 and b_sp >= SPILL_JUMP * a_sp:
                    out.append(Event(release, "jump", f"spills {a_sp} -> {b_sp} at {release} (x{b_sp / a_sp:.3g})"))
                a, b = register_limit(prev), register_limit(rec)
                if a is not None and b is not None and a != b:
                    word = "fewer" if b < a else "more"
                    unit = rec.occupancy.unit if rec.occupancy else ""
                    out.append(Event(release, "step", f"registers {registers(prev)} -> {registers(rec)} at {release}: "
                                                      f"they allow {word} {unit} ({a} -> {b})"))
                if prev.occupancy and rec.occupancy and rec.occupancy.value < prev.occupancy.value:
                    out.append(Event(release, "drop", f"occupancy {prev.occupancy.value} -> {rec.occupancy.value} "
                                                      f"at {release}"))
            prev = rec
        return tuple(out)

    def first(self, kind: str) -> str | None:
        return next((e.release for e in self.events() if e.kind == kind), None)


def history(sides: Sequence[tuple[str, Sequence[Record]]]) -> list[HistoryRow]:
    """Rows of every kernel x config x arch seen under any of ``sides`` (release label, its records), in the
    order first seen; the sides in the order given (oldest first)."""
    releases = tuple(label for label, _ in sides)
    keyed: dict[tuple[str, str, str, str], dict[str, Record]] = {}
    configs: dict[tuple[str, str, str, str], str] = {}
    for label, records in sides:
        for r in records:
            key = (r.variant, r.kernel, r.arch, r.slot or r.config.key())
            keyed.setdefault(key, {})[label] = r
            configs.setdefault(key, r.config.short() if hasattr(r.config, "short") else "")
    return [HistoryRow(k[0], k[1], k[2], k[3], configs[k], releases, tuple(by.get(v) for v in releases))
            for k, by in keyed.items()]
