"""A small script of liger-kernel's public ops (forward and backward), the command the capture test and
the third-party report run: `vgprscope capture -- python -m tools.reports.workloads.liger_ops`.

It runs wherever liger-kernel runs: on a GPU, or on the CPU under TRITON_INTERPRET=1 (the tensors then
live on the CPU) inside `vgprscope capture`, whose hook gives Triton 3.9's interpreter the float arguments
and libdevice functions liger's kernels need. `--stock-interpreter` runs only the ops the interpreter runs
on its own (the capture-overhead benchmark's command). Shapes are small so that the interpreter finishes in seconds; the kernels' block sizes
follow from the hidden sizes as liger picks them. `--real` on a GPU: a training step's shapes (4096 rows,
hidden 4096, vocabulary 32000, bf16) and DyT's backward too (the ecosystem report's liger workload).
"""

import sys

import torch
from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
from liger_kernel.ops.dyt import LigerDyTFunction
from liger_kernel.ops.geglu import LigerGELUMulFunction
from liger_kernel.ops.layer_norm import LigerLayerNormFunction
from liger_kernel.ops.rms_norm import LigerRMSNormFunction
from liger_kernel.ops.softmax import LigerSoftmaxFunction
from liger_kernel.ops.swiglu import LigerSiLUMulFunction


def stock_interpreter_ops(device: str, rows: int, hidden: int) -> None:
    """The ops Triton's interpreter runs without capture's fixes (no float kernel arguments, no libdevice,
    no autotuning): the command the capture-overhead benchmark times alone and under capture."""
    from liger_kernel.ops.rope import LigerRopeFunction

    x = torch.randn(rows, hidden, device=device, requires_grad=True)
    q, k = (torch.randn(1, 4, 16, 64, device=device, requires_grad=True) for _ in range(2))
    cos, sin = torch.randn(1, 16, 64, device=device), torch.randn(1, 16, 64, device=device)
    outs = [LigerSoftmaxFunction.apply(x),
            LigerCrossEntropyFunction.apply(torch.randn(rows, 512, device=device, requires_grad=True),
                                            torch.randint(0, 512, (rows,), device=device), None)[0],
            *LigerRopeFunction.apply(q, k, cos, sin)]
    sum(o.float().sum() for o in outs).backward()
    print(f"liger softmax, cross-entropy, rope ran on {device}: forward + backward")


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if "--stock-interpreter" in sys.argv:
        stock_interpreter_ops(device, 8, 256)
        return
    torch.manual_seed(0)
    # a Llama-sized hidden dimension in fp16 (not bf16: the interpreter computes on bf16 bit patterns), few
    # rows: the interpreter runs every program on the CPU; --real (on a GPU): a training step's shapes, bf16
    real = "--real" in sys.argv and device == "cuda"
    rows, hidden, vocab, dt = (4096, 4096, 32000, torch.bfloat16) if real else (4, 4096, 4096, torch.float16)
    x = torch.randn(rows, hidden, device=device, dtype=dt, requires_grad=True)
    w = torch.ones(hidden, device=device, dtype=dt, requires_grad=True)
    b = torch.zeros(hidden, device=device, dtype=dt, requires_grad=True)
    a, g = (torch.randn(rows, hidden, device=device, dtype=dt, requires_grad=True) for _ in range(2))

    outs = [
        LigerRMSNormFunction.apply(x, w, 1e-6),
        LigerLayerNormFunction.apply(x, w, b, 1e-6),
        LigerSiLUMulFunction.apply(a, g),
        LigerGELUMulFunction.apply(a, g),
        LigerSoftmaxFunction.apply(x),
        LigerCrossEntropyFunction.apply(torch.randn(rows, vocab, device=device, dtype=dt, requires_grad=True),
                                        torch.randint(0, vocab, (rows,), device=device), None)[0],
    ]
    sum(o.float().sum() for o in outs).backward()
    # DyT is @triton.autotune'd (18 configs keyed on N): every config is captured. Forward only on a CPU:
    # liger's DyT backward asks the device for its SM count, which a CPU has not.
    if real:
        alpha = torch.tensor(0.5, device=device, requires_grad=True)
        LigerDyTFunction.apply(x, alpha, w, b).float().sum().backward()
    else:
        with torch.no_grad():
            LigerDyTFunction.apply(x, torch.tensor(0.5, device=device), w, b)
    print(f"liger ops ran on {device}: {len(outs)} forward + backward, DyT forward{' + backward' if real else ''}")


if __name__ == "__main__":
    main()
