"""A small script of liger-kernel's public ops (forward and backward), the command the capture test and
the third-party report run: `vgprscope capture -- python scripts/third_party_ops.py`.

It runs wherever liger-kernel runs: on a GPU, or on the CPU under TRITON_INTERPRET=1 (the tensors then
live on the CPU). Shapes are small so that the interpreter finishes in seconds; the kernels' block sizes
follow from the hidden sizes as liger picks them.
"""

import torch

from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
from liger_kernel.ops.dyt import LigerDyTFunction
from liger_kernel.ops.geglu import LigerGELUMulFunction
from liger_kernel.ops.layer_norm import LigerLayerNormFunction
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
from liger_kernel.ops.softmax import LigerSoftmaxFunction
from liger_kernel.ops.swiglu import LigerSiLUMulFunction


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    rows, hidden = 8, 256
    x = torch.randn(rows, hidden, device=device, requires_grad=True)
    w = torch.ones(hidden, device=device, requires_grad=True)
    b = torch.zeros(hidden, device=device, requires_grad=True)
    a, g = (torch.randn(rows, hidden, device=device, requires_grad=True) for _ in range(2))

    outs = [
        LigerRMSNormFunction.apply(x, w, 1e-6),
        LigerLayerNormFunction.apply(x, w, b, 1e-6),
        LigerSiLUMulFunction.apply(a, g),
        LigerGELUMulFunction.apply(a, g),
        LigerSoftmaxFunction.apply(x),
        LigerCrossEntropyFunction.apply(torch.randn(rows, 512, device=device, requires_grad=True),
                                        torch.randint(0, 512, (rows,), device=device), None)[0],
    ]
    sum(o.float().sum() for o in outs).backward()
    # DyT is @triton.autotune'd (18 configs keyed on N): every config is captured. Forward only: liger's
    # DyT backward asks the device for its SM count, which a CPU has not.
    with torch.no_grad():
        LigerDyTFunction.apply(x, torch.tensor(0.5, device=device), w, b)
    print(f"liger ops ran on {device}: {len(outs)} forward + backward, DyT forward")


if __name__ == "__main__":
    main()
