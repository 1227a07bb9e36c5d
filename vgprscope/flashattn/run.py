"""``vgprscope.attention()``: run a bundled (or user) variant on real tensors."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..core.archs import Vendor
from ..core.errors import ConfigError, UsageError
from . import loader
from .config import DTYPES, LAUNCH_FIELDS, AttentionConfig
from .variants import get_variant

_TORCH_DTYPES = {"float16": "fp16", "bfloat16": "bf16"}


def _vendor(q) -> Vendor:
    from ..backends import tensor_backend

    return tensor_backend(q).vendor


def _arch_name(q) -> str | None:
    """vgprscope's arch name of q's device (None on the CPU, or a device the arch table lacks)."""
    if not q.is_cuda:
        return None
    import torch

    from ..backends import tensor_backend
    from ..core.errors import UnknownNameError

    props = torch.cuda.get_device_properties(q.device)
    try:
        return tensor_backend(q).device_arch(props).name
    except UnknownNameError:
        return None


def config_for_tensors(variant, q, k, causal: bool, overrides: dict[str, Any]) -> AttentionConfig:
    """The AttentionConfig a launch on these tensors uses: the variant's defaults for the running backend,
    the shape's and arch's defaults over them (``vgprscope.flashattn.tuning``), then the caller's overrides
    (unknown names are a variant's extra knobs)."""
    dtype = _TORCH_DTYPES.get(str(q.dtype).removeprefix("torch."))
    if dtype is None:
        raise UsageError(f"q has dtype {q.dtype}; allowed: torch.float16, torch.bfloat16")
    vendor = _vendor(q)
    b, h, nq, d = q.shape
    hkv = k.shape[1]
    shape = (b, h, nq, k.shape[2]) + ((hkv,) if hkv != h else ())
    from .tuning import shape_defaults

    arch = _arch_name(q)
    if arch is not None:  # the variant's defaults for this arch and head dim (VARIANT['defaults_for'])
        from ..core.archs import get_arch

        base = variant.defaults_on(get_arch(arch), d, causal)
    else:
        base = {name: variant.default(name, vendor) for name, _ in variant.defaults}
    base |= shape_defaults(variant, vendor, arch, shape, d)
    known = {"block_m", "block_n", *LAUNCH_FIELDS}
    fields = {k: v for k, v in (base | overrides).items() if k in known}
    extra = {k: v for k, v in (base | overrides).items() if k not in known}
    return AttentionConfig(
        head_dim=d, dtype=dtype, causal=causal, shape=shape,
        extra=tuple(sorted(extra.items())), **fields,
    )


def attention(q, k, v, causal: bool = False, variant: str = "baseline", sm_scale: float | None = None,
              kernel_dir: str | Path | None = None, **config: Any):
    """softmax(q k^T * scale [+ bottom-right causal mask]) v through a variant's kernels. q is (B, H, Nq, D);
    k and v are (B, H_kv, Nk, D) with H_kv dividing H (grouped-query attention; H_kv = 1 is multi-query).
    ``config``: block_m, block_n, num_warps, ... and the variant's knobs; unset ones take its defaults."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise UsageError(f"{name} must be 4-D (batch, heads, seqlen, head_dim); got shape {tuple(t.shape)}")
    if (k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3] or k.shape[1] < 1
            or q.shape[1] % k.shape[1]):
        raise UsageError(f"shapes do not fit: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}; "
                         "allowed: q (B, H, Nq, D), k and v (B, H_kv, Nk, D) with H_kv dividing H")
    if not (q.dtype == k.dtype == v.dtype):
        raise UsageError(f"q, k, v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    directory = Path(kernel_dir) if kernel_dir else loader.BUNDLED_DIR
    var = get_variant(variant, directory)
    cfg = config_for_tensors(var, q, k, causal, config)
    if cfg.dtype not in DTYPES:
        raise UsageError(f"dtype {cfg.dtype} is not allowed; allowed: {', '.join(DTYPES)}")
    reason = var.check(cfg)
    if reason:
        raise ConfigError(f"{var.name}: {reason}")
    from ..core.errors import NoGpuDriverError
    from ..runtime.interp import fix_interpreter, interpreting, no_driver_hint

    if interpreting():
        if not var.interpreter:
            raise ConfigError(f"{var.name} is written in Gluon, which does not run in Triton's interpreter "
                              f"(TRITON_INTERPRET=1): run it on a GPU")
        fix_interpreter()
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    # the kernels take each row's max on unscaled scores and scale it once: that needs a positive scale
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise UsageError(f"sm_scale {sm_scale!r} is not allowed; allowed: a positive finite number "
                         f"(default 1/sqrt(head_dim))")
    if q.device.type == "cpu" and not interpreting():  # Triton's JIT would fail on finding no GPU driver
        raise NoGpuDriverError(no_driver_hint(RuntimeError("0 active drivers")) or "")
    q, k, v = (t.contiguous() for t in (q, k, v))
    try:
        return var.module().launch(q, k, v, causal, scale, cfg.launch_dict())
    except RuntimeError as exc:
        if (hint := no_driver_hint(exc)) is not None:
            raise NoGpuDriverError(hint) from exc
        raise
