"""split-k-two-phase: two-phase softmax with both passes split over the K/V range (seed 002 A + B).

Design: S splits of each query block's key blocks, as in split-k (S from the shape, knob ``num_splits``).
  1. ``attn_stats`` (grid query blocks x B*H x S): each split's (m_s, l_s) over its keys, to fp32 (B*H, S, Nq).
  2. ``attn_value`` (same grid): each program first combines all S splits' statistics of its rows,
     M = max_s m_s, L = sum_s exp2(m_s - M) l_s (S loads per row, cheap next to the key loop), then adds
     exp2(s - M) / L * V over its own keys: a partial sum of already normalised probabilities, to fp32
     (B*H, S, Nq, D).
  3. ``attn_merge`` (not WEIGHTED): O = sum_s partial_s; no weights are needed, the partials are final.
Every pass is split, so short rows with long K/V still fill the GPU in both passes; the value pass
holds neither m_i nor l_i as running state nor rescales acc. Empty splits write m = -inf, l = 0 and a zero
partial; a row no split saw gets L = 0, 1/L is taken as 0, and its output is zero.
"""

from ._launch import check_common, check_num_splits
from ._multipass import launch_two_phase, two_phase_specs

VARIANT = {
    "name": "split-k-two-phase",
    "strategy": "split stats pass, split value pass of normalised partials (stats combined in-kernel), sum merge",
    "seed": "002 A+B",
    "trades": "both strategies' register cuts and parallelism vs Q K^T twice, K read twice, fp32 partials",
    "kernels": ["attn_stats", "attn_value", "attn_merge"],
    "order": 5,
    "knobs": ["num_splits"],  # variant-specific knobs (`--knob NAME=VALUE`)
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2}},
    # sm_86 / sm_89 / sm_120 allow 101376 B of shared memory per block; at head dims 129-256 (tiles of 256) the
    # defaults take 147456 B (2 stages) or 114688 B (1 stage); 128 x 32 in 1 stage takes 90112 B
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120"], "head_dim": [129, 256],
                      "set": {"block_n": 32, "num_stages": 1}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "(S*(Nq*D*e) + Tq*(rho*Nk*D*e)) + (S*(Nq*D*e) + S*(S*2*Nq*4) + Tq*2*(rho*Nk*D*e)) + S*Nq*D*4",
        "written": "S*2*Nq*4 + S*Nq*D*4 + Nq*D*e",
        "flops": "3*(2*P*D)",
        "formula": "pass 1: read S*Nq*D*e + Tq*rho*Nk*D*e, write S*2*Nq*4; pass 2: read S*Nq*D*e + S*S*2*Nq*4 "
                   "(every split combines all splits' m, l) + Tq * 2*rho*Nk*D*e, write S*Nq*D*4; merge: read "
                   "S*Nq*D*4, write Nq*D*e. FLOPs = 6*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop (explain): tile -> [rows, columns, bytes per
    # element], spread over the program's threads (vgprscope/flashattn/live.py)
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "q": ["BLOCK_M", "Dp", "e"], "s": ["BLOCK_M", "BLOCK_N", 4],
                   "m_l": [2, "BLOCK_M", 4]},
    # one query tile per program: decode tiles from the shape (vgprscope/flashattn/tuning.py)
    "tiling": "query-tile",
}


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None."""
    return check_common(cfg, knobs=("num_splits",)) or check_num_splits(cfg)


def kernel_specs(cfg):
    return two_phase_specs(cfg, split=True)


def launch(q, k, v, causal, sm_scale, cfg):
    return launch_two_phase(q, k, v, causal, sm_scale, cfg, split=True)
