"""Does Triton's automatic warp specialisation compile an FA2 K/V loop for Hopper? (GPU-free probe)

    python scripts/probe_warp_specialize.py

Compiles a minimal FA2 loop (pointer loads, online softmax, two dots) with
`tl.range(..., warp_specialize=WS)` for sm_90 and gfx942, WS off and on, and prints what happened.
The bench report cites its result when it explains the gap to cuDNN.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def fa2_loop(Q, K, V, O, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr, WS: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    for blk in tl.range(0, N // BLOCK_N, warp_specialize=WS):
        offs_n = blk * BLOCK_N + tl.arange(0, BLOCK_N)
        k = tl.load(K + offs_n[None, :] * D + offs_d[:, None])
        qk = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + offs_n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


def main() -> None:
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "N": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "D": "constexpr", "WS": "constexpr"}
    print(f"Triton {triton.__version__}")
    for ws in (False, True):
        for target in (GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)):
            src = ASTSource(fn=fa2_loop, signature=sig,
                            constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "D": 128, "WS": ws})
            try:
                triton.compile(src, target=target, options={"num_warps": 4 if ws else 8, "num_stages": 3})
                verdict = "compiles"
            except Exception as exc:  # the probe reports, it does not stop
                verdict = "fails: " + (str(exc).strip().splitlines() or ["?"])[-1][:160]
            print(f"warp_specialize={ws!s:5} {target.backend}:{target.arch}: {verdict}")


if __name__ == "__main__":
    main()
