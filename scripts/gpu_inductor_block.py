"""A torch.compile'd Llama-style block (RMSNorm, rotary embedding, SDPA attention, SwiGLU MLP), forward, bf16,
on a CUDA GPU: Inductor generates and compiles its Triton kernels into TORCHINDUCTOR_CACHE_DIR and
TRITON_CACHE_DIR. The caches it writes are what `vgprscope scan` reads (written here under the GPU machine's
Triton, read elsewhere under another). MODE=max-autotune for Inductor's autotuned matmul templates."""
import os

import torch
import torch.nn.functional as F

B, T, D, H = 2, 512, 1024, 8
dev, dt = "cuda", torch.bfloat16


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = torch.nn.RMSNorm(D)
        self.norm2 = torch.nn.RMSNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D, bias=False)
        self.out = torch.nn.Linear(D, D, bias=False)
        self.gate = torch.nn.Linear(D, 4 * D, bias=False)
        self.up = torch.nn.Linear(D, 4 * D, bias=False)
        self.down = torch.nn.Linear(4 * D, D, bias=False)

    def rotary(self, x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        freqs = 1.0 / (10000 ** (torch.arange(half, device=x.device, dtype=torch.float32) / half))
        angles = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32)[:, None] * freqs
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).view(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(self.rotary(q), self.rotary(k), v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(B, T, D))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


torch.manual_seed(0)
model = Block().to(dev, dt)
compiled = torch.compile(model, mode=os.environ.get("MODE") or None)
x = torch.randn(B, T, D, device=dev, dtype=dt)
with torch.no_grad():
    ref, out = model(x), compiled(x)
torch.cuda.synchronize()
err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
print(f"ok block relative error {err:.2e}")
