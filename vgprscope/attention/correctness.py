"""The correctness gate: a variant's output against the float64 reference, within the dtype's tolerance.

An element passes when |out - ref| <= atol + rtol * |ref| (the rule of ``torch.isclose``), with (atol, rtol)
from ``vgprscope.attention.tolerances``; a NaN or inf anywhere fails. ``check_output`` says where the worst
element is and by how much, in one line. ``run_variant`` draws fresh unit-normal inputs and runs a variant
through ``vgprscope.attention`` (on the CPU interpreter or a GPU) beside the reference. torch is imported lazily.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .tolerances import TOLERANCES, Tolerance

if TYPE_CHECKING:
    from .variants import Variant

_DTYPE_NAMES = {"torch.float16": "fp16", "torch.bfloat16": "bf16"}


@dataclass(frozen=True)
class NumericsVerdict:
    """A variant's output against the float64 reference: the verdict, the worst element and the counts."""

    ok: bool
    max_abs_err: float  # over finite elements
    max_rel_err: float  # |err| / |ref| over elements with |ref| > atol (below it, relative error means nothing)
    worst_index: tuple[int, ...]  # (b, h, m, d) of the element furthest past its bound (or nearest to it)
    worst_got: float
    worst_want: float
    atol: float
    rtol: float
    nan_count: int  # NaN or inf in the output
    mismatched: int  # elements past their bound, NaN / inf included
    numel: int
    message: str  # one line: verdict, where, by how much

    def __bool__(self) -> bool:
        return self.ok


def dtype_name(dtype: Any) -> str:
    """'fp16' / 'bf16' from either that name or a torch dtype."""
    return _DTYPE_NAMES.get(str(dtype), str(dtype))


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def check_output(out, ref, dtype, variant: Variant | str) -> NumericsVerdict:
    """Compare ``out`` (any float dtype) with ``ref`` (float64, same shape) under the tolerance of
    (dtype, variant): a Variant, or a bundled variant's name. Indices are reported in out's own shape,
    (b, h, m, d) for attention outputs."""
    import torch

    if tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"output shape {tuple(out.shape)} differs from the reference's {tuple(ref.shape)}")
    tol = tolerance(dtype_name(dtype), variant)
    got = out.detach().to(torch.float64)
    want = ref.detach().to(torch.float64)
    err = (got - want).abs()
    bound = tol.atol + tol.rtol * want.abs()
    finite = torch.isfinite(got)
    bad = ~finite | (err > bound)
    # how far past its bound each element is; non-finite outputs rank first
    ratio = torch.where(finite, err / bound, torch.full_like(err, math.inf))
    flat = int(torch.argmax(ratio.reshape(-1)).item()) if ratio.numel() else 0
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(out.shape))) if out.numel() else ()
    finite_err = torch.where(finite, err, torch.zeros_like(err))
    meaningful = finite & (want.abs() > tol.atol)
    rel = torch.where(meaningful, err / want.abs().clamp_min(tol.atol), torch.zeros_like(err))
    res = dict(
        max_abs_err=float(finite_err.max().item()) if err.numel() else 0.0,
        max_rel_err=float(rel.max().item()) if err.numel() else 0.0,
        worst_index=index,
        worst_got=float(got.reshape(-1)[flat].item()) if out.numel() else 0.0,
        worst_want=float(want.reshape(-1)[flat].item()) if out.numel() else 0.0,
        atol=tol.atol, rtol=tol.rtol, nan_count=int((~finite).sum().item()), mismatched=int(bad.sum().item()),
        numel=out.numel(),
    )
    ok = res["mismatched"] == 0
    name = variant if isinstance(variant, str) else variant.name
    return NumericsVerdict(ok=ok, message=_message(ok, res, tol, name, dtype_name(dtype)), **res)


def _message(ok: bool, r: dict[str, Any], tol: Tolerance, variant: str, dtype: str) -> str:
    where = ",".join(map(str, r["worst_index"]))
    diff = abs(r["worst_got"] - r["worst_want"])
    bound = tol.atol + tol.rtol * abs(r["worst_want"])
    at = (f"at ({where}) got {_fmt(r['worst_got'])} want {_fmt(r['worst_want'])}: |err| {diff:.3g} vs bound "
          f"{bound:.3g} = atol {tol.atol:g} + rtol {tol.rtol:g} * |want|")
    if ok:
        return (f"ok ({variant}, {dtype}): {r['numel']} elements within tolerance; max |err| "
                f"{r['max_abs_err']:.3g}, max rel {r['max_rel_err']:.3g}; closest to its bound {at}")
    pct = 100.0 * r["mismatched"] / max(r["numel"], 1)
    nan = f", {r['nan_count']} NaN/inf" if r["nan_count"] else ""
    times = "" if not math.isfinite(r["worst_got"]) else f" ({diff / bound:.3g}x the bound)"
    return (f"FAIL ({variant}, {dtype}): {r['mismatched']} / {r['numel']} elements ({pct:.2f}%) off{nan}; worst "
            f"{at}{times}; max |err| {r['max_abs_err']:.3g}, max rel {r['max_rel_err']:.3g}")


def run_variant(name: str, b: int, h: int, nq: int, nk: int, d: int, causal: bool, dtype: str = "fp16",
                device: str = "cpu", seed: int = 0, kernel_dir=None, kv_heads: int | None = None, **config: Any):
    """(out, ref): the variant's output on fresh N(0, 1) inputs, and the float64 reference of the same
    (rounded) inputs. Inputs are drawn on the CPU from ``seed``, so every device sees the same numbers.
    ``kv_heads``: K and V get that many heads (grouped-query attention); default h."""
    import torch

    from ..kernels.reference import attention_reference
    from .run import attention

    tdtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype_name(dtype)]
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(shape, generator=gen).to(device=device, dtype=tdtype)
               for shape in ((b, h, nq, d), (b, kv_heads or h, nk, d), (b, kv_heads or h, nk, d)))
    out = attention(q, k, v, causal=causal, variant=name, kernel_dir=kernel_dir, **config)
    return out, attention_reference(q, k, v, causal=causal)


def tolerance(dtype: str, variant: Variant | str = "") -> Tolerance:
    """The tolerance for ``variant``'s outputs in ``dtype`` ('fp16' or 'bf16'): its own declared entry, else
    the table's. ``variant``: a Variant, or a bundled variant's name ('' or another name: the table)."""
    if dtype not in TOLERANCES:
        raise KeyError(f"no tolerance for dtype {dtype!r}; known: {', '.join(TOLERANCES)}")
    if isinstance(variant, str):
        from .variants import load_variants

        variant = load_variants().get(variant)  # type: ignore[assignment]
    own = dict(variant.tolerances) if variant is not None else {}
    return own.get(dtype, TOLERANCES[dtype])
