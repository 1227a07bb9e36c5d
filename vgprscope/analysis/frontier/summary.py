"""The frontier's sentences, written from its data: a kernel's summary (how far it goes without spilling, what
the next level costs) and a level's price, in its vendor's words (``report.vendor_words``). The views
(``view.py``, ``split_view.py``) and the JSON / CSV exports print them; the core's records hold none."""

from __future__ import annotations

from collections.abc import Sequence

from ...report.usage_text import spill_price
from ...report.vendor_words import words_of_unit
from .core import KernelFrontier, Level
from .split import given

# the limiters a frontier level names in words when they, not the registers, hold the occupancy down
LIMITER_WORDS = {"lds": "LDS", "shared": "shared memory", "workgroup": "whole workgroups", "warps": "the warp slots",
                 "blocks": "the blocks-per-SM limit", "sgpr": "SGPRs"}


def _plural(n: int, unit: str) -> str:
    noun, _, per = unit.partition("/")
    if n == 1 and noun.endswith("s"):
        noun = noun[:-1]
    return f"{n} {noun}/{per}"


def price(level: Level) -> str:
    """What a level costs, in its vendor's words: '233 spills (163 spill instructions, 124 in the loop)';
    NVIDIA in bytes."""
    u = level.record.usage
    if not level.ok or u is None:
        return f"does not compile ({level.record.status})"
    return spill_price(u) + _loop_price(level)


def _loop_price(level: Level) -> str:
    """', 128 B of scratch traffic per trip of the hot loop (12 % matrix instructions)' where the level's spills
    reach the loop; ', none in the hot loop' where they stay out of it; '' where the loop was not read."""
    f = level.loop_figures()
    if not level.spills or f["loop_spill_bytes"] is None:
        return ""
    if not f["loop_spill_bytes"]:
        return ", none in the hot loop"
    share = f" ({f['loop_matrix_share']} % matrix instructions)" if f["loop_matrix_share"] is not None else ""
    return f", {f['loop_spill_bytes']} B of scratch traffic per trip of the hot loop{share}"


def _cap_words(level: Level) -> str:
    """'LDS', 'LDS and SGPRs': what, besides the registers, holds the level below its target."""
    return " and ".join(LIMITER_WORDS.get(x, x) for x in level.limiters if x not in ("vgpr", "regs"))


def _capped(level: Level, unit: str) -> str:
    """'; LDS caps it at 2 anyway' when something other than the registers holds the level down."""
    if level.reached is None or level.reached >= level.plan.target:
        return ""
    words = _cap_words(level)
    if not words:
        return f"; {_whole(level)}, so it reaches {_plural(level.reached, unit)}"
    return f"; {words} {'cap' if ' and ' in words else 'caps'} it at {level.reached} anyway"


def _whole(level: Level) -> str:
    """Why a register budget of N waves gives fewer: the workgroup's waves are resident all or none."""
    warps = getattr(level.record.config, "num_warps", None)
    return f"{warps}-wave workgroups are resident whole" if warps else "whole workgroups are resident"


def _occupancy(level: Level) -> int:
    """The occupancy a compile reached (its level's target where the record says none)."""
    return level.reached if level.reached is not None else level.plan.target


def _uncapped_words(level: Level) -> str:
    return f"with no {level.plan.knob}"


def summary(kf: KernelFrontier) -> str:
    """The kernel's frontier in one sentence: how far it goes without spilling and what the next level costs
    (a register-split frontier: the settings that are spill-free)."""
    if kf.split:
        return split_summary(kf.knob, kf.levels)
    unit = kf.unit
    compiled = [lv for lv in (*kf.levels, *((kf.uncapped,) if kf.uncapped else ())) if lv.ok]
    if not compiled:
        return "no level compiled"
    top = max(kf.levels, key=lambda lv: lv.plan.target)
    if kf.spill_free is None:
        # the fewest spills, and among compiles spilling as few the one reaching the most occupancy (an
        # uncapped compile at 2 waves/SIMD before the 1 wave/SIMD level with the same spills); then the level
        fewest = min(compiled, key=lambda lv: (lv.spills or 0, -_occupancy(lv), lv.uncapped))
        where = (f"{_uncapped_words(fewest)}, at {_plural(fewest.reached or 0, unit)}" if fewest.uncapped
                 else f"at {_plural(fewest.plan.target, unit)}")
        every = "every level" + (" and uncapped" if kf.uncapped is not None and kf.uncapped.ok else "")
        return f"spills at {every}; fewest {where}: {price(fewest)}"
    sf = kf.spill_free
    reg = words_of_unit(unit).register_word
    if sf.uncapped:
        head = f"spill-free to {_plural(sf.plan.target, unit)} {_uncapped_words(sf)} ({sf.plan.budget} {reg})"
        words = _cap_words(sf)
        if words:
            head += f", {words} {'cap' if ' and ' in words else 'caps'} it"
    else:
        head = f"spill-free to {_plural(sf.plan.target, unit)} ({sf.plan.budget} {reg})"
        if sf.reached is not None and sf.reached < sf.plan.target:
            words = _cap_words(sf)
            head += (f", {sf.reached} reached ({words} {'cap' if ' and ' in words else 'caps'} it)" if words
                     else f", {sf.reached} reached ({_whole(sf)})")
    if kf.next_level is None:
        if (kf.spill_free_occupancy or 0) >= top.plan.target:
            return head + "; that is the arch's top level"
        return head
    nxt = kf.next_level
    text = f"{head}; {_plural(nxt.plan.target, unit)}: {price(nxt)}{_capped(nxt, unit)}"
    if kf.min_spill_free_maxnreg is not None:
        text += f"; smallest spill-free {kf.knob} {kf.min_spill_free_maxnreg}"
    return text


def _runs(levels: Sequence[Level]) -> list[list[Level]]:
    """The spill-free levels in runs of neighbours (levels sorted by setting; a spilling one breaks a run)."""
    runs: list[list[Level]] = []
    prev_free = False
    for lv in levels:
        if lv.spill_free:
            if not prev_free:
                runs.append([])
            runs[-1].append(lv)
        prev_free = lv.spill_free
    return runs


def _span(values: Sequence[int | None]) -> str:
    shown = ["?" if v is None else str(v) for v in values]
    return shown[0] if len(set(shown)) == 1 else f"{shown[0]}-{shown[-1]}"


def split_summary(knob: str, levels: Sequence[Level]) -> str:
    """'spill-free at producer_regs 24-104 (default partition 240-200 registers); 120: 140+140 B spilled'."""
    compiled = [lv for lv in levels if lv.ok]
    if not compiled:
        return "no setting compiled"
    runs = _runs(levels)
    if not runs:
        fewest = min(compiled, key=lambda lv: (lv.spills or 0, lv.plan.setting))
        return f"spills at every {knob} compiled; fewest at {fewest.plan.setting}: {price(fewest)}"
    parts = [f"{_span([r[0].plan.setting, r[-1].plan.setting])} (default partition "
             f"{_span([given(r[0], 'default'), given(r[-1], 'default')])} registers)" for r in runs]
    text = f"spill-free at {knob} " + ", ".join(parts)
    if len(compiled) == sum(len(r) for r in runs):
        return text + "; every setting compiled is spill-free"
    last = runs[-1][-1]
    after = next((lv for lv in levels if lv.plan.setting > last.plan.setting and lv.ok), None)
    if after is not None:
        text += f"; {after.plan.setting}: {price(after)}"
    return text
