"""remat-q: Q is not kept live; it is re-loaded a head-dim slice at a time inside the K/V loop (seed 002 C).

The baseline kernel with BLOCK_DK > 0: instead of a BLOCK_M x D query tile held across the whole loop,
each key block's scores are summed over head-dim slices, s = sum_j Q[:, j] K[:, j]^T for slices j of
BLOCK_DK columns, with both slices loaded right before their dot. Only one Q slice (BLOCK_M x BLOCK_DK) is
live at a time, and only within one score block; acc, m_i, l_i still live across the loop. The price:
Q is read once per key block instead of once (from L2/L1 in practice, as the same rows come back every
iteration), and the dot is split into D / BLOCK_DK smaller ones.

Knob ``block_dk`` (extra, default 32): a power of two, at least 16 (the matrix units' K); values above the
padded head dim are clamped to it (at head_dim 16 the default becomes 16), which makes the kernel the
baseline's dot with Q re-loaded every iteration.
"""

from . import baseline
from ._launch import check_common, knob, next_pow2_dim

VARIANT = {
    "name": "remat-q",
    "strategy": "Q not kept live: re-loaded BLOCK_DK head-dim columns at a time inside the K/V loop",
    "seed": "002 C",
    "trades": "Q tile registers vs Q re-read once per key block (L2 hits)",
    "kernels": ["attn_fwd"],
    "order": 2,
    "knobs": ["block_dk"],  # variant-specific knobs (`--knob NAME=VALUE`)
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2},
                 "block_dk": 32},
    # At head dims 129-256 (tiles of 256) 2 stages pipeline the Q slices too: 263168 B of shared memory on
    # sm_90 (232448 B allowed per block) and 147456 B on sm_86 / sm_89 / sm_120 (101376 B); 1 stage takes 33792 B
    # and 49152 B. (sm_100 lowers it to 165512 B in 2 stages: it keeps them.)
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120", "sm_90"], "head_dim": [129, 256],
                      "set": {"num_stages": 1}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "Nq*D*e*rho*Kb + Tq*2*(rho*Nk*D*e)",
        "written": "Nq*D*e",
        "flops": "2*(2*P*D)",
        "formula": "read = Nq*D*e * rho*Kb (Q re-read for every key block) + Tq * 2*rho*Nk*D*e; written = Nq*D*e; "
                   "FLOPs = 4*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop (explain): tile -> [rows, columns, bytes per
    # element], spread over the program's threads (vgprscope/flashattn/live.py); one BLOCK_M x BLOCK_DK slice of
    # Q at a time, and only within a score block
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "q": ["BLOCK_M", "min(block_dk, Dp)", "e"],
                   "s": ["BLOCK_M", "BLOCK_N", 4], "m_l": [2, "BLOCK_M", 4]},
    # one query tile per program: decode tiles from the shape (vgprscope/flashattn/tuning.py)
    "tiling": "query-tile",
}

MIN_BLOCK_DK = 16


def block_dk(cfg):
    """The slice width the kernel uses: the knob, clamped to the padded head dim."""
    return min(knob(cfg, "block_dk", 32), next_pow2_dim(cfg["head_dim"]))


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None."""
    dk = knob(cfg, "block_dk", 32)
    if not isinstance(dk, int) or dk < MIN_BLOCK_DK or dk & (dk - 1):
        return f"block_dk {dk!r} is not allowed; allowed: a power of two, {MIN_BLOCK_DK} or more"
    return check_common(cfg, knobs=("block_dk",))


def kernel_specs(cfg):
    return baseline.kernel_specs(cfg, BLOCK_DK=block_dk(cfg))


def launch(q, k, v, causal, sm_scale, cfg):
    return baseline.launch(q, k, v, causal, sm_scale, cfg, BLOCK_DK=block_dk(cfg))
