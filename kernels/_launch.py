"""Host-side helpers shared by the variant files: launch arguments, backend options, config checks.

Plain Python on plain dicts (a KernelConfig as a dict), so kernel files need nothing from vgprscope.
Kernel arguments are built as {name: value} dicts, the same for a compile spec (example values: pointer
types as strings) and for a launch (real tensors), so the two can never disagree on names or order.
"""

import math

TRITON_DTYPES = {"fp16": "fp16", "bf16": "bf16"}
HEAD_DIM_RANGE = (16, 256)
BLOCK_RANGE = (16, 256)
AMD_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
NVIDIA_OPTIONS = ("maxnreg",)
# Split-K picks enough splits that the launch has this many programs: two per SM of an H100 / H200
# (132 SMs), about one per CU of an MI300X (304 CUs). Fewer programs leave part of the GPU idle.
SPLIT_TARGET_PROGRAMS = 2 * 132
# The tensors of an attention launch and which sequence length their rows follow.
ROWS = {"Q": "m", "O": "m", "K": "n", "V": "n"}


def _pow2(x):
    return x > 0 and x & (x - 1) == 0


def check_common(cfg, knobs=()):
    """Why a FlashAttention-style variant cannot take cfg, or None. ``knobs``: the extra knobs it takes."""
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
    # a misspelt knob would otherwise be ignored without a word
    unknown = sorted(set(cfg.get("extra") or {}) - set(knobs))
    if unknown:
        return f"unknown knob {unknown[0]!r}; this variant takes: {', '.join(knobs) or 'none'}"
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
    seqlen = {"m": nq, "n": nk}
    return _pointer_args({n: (ptr, contiguous_strides(b, h, seqlen[ROWS[n]], d)) for n in names})


def tensor_args(**tensors):
    """Launch values for real (B, H, N, D) tensors, named like ``contiguous_args``: Q=q, K=k, ..."""
    return _pointer_args({n: (t, t.stride()) for n, t in tensors.items()})


def _pointer_args(named):
    args = {}
    for n, (ptr, strides) in named.items():
        x = n.lower()
        args[n] = ptr
        args[f"stride_{x}b"], args[f"stride_{x}h"], args[f"stride_{x}{ROWS[n]}"] = strides[:3]
    return args


def scalar_args(h, nq, nk, d, sm_scale=None):
    """The scalars every attention kernel takes; ``sm_scale`` defaults to 1/sqrt(d) (compile specs)."""
    scale = sm_scale if sm_scale is not None else d ** -0.5
    return {"sm_scale": scale, "num_heads": h, "seqlen_q": nq, "seqlen_k": nk}


def example_args(cfg, names=("Q", "K", "V", "O")):
    """Example launch values for a compile spec of cfg's reference shape."""
    b, h, nq, nk = cfg["shape"]
    return contiguous_args(cfg["dtype"], b, h, nq, nk, cfg["head_dim"], names) | scalar_args(h, nq, nk,
                                                                                              cfg["head_dim"])


def launch_args(q, k, v, sm_scale, **tensors):
    """Launch values for real q, k, v (and outputs / workspaces given by kernel argument name)."""
    b, h, nq, d = q.shape
    pointers = {n: t for n, t in tensors.items() if n in ROWS}
    return tensor_args(Q=q, K=k, V=v, **pointers) | scalar_args(h, nq, k.shape[2], d, sm_scale) | {
        n: t for n, t in tensors.items() if n not in ROWS}


def pick(args, fn):
    """The subset of ``args`` that ``fn`` (a Triton kernel) takes, in its own order."""
    return {n: args[n] for n in fn.arg_names if n in args}


def spec(name, fn, args, constexprs):
    """One compile spec: only the arguments fn takes, so callers may pass a common superset."""
    return {"name": name, "fn": fn, "args": pick(args, fn), "constexprs": constexprs}


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


def run(fn, grid, args, constexprs, cfg):
    """Launch ``fn`` with the arguments it takes out of ``args`` (a superset is fine)."""
    fn[grid](**pick(args, fn), **constexprs, **backend_options(cfg))


