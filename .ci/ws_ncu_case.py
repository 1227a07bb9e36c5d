"""On the GPU, under ncu: one case of issue 28 run by ws-regalloc at its defaults or by SDPA's cuDNN backend,
a few times (ncu skips the warm-ups by --launch-skip).

    python3 .ci/ws_ncu_case.py ws-regalloc|sdpa-cudnn [causal]
"""

from __future__ import annotations

import sys


def main(who: str, causal: bool) -> None:
    import torch

    import vgprscope

    q, k, v = (torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.float16) for _ in range(3))
    for _ in range(4):
        if who == "ws-regalloc":
            vgprscope.attention(q, k, v, causal=causal, variant="ws-regalloc")
        else:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1], "causal" in sys.argv[2:])
