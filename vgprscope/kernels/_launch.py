"""Host-side helpers shared by the variant files: launch arguments, backend options, config checks.

Plain Python on plain dicts (a KernelConfig as a dict), so kernel files need nothing from vgprscope.
"""

TRITON_DTYPES = {"fp16": "fp16", "bf16": "bf16"}
HEAD_DIM_RANGE = (16, 256)
BLOCK_RANGE = (16, 256)
AMD_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
NVIDIA_OPTIONS = ("maxnreg",)


def _pow2(x):
    return x > 0 and x & (x - 1) == 0


def check_common(cfg):
    """Why a FlashAttention-style variant cannot take cfg, or None."""
    lo, hi = HEAD_DIM_RANGE
    if not lo <= cfg["head_dim"] <= hi:
        return f"head_dim {cfg['head_dim']} is out of range; allowed: {lo} to {hi} (padded to a power of two)"
    for name in ("block_m", "block_n"):
        v = cfg[name]
        if not (_pow2(v) and BLOCK_RANGE[0] <= v <= BLOCK_RANGE[1]):
            return f"{name} {v} is not allowed; allowed: powers of two from {BLOCK_RANGE[0]} to {BLOCK_RANGE[1]}"
    if cfg["dtype"] not in TRITON_DTYPES:
        return f"dtype {cfg['dtype']!r} is not allowed; allowed: {', '.join(TRITON_DTYPES)}"
    if not (_pow2(cfg["num_warps"]) and cfg["num_warps"] <= 16):
        return f"num_warps {cfg['num_warps']} is not allowed; allowed: 1, 2, 4, 8, 16"
    if cfg["num_stages"] < 1:
        return f"num_stages {cfg['num_stages']} is not allowed; allowed: 1 or more"
    return None


def contiguous_strides(*shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def contiguous_args(dtype, b, h, nq, nk, d, names):
    """Example launch values for pointers and (b, h, m) strides of contiguous (B, H, N, D) tensors.

    Pointers are given as their Triton type; the compile engine treats them as 16-byte aligned.
    The names are (Q, K, V, O): Q and O have Nq rows, K and V have Nk rows.
    """
    ptr = "*" + TRITON_DTYPES[dtype]
    args = {n: ptr for n in names}
    rows = {"Q": nq, "O": nq, "K": nk, "V": nk}
    for n in names:
        sb, sh, sm, _ = contiguous_strides(b, h, rows[n], d)
        x = n.lower()
        args[f"stride_{x}b"], args[f"stride_{x}h"] = sb, sh
        args[f"stride_{x}{'n' if n in ('K', 'V') else 'm'}"] = sm
    return args


def is_hip():
    import torch

    return torch.version.hip is not None


def backend_options(cfg, device=None):
    """Launch keyword arguments: warps, stages and the options of the running backend only."""
    opts = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
    own = AMD_OPTIONS if is_hip() else NVIDIA_OPTIONS
    for name in own:
        if cfg.get(name) is not None:
            opts[name] = cfg[name]
    return opts
