"""An MLP under ``torch.compile(mode="max-autotune-no-cudagraphs")``, forward and backward, bf16: Inductor
autotunes its Triton matmul templates (every candidate compiled) and fuses the activation. The ecosystem
report's second model (``python -m tools.reports ecosystem-run``).

    python -m tools.reports.workloads.mlp_autotune [--small]    # --small: tiny sizes (a CPU check)
"""

import sys

import torch
import torch.nn.functional as F

SMALL = "--small" in sys.argv
N, D, HIDDEN = (16, 64, 128) if SMALL else (4096, 1024, 4096)


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(D, HIDDEN)
        self.fc2 = torch.nn.Linear(HIDDEN, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


def main() -> None:
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = MLP().to(dev, torch.bfloat16)
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs") if dev == "cuda" else model
    x = torch.randn(N, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
    out = compiled(x)
    out.float().pow(2).mean().backward()
    ref = model(x.detach())
    err = ((out.detach().float() - ref.float()).norm() / ref.float().norm()).item()
    print(f"ok mlp on {dev}: forward + backward, relative error {err:.2e}")


if __name__ == "__main__":
    main()
