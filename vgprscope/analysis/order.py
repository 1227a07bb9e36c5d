"""The order of rows every question's table may be sorted in: a ``--sort`` name resolved to the field it sorts
(a flat record's, ``report.rows.flat``), best first (descending where more is better), rows without it last;
analyze's records grouped by variant and arch. compare's lines and the frontier's kernels name their own sort
keys (``analysis/compare/core.py``, ``analysis/frontier/core.py``) and sort with ``sort_by`` here."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core.errors import UsageError
from ..core.records import Record

# short names -> the flat record field they sort (rows.flat); any flat field may be named as it is
SORT_ALIASES = {
    "vgprs": "usage_vgpr_total", "regs": "regs", "registers": "regs", "sgprs": "usage_sgpr",
    "agprs": "usage_agpr", "spills": "spills", "scratch": "scratch", "lds": "lds", "shared": "lds",
    "occupancy": "occ_value", "occ": "occ_value", "occ_percent": "occ_percent", "compile": "compile_seconds",
    "compile_seconds": "compile_seconds", "spill_insts": "spill_insts", "in_loop": "usage_spill_insts_in_loop",
}
# metrics where more is better: shown best first, so these sort descending
LARGER_IS_BETTER = {"occ_value", "occ_percent", "occ_warps_per_sm", "spill_free_occupancy"}


def record_metrics(rec: Record) -> dict[str, Any]:
    """Every sortable number of a record, named as the csv columns name them (``usage_*``, ``occ_*``,
    ``cfg_*``), plus vendor-neutral regs / spills / scratch / lds."""
    from dataclasses import asdict

    from ..backends import backend_of_usage

    d: dict[str, Any] = {"compile_seconds": rec.compile_seconds}
    d |= {f"cfg_{k}": v for k, v in rec.config.as_dict().items() if isinstance(v, (int, float, str))}
    u = rec.usage
    if u is not None:
        d |= {f"usage_{k}": v for k, v in asdict(u).items()}
    if rec.occupancy is not None:
        o = rec.occupancy
        d |= {"occ_value": o.value, "occ_percent": o.percent, "occ_max": o.max_value,
              "occ_warps_per_sm": o.warps_per_sm}
    if u is not None:
        f = backend_of_usage(u).figures(u)
        d |= {"regs": f.registers, "spills": u.spills, "scratch": f.scratch_bytes, "lds": f.memory_bytes}
        if f.spill_insts is not None:  # where the compiler counts spill instructions (AMD)
            d["spill_insts"] = f.spill_insts
    return d


def resolve_metric(name: str, known: Iterable[str]) -> str:
    """The field a ``--sort`` name means; unknown names are a usage error listing the short names."""
    key = name.strip().lower().replace("-", "_")
    key = SORT_ALIASES.get(key, key)
    known = set(known)
    if key not in known:
        short = sorted(a for a, f in SORT_ALIASES.items() if f in known or a in known)
        raise UsageError(f"cannot sort by {name!r}; sort by one of: {', '.join(short)} "
                         "(or any field of the csv output)")
    return key


def sort_by(items: Sequence[Any], metric: str, value_of: Callable[[Any, str], Any]) -> list[Any]:
    """Best first by ``metric``: ascending, descending for LARGER_IS_BETTER; rows without it go last."""
    desc = metric in LARGER_IS_BETTER

    def key(item: Any) -> tuple[int, Any]:
        v = value_of(item, metric)
        if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
            return (1, 0)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, -v if desc else v)
        return (0, str(v))

    return sorted(items, key=key)


def sort_given(metric: str | None) -> str | None:
    """The sort asked for, None for none; an empty name is a usage error, never "no sort"."""
    if metric is not None and not metric.strip():
        raise UsageError(f"sort {metric!r} is empty; give a metric such as vgprs, spills or occupancy, or leave it "
                         "out for the compile order")
    return metric


def sort_records(records: Sequence[Record], metric: str | None) -> list[Record]:
    """Records grouped by variant and arch (in first-seen order), each group best first by ``metric``.

    A multi-kernel variant's kernels stay together under their config: the group's configs are ordered
    by their worst kernel's value."""
    if (metric := sort_given(metric)) is None:
        return list(records)
    if not records:
        return []
    field = resolve_metric(metric, {k for r in records for k in record_metrics(r)})
    groups: dict[tuple[str, str], dict[str, list[Record]]] = {}
    for r in records:
        groups.setdefault((r.variant, r.arch), {}).setdefault(r.config.key(), []).append(r)

    def config_value(kernels: list[Record], f: str) -> Any:
        got = [record_metrics(r).get(f) for r in kernels]
        vals: list[int | float] = [v for v in got if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not vals:
            return None
        return min(vals) if f in LARGER_IS_BETTER else max(vals)

    out: list[Record] = []
    for configs in groups.values():
        for kernels in sort_by(list(configs.values()), field, config_value):
            out.extend(kernels)
    return out


def group_records(records: Sequence[Record]) -> list[Record]:
    """Rows of one variant and arch together (variants, then archs, in first-seen order); within a group
    the grid's order is kept, and a config's kernels stay together."""
    variants = {v: i for i, v in enumerate(dict.fromkeys(r.variant for r in records))}
    archs = {a: i for i, a in enumerate(dict.fromkeys(r.arch for r in records))}
    return sorted(records, key=lambda r: (variants[r.variant], archs[r.arch]))
