"""Everything about the bundled FlashAttention variants (``kernels/``), in one package (docs/design.md, "Layers").

- ``variants``: the registry and protocol (each kernel file's ``VARIANT = {...}``, read without importing it),
  config resolution; ``loader``: a kernel directory loaded by path;
- ``config``: the attention config (head dim, dtype, causal mask, shape) and the user's request;
- ``tuning``: the shape's and arch's defaults; ``traffic``: the memory-traffic model (and compare's hook,
  ``line_traffic``); ``live``: seed 001's estimate of the loop state (and explain's hook, ``estimate``);
  ``declared``: the live-state and traffic models a variant declares, read and checked; ``expr``: the
  arithmetic the variants' declarations write their formulas in;
- ``tolerances`` (the table) and ``correctness`` (a variant's tolerance, the check): the correctness gate;
  ``run``: ``vgprscope.attention()``;
- ``source``: the variants as a source of compile tasks; ``gate``: the register gate's default set and
  config-table checks.

Nothing below this package (compile, parse, occupancy, gate, report, the other sources) imports it. Importing
the package itself is cheap: its modules are imported by what uses them.

The package is callable: ``vgprscope.attention(q, k, v, ...)`` runs a variant (``attention`` below), and
``vgprscope.attention.traffic`` is still the module, however it is imported.
"""

from __future__ import annotations

import sys
import types


def attention(q, k, v, causal: bool = False, variant: str = "baseline", sm_scale: float | None = None, **config):
    """O = softmax(Q K^T * scale [+ causal mask, bottom-right aligned]) V with a bundled variant.

    q: (batch, heads, seqlen_q, head_dim); k, v: (batch, heads, seqlen_k, head_dim); fp16 or bf16.
    ``config`` takes the variant's knobs (block_m, block_n, num_warps, num_stages, ...).
    Rows whose every key is masked (causal with seqlen_q > seqlen_k) come out as zeros.
    """
    from .run import attention as _attention

    return _attention(q, k, v, causal=causal, variant=variant, sm_scale=sm_scale, **config)


class _CallablePackage(types.ModuleType):
    """This package, callable as ``vgprscope.attention(q, k, v, ...)``: the name is both the package and the
    function users call, and either way of importing it (``from vgprscope import attention``, ``import
    vgprscope.attention.traffic as t``) gets the same object."""

    def __call__(self, q, k, v, causal: bool = False, variant: str = "baseline", sm_scale: float | None = None,
                 **config):
        return attention(q, k, v, causal=causal, variant=variant, sm_scale=sm_scale, **config)

    __call__.__doc__ = attention.__doc__


sys.modules[__name__].__class__ = _CallablePackage
