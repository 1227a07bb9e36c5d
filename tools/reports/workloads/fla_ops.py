"""fla-core's chunked linear-attention ops, forward and backward, as a model trains with them (bf16, B2 T512
H4, head dims 64): chunk_gla and chunk_gated_delta_rule. The ecosystem report's fla-core
workload (``python -m tools.reports ecosystem-run``); each op prints ok or FAIL with its error.

    pip install --no-deps fla-core einops
    python -m tools.reports.workloads.fla_ops [--small]    # --small: tiny sizes (a CPU check, interpreter)
"""

import sys

import torch
import torch.nn.functional as F

from .each_op import run_each

SMALL = "--small" in sys.argv
B, T, H, K, V = (1, 64, 2, 64, 64) if SMALL else (2, 512, 4, 64, 64)


def main() -> None:
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from fla.ops.gla import chunk_gla

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dt = torch.bfloat16
    torch.manual_seed(0)

    def leaf(*shape: int, fn=None) -> torch.Tensor:
        t = torch.randn(*shape, dtype=dt, device=dev)
        return (fn(t) if fn else t).detach().requires_grad_(True)

    q, k, v = leaf(B, T, H, K), leaf(B, T, H, K), leaf(B, T, H, V)
    g = leaf(B, T, H, K, fn=F.logsigmoid)
    gs = leaf(B, T, H, fn=F.logsigmoid)
    beta = leaf(B, T, H, fn=torch.sigmoid)
    kn = leaf(B, T, H, K, fn=lambda t: F.normalize(t.float(), dim=-1).to(dt))
    def backward(out: torch.Tensor | tuple[torch.Tensor, ...]) -> None:
        (out[0] if isinstance(out, tuple) else out).float().sum().backward()

    ops = {"chunk_gla": lambda: backward(chunk_gla(q, k, v, g)),
           "chunk_gated_delta_rule": lambda: backward(chunk_gated_delta_rule(q, kn, v, gs, beta))}
    failed = run_each(ops, torch.cuda.synchronize if dev == "cuda" else None)
    sys.exit(1 if failed == len(ops) else 0)


if __name__ == "__main__":
    main()
