"""A Llama-style decoder under ``torch.compile`` (Inductor's default mode), forward and backward, bf16: two
layers of RMSNorm, rotary embedding, grouped-query SDPA attention (8 query heads over 2 K/V heads) and a
SwiGLU MLP, then a loss. The ecosystem report's first model (``python -m tools.reports ecosystem-run``):
Inductor generates and compiles its Triton kernels into TORCHINDUCTOR_CACHE_DIR, as on a user's machine.

    python -m tools.reports.workloads.llama_decoder [--small]    # --small: tiny sizes (a CPU check)
"""

import sys

import torch
import torch.nn.functional as F

SMALL = "--small" in sys.argv
B, T, D, H, KV, LAYERS = (1, 16, 64, 4, 2, 2) if SMALL else (2, 512, 1024, 8, 2, 2)
HD = D // H


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1, self.norm2 = torch.nn.RMSNorm(D), torch.nn.RMSNorm(D)
        self.q = torch.nn.Linear(D, H * HD, bias=False)
        self.kv = torch.nn.Linear(D, 2 * KV * HD, bias=False)
        self.o = torch.nn.Linear(H * HD, D, bias=False)
        self.gate = torch.nn.Linear(D, 4 * D, bias=False)
        self.up = torch.nn.Linear(D, 4 * D, bias=False)
        self.down = torch.nn.Linear(4 * D, D, bias=False)

    @staticmethod
    def rotary(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        freqs = 1.0 / (10000 ** (torch.arange(half, device=x.device, dtype=torch.float32) / half))
        angles = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32)[:, None] * freqs
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        q = self.q(h).view(B, T, H, HD).transpose(1, 2)
        k, v = self.kv(h).view(B, T, 2, KV, HD).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(self.rotary(q), self.rotary(k), v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = torch.nn.RMSNorm(D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def main() -> None:
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = Decoder().to(dev, torch.bfloat16)
    compiled = torch.compile(model) if dev == "cuda" else model
    x = torch.randn(B, T, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
    out = compiled(x)
    out.float().pow(2).mean().backward()
    ref = model(x.detach())
    err = ((out.detach().float() - ref.float()).norm() / ref.float().norm()).item()
    grads = sum(p.grad is not None for p in model.parameters())
    print(f"ok llama decoder on {dev}: forward + backward, relative error {err:.2e}, {grads} parameter gradients")


if __name__ == "__main__":
    main()
