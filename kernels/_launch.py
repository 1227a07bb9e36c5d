"""Host-side helpers shared by the variant files: launch arguments, backend options, config checks.

Plain Python on plain dicts (an AttentionConfig as a dict), so kernel files need nothing from vgprscope.
Kernel arguments are built as {name: value} dicts, the same for a compile spec (example values: pointer
types as strings) and for a launch (real tensors), so the two can never disagree on names or order.
"""

import functools
import math

TRITON_DTYPES = {"fp16": "fp16", "bf16": "bf16"}
HEAD_DIM_RANGE = (16, 256)
BLOCK_RANGE = (16, 256)
# Split-K fills one wave: the most splits with which every program of the pass has an SM / CU of its own (the
# device's count when launching, the arch table's when compiling). Measured on an H100
# (reports/probe-decode-h100*.txt, the probe at git 53fe4bb), B1 H32 Nq1 Nk65536, 32 programs a split:
# 4 splits (128 programs) 367 us, 5 (160: 28 SMs run two) 437 us, 9 (288) 385 us, 2 (64) 368 us. A split
# count whose programs overflow the SMs by a few leaves those SMs twice the work; fewer programs than SMs
# still stream K/V at the memory's rate (64 SMs reached 2.9 TB/s), so one wave of them is the choice.
# The SM / CU count used when the caller names none (a compile spec built outside vgprscope's engine): an
# H100 / H200's 132 SMs. vgprscope's compile worker passes the arch table's count as cfg["compute_units"].
FALLBACK_COMPUTE_UNITS = 132
# Decode packing: at Nq <= this, under grouped-query attention (H_kv < H), one program takes the query rows of
# every head that shares a K/V head (group x Nq rows) in its M dimension, so each K/V tile is read once per
# group instead of once per query head; Nq 1 with BLOCK_M 128 would otherwise be 127 rows of padding.
PACK_MAX_NQ = 16
# A tensor descriptor (knob tma) needs 16-byte aligned bases and row strides: fp16 / bf16 rows of a multiple of 8.
TMA_HEAD_DIM_MULTIPLE = 8
TMA_ALIGN_BYTES = 16
# The tensors of an attention launch and which sequence length their rows follow.
ROWS = {"Q": "m", "O": "m", "K": "n", "V": "n"}


def _pow2(x):
    return x > 0 and x & (x - 1) == 0


def knob(cfg, name, default=None):
    """The variant-specific knob ``name`` of cfg (an AttentionConfig as a dict), or ``default`` when not given."""
    return (cfg.get("extra") or {}).get(name, default)


def check_tma(cfg):
    """Why knob ``tma`` (K/V through tensor descriptors: TMA on sm_90+) cannot be used with cfg, or None."""
    t = knob(cfg, "tma", 0)
    if t not in (0, 1) or isinstance(t, bool):
        return f"tma {t!r} is not allowed; allowed: 0 (pointer loads) or 1 (tensor descriptors)"
    if t and cfg["head_dim"] % TMA_HEAD_DIM_MULTIPLE:
        return (f"tma=1 needs 16-byte rows: a head dim that is a multiple of {TMA_HEAD_DIM_MULTIPLE}; "
                f"head_dim {cfg['head_dim']} is not (use tma=0)")
    return None


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
    kv = check_kv_heads(cfg)
    if kv:
        return kv
    # a misspelt knob would otherwise be ignored without a word
    unknown = sorted(set(cfg.get("extra") or {}) - set(knobs))
    if unknown:
        return f"unknown knob {unknown[0]!r}; this variant takes: {', '.join(knobs) or 'none'}"
    # the knobs every FA2-loop variant may take are checked here, once; a variant's own ones by the variant
    return check_tma(cfg) if "tma" in knobs else None


