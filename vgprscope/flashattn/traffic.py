"""The traffic model of the bundled variants: memory traffic and work (seed 004).

Traffic counts the bytes each variant's kernels load from and store to global memory for the config's
reference problem (B, H, Nq, Nk[, H_kv]) = ``config.shape``: what the kernels ask for, with no cache model, so
a re-read that L2 serves counts like one from DRAM. It is what the strategies trade registers against.

Each variant declares its own model in its ``VARIANT['traffic']`` (kernels/*.py): ``read``, ``written`` and
``flops`` per (batch, head), as formulas over the notation below (``vgprscope.flashattn.expr``: evaluated
in the order written, so a figure is the same float however often it is computed), and ``formula``, the
text compare prints. Notation (every variant's formula uses it):
  e   bytes per element of q, k, v, o (2 for fp16 and bf16); 4 for the fp32 workspaces
  D   head dim; S splits (split-K variants)
  G   = H / H_kv query heads per K/V head (grouped-query attention; 1 for multi-head)
  Tq  K/V passes per (batch, query head): ceil(Nq / BLOCK_M) query blocks, each reading its K/V head; with
      decode packing (G > 1, Nq <= 16: a program holds the G*Nq rows of one K/V head's group),
      ceil(G*Nq / BLOCK_M) / G, the group's packed blocks shared among its G heads (a variant whose tiling
      is ``rows``, row-stream, never packs)
  P   visible (query, key) pairs per (batch, head): Nq*Nk, or with the bottom-right causal mask the area
      under the diagonal, Nq*Nk - Nq^2/2 if Nk >= Nq else Nk^2/2 (exactly half the square at Nq = Nk,
      the usual convention for attention FLOPs)
  rho = P / (Nq*Nk), the share of K/V a query block reads
  Kb  = ceil(Nk / BLOCK_N) key blocks
FLOPs are those of the matrix products, 2 per multiply-add: Q K^T and P V are 2*P*D each, 4*P*D per
(batch, head) in all; the softmax, the merges' weights and masks are not counted. Everything is per
(batch, head), then times B*H. Intensity = FLOPs / (bytes read + bytes written).

Only ``math`` and vgprscope's own light modules are imported; the split count and the packing come from
the kernels' own rules (``kernels/_launch``, plain Python) so the model and the launch never disagree; the
split count depends on the GPU's SM / CU count, given as the arch's (``compute_units``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ..core.errors import UnknownNameError
from .config import AttentionConfig

if TYPE_CHECKING:
    from ..core.records import Record
    from .variants import Variant

ELEMENT_BYTES = {"fp16": 2, "bf16": 2}
SUFFIX = " (per batch*head; times B*H)"

# What the compare view prints under its tables, the symbols of every formula defined.
NOTATION_TEXT = (
    "traffic notation: B, H, Nq, Nk = the reference shape (batch, query heads, query and key lengths; H_kv "
    "K/V heads, G = H/H_kv); D = head dim; e = bytes per element (2 for fp16, bf16; fp32 workspaces: 4); "
    "Tq = K/V passes per (batch, head): ceil(Nq/BLOCK_M) query blocks (grouped-query decode: the group's packed "
    "blocks / G); P = visible (query, key) pairs: Nq*Nk, or under the causal mask the area below the diagonal; "
    "rho = P/(Nq*Nk), the share of K/V a query block reads; Kb = ceil(Nk/BLOCK_N) key blocks; S = splits "
    "(split-k); A_s, m_s, l_s = a split's partial output, row max and row sum; m, l = row max and sum")


@dataclass(frozen=True)
class Traffic:
    """A variant's modelled traffic at one config; what the compare view shows of it (``basis``, ``rule``,
    and the class's ``scope``, ``md_scope`` and ``notation`` lines) is said here, in the model's words."""

    bytes_read: float
    bytes_written: float
    flops: float
    intensity: float  # FLOPs per byte moved
    formula: str  # the variant's formula, in the module's notation
    # the reference problem it was modelled on ("B=4 H=32 Nq=4096 Nk=4096"): said, not compared
    basis: str = field(default="", compare=False)

    scope: ClassVar[str] = "(--shape); per (batch, head), times B*H"
    md_scope: ClassVar[str] = ("`--shape`; notation in `vgprscope/flashattn/traffic.py`, formulas in each variant's "
                               "`VARIANT['traffic']`")
    notation: ClassVar[str] = NOTATION_TEXT

    @property
    def bytes_total(self) -> float:
        return self.bytes_read + self.bytes_written

    @property
    def rule(self) -> str:
        """The formula without the per-(batch, head) note the legend says once."""
        return self.formula.removesuffix(SUFFIX)


@dataclass(frozen=True)
class Problem:
    """The reference problem and the tiles of one config, in the module's notation."""

    bh: int  # B * H
    group: int  # G
    nq: int
    nk: int
    d: int
    e: int
    tq: float
    kb: int
    pairs: float  # P
    rho: float
    splits: int

    @classmethod
    def of(cls, config: AttentionConfig, compute_units: int | None = None, can_pack: bool = True) -> Problem:
        from ..kernels._launch import attention_grid, num_splits, problem

        b, h, nq, nk, hkv = problem(config.as_dict())
        blocks, columns = attention_grid(b, h, nq, hkv, config.block_m, can_pack)
        if not config.causal:
            pairs = float(nq * nk)
        elif nk >= nq:
            pairs = nq * nk - nq * nq / 2
        else:
            pairs = nk * nk / 2
        return cls(bh=b * h, group=h // hkv, nq=nq, nk=nk, d=config.head_dim, e=ELEMENT_BYTES[config.dtype],
                   tq=blocks * columns / (b * h), kb=math.ceil(nk / config.block_n), pairs=pairs,
                   rho=pairs / (nq * nk), splits=num_splits(config.as_dict(), compute_units))

    def values(self) -> dict[str, float]:
        """The notation's symbols -> their values."""
        return {"e": self.e, "D": self.d, "S": self.splits, "G": self.group, "Tq": self.tq, "P": self.pairs,
                "rho": self.rho, "Kb": self.kb, "Nq": self.nq, "Nk": self.nk}


