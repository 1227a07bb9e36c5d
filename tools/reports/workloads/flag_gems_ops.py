"""FlagGems (5.0.2) as its users run it: PyTorch's own ops inside ``flag_gems.use_gems()``, which routes them
to FlagGems' Triton kernels, each autotuned by FlagGems' own ``LibTuner``; forward and backward, bf16, a
training step's shapes: mm, addmm, bmm (its Hopper matmul takes host-side TMA descriptors), softmax,
log_softmax with nll_loss (cross entropy), layer_norm, rms_norm, sum / mean / amax, cumsum, and the
pointwise ops its ``pointwise_dynamic`` generates (gelu, silu, mul, add, exp). Each op prints ok or FAIL
with its error. The ecosystem report's FlagGems workload (``python -m tools.reports ecosystem-run``);
FlagGems needs a GPU to import.

    pip install --no-deps flag-gems==5.0.2 sqlalchemy
    python -m tools.reports.workloads.flag_gems_ops
"""

import sys

import torch
import torch.nn.functional as F

from .each_op import run_each

ROWS, HIDDEN, VOCAB = 4096, 4096, 32000


def main() -> None:
    import flag_gems

    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(0)

    def leaf(*shape: int, dtype: torch.dtype = dt) -> torch.Tensor:
        return torch.randn(*shape, dtype=dtype, device=dev).requires_grad_(True)

    def backward(out: torch.Tensor) -> None:
        out.backward(torch.randn_like(out))

    a, b = leaf(ROWS, HIDDEN), leaf(HIDDEN, HIDDEN)
    bias = leaf(HIDDEN)
    x = leaf(ROWS, HIDDEN)
    w, wb = leaf(HIDDEN), leaf(HIDDEN)
    p, q = leaf(16, 1024, 1024), leaf(16, 1024, 1024)
    logits = leaf(ROWS, VOCAB)
    target = torch.randint(0, VOCAB, (ROWS,), device=dev)
    ops = {
        "mm": lambda: backward(torch.mm(a, b)),
        "addmm": lambda: backward(torch.addmm(bias, a, b)),
        "bmm": lambda: backward(torch.bmm(p, q)),
        "softmax": lambda: backward(torch.softmax(x, dim=-1)),
        "cross_entropy": lambda: F.cross_entropy(logits, target).backward(),
        "layer_norm": lambda: backward(F.layer_norm(x, (HIDDEN,), w, wb, 1e-5)),
        "rms_norm": lambda: backward(F.rms_norm(x, (HIDDEN,), w, 1e-6)),
        "sum_mean_amax": lambda: (x.sum(dim=-1).sum() + x.mean(dim=-1).sum() + x.amax(dim=-1).sum()).backward(),
        "cumsum": lambda: backward(torch.cumsum(x, dim=-1)),
        "gelu": lambda: backward(F.gelu(x)),
        "silu_mul": lambda: backward(F.silu(x) * a),
        "add_exp": lambda: backward(torch.exp(x * 0.01) + a),
    }
    with flag_gems.use_gems():
        failed = run_each(ops, torch.cuda.synchronize)
    sys.exit(1 if failed == len(ops) else 0)


if __name__ == "__main__":
    main()
