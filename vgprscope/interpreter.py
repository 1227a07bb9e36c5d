"""Fixes for running the kernels under ``TRITON_INTERPRET=1`` (the CPU interpreter used in CI).

Triton's interpreter (3.6 through 3.9 at least) stores bfloat16 as raw uint16 bits and its ``tl.dot``
multiplies those integers, so every bf16 dot is garbage. ``patch_bf16_dot`` widens bf16 operands to the
float32 values they encode before the product (exact: every bf16 value is a float32 value); fp32
accumulation is what the GPU does too. Nothing else in the interpreter changes.
"""

from __future__ import annotations

import os


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def no_driver_hint(exc: BaseException | None) -> str | None:
    """What to do when Triton found no GPU driver (``exc`` is its "0 active drivers" RuntimeError), or None
    for any other error. @triton.jit reads TRITON_INTERPRET when a kernel is defined, so the variable set
    later (a notebook's cell after the imports) does not reach the kernels already imported."""
    if not isinstance(exc, RuntimeError) or not str(exc).startswith("0 active drivers"):
        return None
    if interpreting():
        return ("Triton found no GPU driver (\"0 active drivers\"): TRITON_INTERPRET=1 is set, but after these "
                "kernels were imported (@triton.jit reads it when a kernel is defined); set it before importing "
                "them (in a notebook: restart, set os.environ['TRITON_INTERPRET'] = '1' first)")
    return ("Triton found no GPU driver (\"0 active drivers\"); on a machine without a GPU, run under Triton's "
            "interpreter: set TRITON_INTERPRET=1 before the kernels are imported")


def patch_bf16_dot() -> None:
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.create_dot, "_vgprscope_bf16", False):
        return
    original = builder.create_dot

    def widen(handle):
        if handle.dtype.scalar == tl.bfloat16 if hasattr(handle.dtype, "scalar") else handle.dtype == tl.bfloat16:
            bits = handle.data.astype(np.uint32) << 16
            return interpreter.TensorHandle(bits.view(np.float32), tl.float32)
        return handle

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return original(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)

    create_dot._vgprscope_bf16 = True
    builder.create_dot = create_dot
