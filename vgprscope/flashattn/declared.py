"""What a variant file's ``VARIANT`` declares as models, read and checked: the tiles it keeps live across its
K/V loop (``VARIANT['live_state']``: ``flashattn.live`` computes seed 001's estimate with them) and its memory
traffic (``VARIANT['traffic']``: ``flashattn.traffic``). Formulas over each model's notation
(``flashattn.expr``); the registry (``flashattn.variants``) reads them when it loads a variant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import UsageError
from .expr import Expr, ExprError, parse

# live_state's notation: the tile sizes, the head dim padded (Dp) and bytes per element (flashattn.live)
LIVE_NAMES = ("BLOCK_M", "BLOCK_N", "Dp", "e")

LiveModel = tuple[tuple[str, tuple[Expr, Expr, Expr]], ...]


def live_model(value: Any, where: str, knobs: tuple[str, ...] = ()) -> LiveModel:
    """``VARIANT['live_state']`` checked: tile name -> [rows, columns, bytes per element]."""
    if not isinstance(value, dict) or not value:
        raise UsageError(f"{where} must be a dict of tile name: [rows, columns, bytes per element]")
    out = []
    for tile, dims in value.items():
        if not (isinstance(tile, str) and isinstance(dims, list) and len(dims) == 3):
            raise UsageError(f"{where}[{tile!r}] must be [rows, columns, bytes per element]")
        try:
            out.append((tile, tuple(parse(x, (*LIVE_NAMES, *knobs)) for x in dims)))
        except ExprError as exc:
            raise UsageError(f"{where}[{tile!r}]: {exc}") from None
    return tuple(out)  # type: ignore[return-value]


# traffic's notation (flashattn.traffic)
TRAFFIC_NAMES = ("e", "D", "S", "G", "Tq", "P", "rho", "Kb", "Nq", "Nk")


@dataclass(frozen=True)
class TrafficModel:
    """A variant's ``VARIANT['traffic']``, parsed: per (batch, head) formulas and the text shown."""

    read: Expr
    written: Expr
    flops: Expr
    formula: str


def traffic_model(value: Any, where: str) -> TrafficModel:
    """``VARIANT['traffic']`` checked: read / written / flops formulas over the notation, and the formula
    text (UsageError naming what is wrong)."""
    keys = ("read", "written", "flops", "formula")
    if not isinstance(value, dict) or set(value) != set(keys):
        raise UsageError(f"{where} must be a dict of exactly {', '.join(keys)} (formulas over "
                         f"{', '.join(TRAFFIC_NAMES)}; formula: the text shown)")
    if not isinstance(value["formula"], str) or not value["formula"].strip():
        raise UsageError(f"{where}['formula'] must be the formula's text")
    try:
        exprs = {k: parse(value[k], TRAFFIC_NAMES) for k in ("read", "written", "flops")}
    except ExprError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return TrafficModel(formula=" ".join(value["formula"].split()), **exprs)