def contiguous_strides(*shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def problem(cfg):
    """(B, H, Nq, Nk, H_kv) of cfg's shape: (B, H, Nq, Nk) is multi-head (H_kv = H), or (B, H, Nq, Nk, H_kv)."""
    b, h, nq, nk, *rest = cfg["shape"]
    return b, h, nq, nk, (rest[0] if rest else h)


def check_kv_heads(cfg):
    """Why cfg's K/V head count cannot be used, or None."""
    _, h, _, _, hkv = problem(cfg)
    if not (isinstance(hkv, int) and 1 <= hkv <= h and h % hkv == 0):
        return f"kv_heads {hkv!r} does not divide heads {h}; allowed: a divisor of {h} (1 = MQA, {h} = MHA)"
    return None


def packs(nq, group):
    """Whether the attention kernels pack the group's query rows into M (``program_rows`` PACK)."""
    return group > 1 and nq <= PACK_MAX_NQ


def attention_grid(b, h, nq, hkv, block_m, can_pack=True):
    """(query blocks, programs per block column) of an attention pass: (ceil(Nq / BLOCK_M), B*H), or
    packed (ceil(G*Nq / BLOCK_M), B*H_kv) with G = H / H_kv for a kernel that packs (``can_pack``)."""
    group = h // hkv
    if can_pack and packs(nq, group):
        return query_blocks(group * nq, block_m), b * hkv
    return query_blocks(nq, block_m), b * h


def contiguous_args(dtype, b, h, nq, nk, d, names, hkv=None):
    """Example launch values for pointers and (b, h, m) strides of contiguous (B, H, N, D) tensors.

    Pointers are given as their Triton type; the compile engine treats them as 16-byte aligned.
    The names are (Q, K, V, O): Q and O have Nq rows and H heads, K and V have Nk rows and H_kv heads.
    """
    ptr = "*" + TRITON_DTYPES[dtype]
    seqlen = {"m": nq, "n": nk}
    heads = {"m": h, "n": hkv or h}
    return _pointer_args({n: (ptr, contiguous_strides(b, heads[ROWS[n]], seqlen[ROWS[n]], d)) for n in names})


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


def scalar_args(h, nq, nk, d, sm_scale=None, hkv=None):
    """The scalars every attention kernel takes; ``sm_scale`` defaults to 1/sqrt(d) (compile specs).
    ``kv_group`` = H / H_kv query heads per K/V head (1 for multi-head: Triton then specialises it away)."""
    scale = sm_scale if sm_scale is not None else d ** -0.5
    return {"sm_scale": scale, "num_heads": h, "kv_group": h // (hkv or h), "seqlen_q": nq, "seqlen_k": nk}


def example_args(cfg, names=("Q", "K", "V", "O")):
    """Example launch values for a compile spec of cfg's reference shape."""
    b, h, nq, nk, hkv = problem(cfg)
    d = cfg["head_dim"]
    return contiguous_args(cfg["dtype"], b, h, nq, nk, d, names, hkv) | scalar_args(h, nq, nk, d, hkv=hkv)


def launch_args(q, k, v, sm_scale, **tensors):
    """Launch values for real q, k, v (and outputs / workspaces given by kernel argument name)."""
    b, h, nq, d = q.shape
    pointers = {n: t for n, t in tensors.items() if n in ROWS}
    return tensor_args(Q=q, K=k, V=v, **pointers) | scalar_args(h, nq, k.shape[2], d, sm_scale, k.shape[1]) | {
        n: t for n, t in tensors.items() if n not in ROWS}


def pick(args, fn):
    """The subset of ``args`` that ``fn`` (a Triton kernel) takes, in its own order."""
    return {n: args[n] for n in fn.arg_names if n in args}


def spec(name, fn, args, constexprs):
    """One compile spec: only the arguments and constexprs fn takes, so callers may pass a common superset."""
    return {"name": name, "fn": fn, "args": pick(args, fn), "constexprs": pick(constexprs, fn)}


def backend_options(cfg, device=None):
    """Launch keyword arguments: the launch options vgprscope resolved for the running GPU (``launch_options``:
    warps, stages and its backend's own options); warps and stages alone for a config without them."""
    return dict(cfg.get("launch_options") or {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})


def run(fn, grid, args, constexprs, cfg):
    """Launch ``fn`` with the arguments it takes out of ``args`` (a superset is fine)."""
    own = pick(constexprs, fn)
    if own.get("TMA"):
        check_descriptor_tensors(args)
        ensure_allocator()
    fn[grid](**pick(args, fn), **own, **backend_options(cfg))


def check_descriptor_tensors(args):
    """K and V read through tensor descriptors: every head's base and row must be 16-byte aligned."""
    for name in ("K", "V"):
        t = args[name]
        x = name.lower()
        steps = [args[f"stride_{x}b"], args[f"stride_{x}h"], args[f"stride_{x}n"]]
        if t.data_ptr() % TMA_ALIGN_BYTES or any(s * t.element_size() % TMA_ALIGN_BYTES for s in steps):
            raise ValueError(f"tma=1 needs {name} with 16-byte aligned heads and rows; got strides "
                             f"{tuple(t.stride())} at address {t.data_ptr():#x} (use tma=0, or a contiguous "
                             f"tensor with a head dim that is a multiple of {TMA_HEAD_DIM_MULTIPLE})")


def ensure_allocator():
    """Tensor descriptors built inside a kernel take a little global scratch per program (on sm_90+): give
    Triton an allocator when the process has none (one already set by the caller is kept)."""
    import triton
    from triton.runtime import _allocation

    # Triton keeps the allocator in a private ContextVar (3.6 to 3.9); read it as a plain value otherwise
    current = _allocation._allocator
    current = current.get() if hasattr(current, "get") else current
    if isinstance(current, _allocation.NullAllocator):
        triton.set_allocator(_scratch)


def _scratch(size, alignment, stream):
    import torch

    return torch.empty(size, dtype=torch.int8, device="cuda")


def query_blocks(nq, block_m):
    return math.ceil(nq / block_m)


def next_pow2_dim(head_dim):
    """The padded head dim the kernels use for tiles (a power of two, at least 16)."""
    return max(16, 1 << (head_dim - 1).bit_length())


def fa_constexprs(cfg, head_dim, causal, **flags):
    """The constexprs of an attention kernel with the (Q, K, V, O) argument set, plus its own flags.
    PACK follows cfg's shape (a launch's cfg carries the tensors' shape)."""
    _, h, nq, _, hkv = problem(cfg)
    return {"BLOCK_M": cfg["block_m"], "BLOCK_N": cfg["block_n"], "BLOCK_D": next_pow2_dim(head_dim),
            "HEAD_DIM": head_dim, "CAUSAL": bool(causal), "PACK": packs(nq, h // hkv),
            "TMA": bool(knob(cfg, "tma", 0))} | flags


def tensor_shape(q, k):
    """cfg['shape'] of real tensors: (B, H, Nq, Nk), with H_kv appended when it differs from H."""
    b, h, nq, _ = q.shape
    return [b, h, nq, k.shape[2]] + ([k.shape[1]] if k.shape[1] != h else [])


def grid_of(q, k, block_m, fn=None):
    """The grid of an attention pass of kernel ``fn`` on q, k (packed if fn takes PACK; all bundled
    multi-pass kernels do)."""
    can_pack = fn is None or "PACK" in fn.arg_names
    return attention_grid(q.shape[0], q.shape[1], q.shape[2], k.shape[1], block_m, can_pack)


def one_kernel_specs(name, fn, cfg, **flags):
    """The specs of a variant that is one kernel over (Q, K, V, O), one program per query block and head."""
    return [spec(name, fn, example_args(cfg), fa_constexprs(cfg, cfg["head_dim"], cfg["causal"], **flags))]


def launch_one_kernel(fn, q, k, v, causal, sm_scale, cfg, **flags):
    """Launch such a kernel on real tensors; returns o like q."""
    import torch

    o = torch.empty_like(q)
    cfg = cfg | {"shape": tensor_shape(q, k)}
    run(fn, grid_of(q, k, cfg["block_m"], fn), launch_args(q, k, v, sm_scale, O=o),
        fa_constexprs(cfg, q.shape[3], causal, **flags), cfg)
    return o


# ---- split-K: how many splits, and the fp32 workspaces the splits write ----

def num_key_blocks(cfg):
    return math.ceil(problem(cfg)[3] / cfg["block_n"])


def check_num_splits(cfg):
    """Why ``extra['num_splits']`` cannot be used with cfg's shape, or None (absent means: from the shape)."""
    s = knob(cfg, "num_splits")
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


def num_splits(cfg, compute_units=None):
    """The split count: ``extra['num_splits']`` if given, else from the shape and the GPU: the most splits
    whose programs still fit one per SM / CU (``compute_units``, else cfg['compute_units'], else
    FALLBACK_COMPUTE_UNITS), at least 1, never more than there are key blocks, then evened out so that every
    split gets the same number of key blocks (none is left empty)."""
    given = knob(cfg, "num_splits")
    if given is not None:
        return given
    units = compute_units or cfg.get("compute_units") or FALLBACK_COMPUTE_UNITS
    b, h, nq, _, hkv = problem(cfg)
    blocks, columns = attention_grid(b, h, nq, hkv, cfg["block_m"])
    n_blocks = num_key_blocks(cfg)
    want = max(1, min(n_blocks, units // (blocks * columns)))
    return math.ceil(n_blocks / math.ceil(n_blocks / want))


def device_compute_units(t):
    """SMs (NVIDIA) or CUs (AMD) of the device tensor ``t`` lives on; None on the CPU (interpreter)."""
    return _units_of(t.device.index or 0) if t.is_cuda else None


@functools.cache
def _units_of(index):
    import torch

    return torch.cuda.get_device_properties(index).multi_processor_count


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