def query_blocks(nq, block_m):
    return math.ceil(nq / block_m)


def next_pow2_dim(head_dim):
    """The padded head dim the kernels use for tiles (a power of two, at least 16)."""
    return max(16, 1 << (head_dim - 1).bit_length())


def fa_constexprs(cfg, head_dim, causal, **flags):
    """The constexprs of an attention kernel with the (Q, K, V, O) argument set, plus its own flags."""
    return {"BLOCK_M": cfg["block_m"], "BLOCK_N": cfg["block_n"], "BLOCK_D": next_pow2_dim(head_dim),
            "HEAD_DIM": head_dim, "CAUSAL": bool(causal)} | flags


def one_kernel_specs(name, fn, cfg, **flags):
    """The specs of a variant that is one kernel over (Q, K, V, O), one program per query block and head."""
    return [spec(name, fn, example_args(cfg), fa_constexprs(cfg, cfg["head_dim"], cfg["causal"], **flags))]


def launch_one_kernel(fn, q, k, v, causal, sm_scale, cfg, **flags):
    """Launch such a kernel on real tensors; returns o like q."""
    import torch

    o = torch.empty_like(q)
    grid = (query_blocks(q.shape[2], cfg["block_m"]), q.shape[0] * q.shape[1])
    run(fn, grid, launch_args(q, k, v, sm_scale, O=o), fa_constexprs(cfg, q.shape[3], causal, **flags), cfg)
    return o


# ---- split-K: how many splits, and the fp32 workspaces the splits write ----

def num_key_blocks(cfg):
    return math.ceil(cfg["shape"][3] / cfg["block_n"])


def check_num_splits(cfg):
    """Why ``extra['num_splits']`` cannot be used with cfg's shape, or None (absent means: from the shape)."""
    s = (cfg.get("extra") or {}).get("num_splits")
    if s is None:
        return None
    n_blocks = num_key_blocks(cfg)
    if not isinstance(s, int) or isinstance(s, bool) or s < 1:
        return f"num_splits {s!r} is not allowed; allowed: an integer from 1 to {n_blocks}"
    if s > n_blocks:
        blocks = f"{n_blocks} key block{'s' if n_blocks > 1 else ''}"
        return (f"num_splits {s} is more than the {blocks} of seqlen_k {cfg['shape'][3]} at block_n "
                f"{cfg['block_n']}; a split needs one; allowed: 1 to {n_blocks}")
    return None


def num_splits(cfg):
    """The split count: ``extra['num_splits']`` if given, else the fewest splits that bring the launch to
    SPLIT_TARGET_PROGRAMS programs, never more than there are key blocks (a split needs one)."""
    b, h, nq, _ = cfg["shape"]
    given = (cfg.get("extra") or {}).get("num_splits")
    if given is not None:
        return given
    programs = b * h * query_blocks(nq, cfg["block_m"])
    return max(1, min(num_key_blocks(cfg), math.ceil(SPLIT_TARGET_PROGRAMS / programs)))


def workspace_example_args(splits):
    """Example values of the split workspaces: partial O (fp32, B*H x S x Nq x D) and row max / sum
    (fp32, B*H x S x Nq), contiguous, addressed inside the kernels from (bh, split, row)."""
    return {"Acc": "*fp32", "M": "*fp32", "L": "*fp32", "num_splits": splits}


def workspaces(q, splits, partial_o=True):
    """Real split workspaces for q's shape; uninitialised: every element is written before it is read."""
    import torch

    b, h, nq, d = q.shape
    stats = dict(M=torch.empty((b * h, splits, nq), dtype=torch.float32, device=q.device),
                 L=torch.empty((b * h, splits, nq), dtype=torch.float32, device=q.device))
    if partial_o:
        stats["Acc"] = torch.empty((b * h, splits, nq, d), dtype=torch.float32, device=q.device)
    return stats | {"num_splits": splits}
