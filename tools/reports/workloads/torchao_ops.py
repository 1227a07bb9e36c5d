"""torchao's (0.18.0) Triton kernels in its training recipes, as their users run them, forward and backward,
bf16, a transformer MLP's shapes (4096 tokens, 4096 -> 4096 -> 4096):

- fp8 blockwise training (``torchao.prototype.blockwise_fp8_training``): ``Float8BlockwiseLinear`` with
  ``use_triton=True``, whose activation and weight quantisation and both fp8 GEMMs are torchao's autotuned
  Triton kernels (1x128 and 128x128 scaling blocks); Hopper only;
- int8 mixed-precision training (``torchao.prototype.quantized_training``): ``quantize_`` with
  ``Int8MixedPrecisionTrainingConfig``, whose row-wise scaled int8 matmul is torchao's autotuned Triton kernel.

Each recipe prints ok or FAIL with its error. The ecosystem report's torchao workload
(``python -m tools.reports ecosystem-run``).

    pip install --no-deps torchao==0.18.0
    python -m tools.reports.workloads.torchao_ops
"""

import sys

import torch

from .each_op import run_each

TOKENS, DIM = 4096, 4096


def fp8_blockwise(dev: str) -> None:
    from torchao.prototype.blockwise_fp8_training.linear import Float8BlockwiseLinear

    # ``dtype`` is the layer's output dtype; its weights are made bf16 as a bf16 model's are
    layers = torch.nn.Sequential(*(Float8BlockwiseLinear(DIM, DIM, bias=False, use_triton=True, device=dev)
                                   for _ in range(2))).to(torch.bfloat16)
    x = torch.randn(TOKENS, DIM, device=dev, dtype=torch.bfloat16, requires_grad=True)
    layers(x).float().pow(2).mean().backward()


def int8_mixed_precision(dev: str) -> None:
    from torchao import quantize_
    from torchao.prototype.quantized_training import Int8MixedPrecisionTrainingConfig

    model = torch.nn.Sequential(torch.nn.Linear(DIM, DIM, bias=False), torch.nn.GELU(),
                                torch.nn.Linear(DIM, DIM, bias=False)).to(dev, torch.bfloat16)
    quantize_(model, Int8MixedPrecisionTrainingConfig())
    x = torch.randn(TOKENS, DIM, device=dev, dtype=torch.bfloat16, requires_grad=True)
    model(x).float().pow(2).mean().backward()


def main() -> None:
    import torchao

    dev = "cuda"
    torch.manual_seed(0)
    recipes = {"fp8 blockwise training (Float8BlockwiseLinear, use_triton)": fp8_blockwise,
               "int8 mixed-precision training (quantize_)": int8_mixed_precision}
    failed = run_each({name: (lambda recipe=recipe: recipe(dev)) for name, recipe in recipes.items()},
                      torch.cuda.synchronize)
    print(f"torchao {torchao.__version__}: {len(recipes) - failed} of {len(recipes)} recipes ran")
    sys.exit(1 if failed == len(recipes) else 0)


if __name__ == "__main__":
    main()
