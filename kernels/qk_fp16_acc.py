"""qk-fp16-acc: the baseline kernel with Q K^T accumulated in fp16 instead of fp32 (seed 003, reversed).

``tl.dot(q, k, out_dtype=tl.float16)``: the score tile comes out of the matrix unit in fp16, half the
registers of fp32 on NVIDIA (mma with f16 accumulators, 2 values per register); the scale, max, exp2 and
sums stay in fp32, so the accumulation is the only precision given up. AMD's MFMA has no fp16
accumulator: there the dot still accumulates in fp32 and is rounded to fp16 after, so registers may not
drop at all; the compiler's numbers say which.

fp16 inputs only: Triton allows ``out_dtype=float16`` only for fp16 operands, so bf16 is rejected by
``check_config`` rather than silently run in fp32 (which would be the baseline under another name).
Accuracy is worse than the baseline by design: its outputs are checked against a separate, wider
tolerance, declared below (``VARIANT['tolerance']``).
"""

from . import baseline
from ._launch import check_common

VARIANT = {
    "name": "qk-fp16-acc",
    "strategy": "baseline with Q K^T accumulated in fp16 (out_dtype): half the score registers on NVIDIA, less accuracy",
    "seed": "003",
    "trades": "score-tile registers vs accuracy of the logits (fp16 inputs only)",
    "kernels": ["attn_fwd"],
    "order": 6,
    "knobs": ["tma"],  # K/V through tensor descriptors (`--knob tma=1`; TMA on sm_90+)
    "defaults": {"block_m": 128, "block_n": 64, "num_warps": {"amd": 4, "nvidia": 8}, "num_stages": {"amd": 1, "nvidia": 2}},
    # sm_86 / sm_89 / sm_120 allow 101376 B of shared memory per block; at head dims 129-256 (tiles of 256) the
    # defaults take 147456 B (2 stages) or 114688 B (1 stage); 128 x 32 in 1 stage takes 90112 B
    "defaults_for": [{"arch": ["sm_86", "sm_89", "sm_120"], "head_dim": [129, 256],
                      "set": {"block_n": 32, "num_stages": 1}}],
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
    # element], spread over the program's threads (vgprscope/flashattn/live.py); the scores come out of the
    # dot in fp16
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "q": ["BLOCK_M", "Dp", "e"], "s": ["BLOCK_M", "BLOCK_N", 2],
                   "m_l": [2, "BLOCK_M", 4]},
    # one query tile per program in the FA2 loop: decode tiles, and sm_90's measured prefill tiles
    # (vgprscope/flashattn/tuning.py)
    "tiling": "fa2",
    # Q K^T accumulated in fp16 rounds every logit to an fp16 ulp: its own documented tolerance
    # (vgprscope/flashattn/tolerances.py); bf16 inputs are refused, so fp16 is the only entry
    "tolerance": {"fp16": {"atol": 5.8e-3, "rtol": "2*eps"}},
}


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None."""
    if cfg["dtype"] != "fp16":
        return (f"dtype {cfg['dtype']} cannot accumulate Q K^T in fp16: Triton allows out_dtype=float16 only "
                "for fp16 inputs; allowed: fp16")
    return check_common(cfg, knobs=("tma",))


def kernel_specs(cfg):
    return baseline.kernel_specs(cfg, QK_FP16=True)


def launch(q, k, v, causal, sm_scale, cfg):
    return baseline.launch(q, k, v, causal, sm_scale, cfg, QK_FP16=True)
