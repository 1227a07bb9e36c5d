"""The tasks of a register-split frontier: each variant that declares ``VARIANT['frontier_knob']`` planned at
every value of its knob, unless the grid sets the knob (``-k producer_regs=24,56``: those values then)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..analysis.frontier.split import knob_of


def split_tasks(sel: Any, tasks: Sequence[Any], plan: Callable[[Any], list[Any]]) -> list[Any]:
    """``tasks`` of variants with a frontier knob, each at every declared value where its request sets none;
    ``plan``: a selection (``tasks.Selection``) -> its tasks."""
    out: list[Any] = []
    done: set[str] = set()
    for t in tasks:
        fk = knob_of(t)
        if fk is None or t.label in done:
            continue
        done.add(t.label)
        name, values = fk
        requests = []
        for req in sel.requests:
            extra = dict(req.extra)
            requests += ([req] if name in extra else
                         [replace(req, extra=tuple(sorted((extra | {name: v}).items()))) for v in values])
        variants = replace(sel.variant_source(), variants=(t.label,))
        planned = plan(replace(sel, sources=(variants,), requests=tuple(dict.fromkeys(requests))))
        out += _one_refusal(planned, name)
    return out


def _one_refusal(tasks: Sequence[Any], knob: str) -> list[Any]:
    """``tasks`` with one row per kernel x arch x config that cannot compile at all (an arch the variant
    cannot target refuses every split alike): one row says why, not one per split."""
    out, seen = [], set()
    for t in tasks:
        if t.job is None:
            rest = tuple((k, v) for k, v in t.config.extra if k != knob)
            key = (t.label, t.row.kernel, t.arch.name, replace(t.config, extra=rest).key())
            if key in seen:
                continue
            seen.add(key)
        out.append(t)
    return out
