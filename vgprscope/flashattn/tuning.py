"""Defaults that depend on the problem's shape and the arch: what a config field is when the user gives none.

Resolution order (``variants.resolve_config``, ``vgprscope.attention``): the user's value, else the value
here, else the variant's own ``VARIANT['defaults']``. Two regimes:

Decode (Nq <= ``DECODE_MAX_NQ``): one query row per head (or a few) against a long K/V, a memory-bound
problem. A query tile of 128 rows would be 127 rows of padding at Nq = 1, so the tile is the packed rows
of one K/V head's group (G * Nq, ``kernels/_launch.packs``) rounded up to a power of two, at least 16 (the
matrix units' M) and at most ``DECODE_MAX_BLOCK_M``; wide key blocks and 4 warps, with a deeper pipeline
on NVIDIA. The issue's hand-picked H100 decode config (BLOCK_M 16, BLOCK_N 128, 4 warps, 3 stages) is
what this gives at B1 H32 Nq1 (369 us against 589 us at the variant defaults, issue 13).

Prefill on sm_90 (H100 / H200): the tile measured fastest for the FA2 loop at each head dim (issue 13:
128 x 128, 8 warps at D128, 0.77x cuDNN against 0.65-0.69x at 128 x 64; anchors.md: 128 x 64, 4 warps at
D64 on an H200). At D128, 3 stages against 2 on an H100 (B4 H32 N4096, same runs): causal 438 against 412
and 418 against 414 TFLOP/s, non-causal within run-to-run noise either way (485 / 475, 466 / 473);
`bash .ci/gpu_prefill.sh OUT` times both stage counts beside SDPA.
Other archs keep the variants' defaults.

Which of these apply to a variant is its own ``VARIANT['tiling']`` (kernels/*.py; ``TILINGS``): ``fa2`` (one
query tile per program in the FA2 loop: the decode tiles, and the prefill tiles measured for that loop),
``query-tile`` (one query tile per program in another loop: the decode tiles; the default), ``rows``
(BLOCK_M query rows per program, one at a time, as row-stream: left alone, its BLOCK_M is not a tile) or
``own`` (a tile the kernel's warp groups fix, as ws-regalloc's: its own defaults at every shape, unpacked).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..core.archs import Vendor

DECODE_MAX_NQ = 16
DECODE_MIN_BLOCK_M = 16  # the M of one MMA instruction
DECODE_MAX_BLOCK_M = 64
DECODE = {
    Vendor.NVIDIA: {"block_n": 128, "num_warps": 4, "num_stages": 3},
    Vendor.AMD: {"block_n": 64, "num_warps": 4},
}
# From this BLOCK_M on, NVIDIA decode keeps 64-key blocks: 64 x 128 tiles with 4 warps took 255 registers and
# spilled on sm_90 (Triton 3.9), and remat-q's three stages of them outgrew shared memory.
DECODE_WIDE_N_MAX_BLOCK_M = 32
# (arch, head dims up to) -> prefill tile of the FA2 loop's variants, first match wins
PREFILL = {
    "sm_90": ((64, {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 2}),
              (128, {"block_m": 128, "block_n": 128, "num_warps": 8, "num_stages": 3})),
}
# A variant's VARIANT['tiling'] (see the module docstring); "query-tile" where it declares none.
TILINGS = ("fa2", "query-tile", "rows", "own")


# Decode K/V tiles are staged in shared memory: num_stages - 1 key blocks of K and of V in flight, plus the
# query tile, 2-byte elements, head dim padded to a power of two. The estimate equals what Triton 3.9
# allocated for the 16 x 128 tile at 3 stages (sm_86 d128: 139264 B; sm_80 / sm_90 d256: 274432 B less the
# 8 KiB it does not count). tests/flashattn/test_defaults_fit.py compiles every default and checks the real bytes.
_TILE_ELEMENT_BYTES = 2


def _staged_bytes(cfg: dict[str, Any], head_dim: int) -> int:
    d = max(DECODE_MIN_BLOCK_M, _pow2_at_least(head_dim))
    kv = (max(cfg["num_stages"], 1) - 1) * cfg["block_n"] * d * 2 * _TILE_ELEMENT_BYTES
    return kv + cfg["block_m"] * d * _TILE_ELEMENT_BYTES


def _fit_shared(cfg: dict[str, Any], arch: str | None, head_dim: int) -> dict[str, Any]:
    """A decode tile that stages its key blocks (it sets ``num_stages``: NVIDIA's) made to fit the arch's
    shared memory per block: fewer stages first (down to 2, the pipeline's minimum), then narrower key
    blocks (down to 32). A tile that stages nothing, or an unknown arch, is kept."""
    if arch is None or "num_stages" not in cfg:
        return cfg
    from ..backends import group_memory_limit
    from ..core.archs import get_arch

    spec = get_arch(arch)
    limit = group_memory_limit(spec)
    cfg = dict(cfg)
    while _staged_bytes(cfg, head_dim) > limit and cfg["num_stages"] > 2:
        cfg["num_stages"] -= 1
    while _staged_bytes(cfg, head_dim) > limit and cfg["block_n"] > 32:
        cfg["block_n"] //= 2
    return cfg


def stages_refusal(num_stages: int, block_n: int, head_dim: int, arch: str) -> str | None:
    """Why a pipeline of ``num_stages`` stages cannot be held on ``arch`` (None: it can).

    Triton's software pipeliner keeps ``num_stages - 1`` iterations' loads in flight in shared memory /
    LDS; every attention variant loads a ``block_n x head_dim`` key tile per iteration (2-byte elements,
    head dim padded to a power of two), so a stage needs at least that tile, and more stages than
    ``1 + limit // tile`` cannot fit the arch's shared memory per workgroup whatever else the kernel keeps
    (the values are V tiles and the query tile on top). What Triton 3.9 allocated for the baseline variant
    on gfx942 (d128, block_n 64: K and V 16 KiB each) when it pipelined: 32768 B at 2 stages, 65536 B at 3,
    163840 B at 6 (over the 65536 B limit, after a 163 s compile); the compile time and memory grow with the
    stages (1000000 stages: 7 GB in 26 s), so such a request is refused before anything compiles."""
    from ..backends import group_memory_limit
    from ..core.archs import get_arch

    spec = get_arch(arch)
    limit = group_memory_limit(spec)
    tile = block_n * _pow2_at_least(head_dim) * _TILE_ELEMENT_BYTES
    most = 1 + limit // tile
    if num_stages <= most:
        return None
    return (f"num_stages {num_stages} is more than {spec.name} can hold: each stage after the first keeps at least "
            f"a {block_n} x {head_dim} key tile ({tile} B) in flight and {spec.name} has {limit} B of shared "
            f"memory / LDS per workgroup, room for at most {most} stages at this tile")


class Tiled(Protocol):
    """What the shape's defaults read of a variant (``flashattn.variants.Variant``): how it tiles."""

    @property
    def tiling(self) -> str: ...


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def shape_defaults(variant: Tiled, vendor: Vendor, arch: str | None, shape: tuple[int, ...],
                   head_dim: int) -> dict[str, Any]:
    """Config fields for ``variant`` at this shape (B, H, Nq, Nk[, H_kv]) on this vendor / arch that
    replace the variant's own defaults; {} where the variant's defaults stand."""
    if variant.tiling in ("rows", "own"):
        return {}
    _, h, nq, _, *rest = shape
    group = h // rest[0] if rest else 1
    if nq <= DECODE_MAX_NQ:
        rows = group * nq if group > 1 else nq  # packed rows of one K/V head (kernels/_launch.packs)
        block_m = min(DECODE_MAX_BLOCK_M, max(DECODE_MIN_BLOCK_M, _pow2_at_least(rows)))
        cfg = {"block_m": block_m} | DECODE[vendor]
        if block_m > DECODE_WIDE_N_MAX_BLOCK_M:
            cfg["block_n"] = min(cfg["block_n"], 64)
        return _fit_shared(cfg, arch, head_dim)
    if variant.tiling == "fa2" and arch in PREFILL:
        for up_to, cfg in PREFILL[arch]:
            if head_dim <= up_to:
                return dict(cfg)
    return {}
