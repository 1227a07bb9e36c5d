"""The one table of output tolerances, per dtype, for a variant's output against float64.

An element passes when |out - ref| <= atol + rtol * |ref|, ref being the float64 reference of the same
(fp16 / bf16) inputs, which are N(0, 1) as the gate draws them. The same table serves the CPU
interpreter in CI and the GPU bench; nothing is loosened anywhere.

How the numbers were derived (``scripts/measure_tolerances.py``; raw results in
``reports/tolerance-measurements-*.json``, summary in ``reports/tolerances.md``):
  * rtol = 2 eps of the dtype (eps = 2^-10 fp16, 2^-7 bf16). The output is rounded to the dtype once
    (half an ulp on the GPU; the interpreter truncates bf16, up to one ulp: row-stream, whose P stays
    fp32, needs atol 6.6e-3 at rtol 0.5 eps on the CPU and 2e-8 at 1 eps), and P is rounded to the dtype
    before the P V product, another relative error of up to half an ulp per term.
  * atol = 2 x the largest atol any measured element needed at that rtol, max_elements(|err| - rtol*|ref|),
    rounded up to two significant digits; the factor 2 is the margin for draws beyond the measured ones.
    Measured over every variant, seqlen 1 to 8192 (ragged, Nq > Nk and Nq < Nk, causal or not), head
    dims 16 to 256, two seeds each: on an H200 (Triton 3.6, default configs, 252 runs of B=2, H=4 per
    variant and dtype) and on the CPU interpreter (Triton 3.9, 16 x 16 tiles, 160 runs of B=1, H=2 each):
        fp16: needed 4.86e-4 (H200, two-phase), 4.76e-4 (CPU, two-phase)    -> atol 1.0e-3
        bf16: needed 4.17e-3 (H200, two-phase), 4.25e-3 (CPU, baseline)     -> atol 8.5e-3
    The largest |err| seen was 1.78e-3 (fp16) and 2.67e-2 (bf16, at a large |ref|); both pass.
  * A variant whose arithmetic is less accurate by design declares its own entry in its
    ``VARIANT['tolerance']`` (dtype -> atol, rtol; rtol may be a formula of the dtype's ``eps``): qk-fp16-acc
    (fp16 only): Q K^T accumulated and scaled in fp16 rounds every logit to an fp16 ulp of its partial sums
    (2^-8 at |s| ~ 4), an error in exp(s) that a table built for fp32 scores cannot absorb. Same rule and
    margin, measured on that variant alone:
        needed 2.87e-3 (H200), 1.65e-3 (CPU)                               -> atol 5.8e-3
  A deliberately wrong variant (FA2 without the rescale of acc) is off by up to 5.3 on the H200 runs and
  1.4 to 1.9 on the CPU test shapes: hundreds of times the bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import UsageError
from .expr import ExprError, parse

FP16_EPS = 2.0 ** -10
BF16_EPS = 2.0 ** -7
EPS = {"fp16": FP16_EPS, "bf16": BF16_EPS}


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


TOLERANCES: dict[str, Tolerance] = {
    "fp16": Tolerance(atol=1.0e-3, rtol=2 * FP16_EPS),
    "bf16": Tolerance(atol=8.5e-3, rtol=2 * BF16_EPS),
}


def tolerance_entries(value: Any, where: str) -> tuple[tuple[str, Tolerance], ...]:
    """``VARIANT['tolerance']`` checked: dtype -> {"atol": ..., "rtol": ...}, each a number or a formula of
    ``eps`` (the dtype's machine epsilon)."""
    if not isinstance(value, dict) or not value:
        raise UsageError(f"{where} must be a dict of dtype: {{'atol': ..., 'rtol': ...}}")
    out = []
    for dtype, entry in value.items():
        if dtype not in TOLERANCES:
            raise UsageError(f"{where}: no tolerance table for dtype {dtype!r}; allowed: {', '.join(TOLERANCES)}")
        if not isinstance(entry, dict) or set(entry) != {"atol", "rtol"}:
            raise UsageError(f"{where}[{dtype!r}] must be {{'atol': ..., 'rtol': ...}}")
        try:
            atol, rtol = (parse(entry[k], ("eps",)).eval({"eps": EPS[dtype]}) for k in ("atol", "rtol"))
        except ExprError as exc:
            raise UsageError(f"{where}[{dtype!r}]: {exc}") from None
        if not (atol >= 0 and rtol >= 0):
            raise UsageError(f"{where}[{dtype!r}]: atol and rtol must not be negative")
        out.append((dtype, Tolerance(atol=float(atol), rtol=float(rtol))))
    return tuple(out)
