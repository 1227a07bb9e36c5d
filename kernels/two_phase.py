"""two-phase: softmax statistics first, then P V with them, no online rescaling (seed 002 B).

Pass 1, ``attn_stats``: per query block, the loop over key blocks (full then masked) keeps only q, m_i and
l_i live: m = max_j s_j and l = sum_j exp2(s_j - m) (log2 domain) go to fp32 workspaces (B*H, Nq). It
reads Q and K only. Pass 2, ``attn_value``: with the final m and 1/l loaded once, each key block adds
(exp2(s - m) / l) V to acc: no running max, no alpha, no rescale of acc, and no division at the end. Both
passes compute Q K^T, so the score FLOPs are paid twice. Rows that see no key have l = 0: pass 2 uses
1/l = 0 for them and writes zeros.
"""

from ._launch import check_common
from ._multipass import launch_two_phase, two_phase_specs

VARIANT = {
    "name": "two-phase",
    "strategy": "pass 1 reads Q, K and writes row max and sum; pass 2 accumulates P V with the final statistics, no rescale",
    "seed": "002 B",
    "trades": "no online-softmax state in the P V loop vs Q K^T computed twice and K read twice",
    "kernels": ["attn_stats", "attn_value"],
    "order": 4,
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2}},
    # sm_86 / sm_89 / sm_120 allow 101376 B of shared memory per block; at head dims 129-256 (tiles of 256) the
    # defaults take 147456 B (2 stages) or 114688 B (1 stage); 128 x 32 in 1 stage takes 90112 B
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120"], "head_dim": [129, 256],
                      "set": {"block_n": 32, "num_stages": 1}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # read, written and flops are evaluated, in the order written; formula is what compare prints
    "traffic": {
        "read": "(Nq*D*e + Tq*(rho*Nk*D*e)) + (Nq*D*e + 2*Nq*4 + Tq*2*(rho*Nk*D*e))",
        "written": "2*Nq*4 + Nq*D*e",
        "flops": "3*(2*P*D)",
        "formula": "pass 1: read Nq*D*e + Tq*rho*Nk*D*e (Q, K), write 2*Nq*4 (m, l); pass 2: read Nq*D*e + 2*Nq*4 + "
                   "Tq * 2*rho*Nk*D*e, write Nq*D*e. FLOPs = 2*P*D (pass 1 Q K^T) + 4*P*D (pass 2) = 6*P*D",
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
    return check_common(cfg)


def kernel_specs(cfg):
    return two_phase_specs(cfg, split=False)


def launch(q, k, v, causal, sm_scale, cfg):
    return launch_two_phase(q, k, v, causal, sm_scale, cfg, split=False)