def _variant(variant: Variant | str) -> Variant:
    if isinstance(variant, str):
        from .variants import get_variant

        return get_variant(variant)
    return variant


def shape_text(shape: Sequence[int]) -> str:
    b, h, nq, nk, *rest = shape
    return f"B={b} H={h} Nq={nq} Nk={nk}" + (f" H_kv={rest[0]}" if rest else "")


def traffic(variant: Variant | str, config: AttentionConfig, compute_units: int | None = None) -> Traffic:
    """Bytes read and written, FLOPs and intensity of ``variant`` (a bundled variant's name, or a Variant)
    on config's reference shape. ``compute_units``: the GPU's SMs / CUs, which set split-k's split count (see
    ``kernels/_launch``)."""
    v = _variant(variant)
    model = v.traffic
    if model is None:
        raise UnknownNameError("variant of the traffic model", v.name,
                               [w.name for w in _modelled()])
    p = Problem.of(config, compute_units, can_pack=v.tiling not in ("rows", "own"))
    values = p.values()
    read, written, flops = (x.eval(values) * p.bh for x in (model.read, model.written, model.flops))
    return Traffic(bytes_read=read, bytes_written=written, flops=flops, intensity=flops / (read + written),
                   formula=model.formula + SUFFIX, basis=shape_text(config.shape))


def _modelled() -> list[Variant]:
    from .variants import load_variants

    return [v for v in load_variants().values() if v.traffic is not None]


def line_traffic(variants: Iterable[Variant] | None = None) -> Callable[[Sequence[Record]], Traffic | None]:
    """The compare view's traffic hook (``compare.compare(records, traffic=...)``): the modelled traffic of
    one line's kernel records, for a line of ``variants`` (default: the bundled ones) that declares a model;
    None for any other line (a captured kernel, a variant without a model)."""
    if variants is None:
        from .variants import load_variants

        variants = load_variants().values()
    by_name = {v.name: v for v in variants}

    def of(kernels: Sequence[Record]) -> Traffic | None:
        from ..core.archs import get_arch

        first = kernels[0]
        v = by_name.get(first.variant)
        if first.source != "variants" or v is None or v.traffic is None or not isinstance(first.config,
                                                                                             AttentionConfig):
            return None
        try:
            units = get_arch(first.arch).compute_units
        except UnknownNameError:  # a record of an arch this table does not have (read back from JSON)
            return None
        return traffic(v, first.config, units)

    return of
