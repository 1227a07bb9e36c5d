"""small-tiles: the baseline kernel at BLOCK_M = 64 or smaller (seed 002 D).

The same FA2 kernel as ``baseline`` (imported, not copied); only the query tile shrinks. Every tensor that
lives across the K/V loop (acc, q, the score tile) is BLOCK_M rows tall, so halving BLOCK_M halves its
registers per thread at the same warp count; the price is twice the query blocks, each reading all of K/V
again (K/V traffic ~ Nq / BLOCK_M).
"""

from ._launch import check_common
from .baseline import kernel_specs, launch  # noqa: F401  (the protocol: this variant runs baseline's kernel)

VARIANT = {
    "name": "small-tiles",
    "strategy": "baseline's kernel at BLOCK_M 64 (or smaller) so acc, q and the scores fit wave64",
    "seed": "002 D",
    "trades": "K/V read Nq/BLOCK_M times: twice baseline's K/V bytes at BLOCK_M 64",
    "kernels": ["attn_fwd"],
    "order": 1,
    # a larger default (a shape's or an arch's tiles) is capped; a larger block_m asked for is refused on its
    # row (check_config): it is not a small tile
    "caps": {"block_m": 64},
    "knobs": ["tma"],  # K/V through tensor descriptors (`--knob tma=1`; TMA on sm_90+)
    "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": {"amd": 1, "nvidia": 2}},
    # sm_86 / sm_89 / sm_120 allow 101376 B of shared memory per block; at head dims 129-256 2 stages take 106496 B,
    # 1 stage 73728 B
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120"], "head_dim": [129, 256],
                      "set": {"num_stages": 1}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "Nq*D*e + Tq*2*(rho*Nk*D*e)",
        "written": "Nq*D*e",
        "flops": "2*(2*P*D)",
        "formula": "read = Nq*D*e + Tq * 2*rho*Nk*D*e (Q once, K and V once per query block); written = Nq*D*e; "
                   "FLOPs = 4*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop (explain): tile -> [rows, columns, bytes per
    # element], spread over the program's threads (vgprscope/flashattn/live.py)
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "q": ["BLOCK_M", "Dp", "e"], "s": ["BLOCK_M", "BLOCK_N", 4],
                   "m_l": [2, "BLOCK_M", 4]},
    # one query tile per program: decode tiles from the shape (vgprscope/flashattn/tuning.py)
    "tiling": "query-tile",
}

MAX_BLOCK_M = 64


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None: it is baseline at BLOCK_M <= 64."""
    if cfg["block_m"] > MAX_BLOCK_M:
        return f"block_m {cfg['block_m']} is not a small tile; allowed: 16, 32 or 64 (larger is baseline)"
    return check_common(cfg, knobs=("tma",))
