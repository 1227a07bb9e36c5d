"""aiter's unified attention in decode (one query token a sequence, the 2D kernel), launched on the CPU under
TRITON_INTERPRET=1 the way aiter launches it on an MI355X (gfx950): SEQS sequences of SEQLEN cached tokens
in a paged bf16 KV cache of BLOCK-token blocks, Q_PER_KV query heads per K/V head of HEAD_SIZE. The kernel
files are the repository's own at e4048607 (2026-08-22, before ROCm/aiter#5137 merged; MIT license);
aiter's package __init__ needs ROCm, so its Triton ops are imported from the tree's files with the device
queries answered for an MI355X. The reproduction of reports/upstream-regressions.md:

    git clone -q https://github.com/ROCm/aiter aiter-src && git -C aiter-src checkout -q e4048607
    TRITON_INTERPRET=1 vgprscope capture -o unified-decode.json -- python -m tools.reports.workloads.aiter_unified_decode aiter-src 128 8 64 512
    vgprscope diff --triton 3.7.1 --triton 3.8.0 --capture unified-decode.json --arch gfx950

The batch (SEQS, default 4) does not change the launch's specialisation; aiter's choice of kernel and tile
follows from the other sizes.
"""

import sys
import types

import torch

ROOT = sys.argv[1]  # an aiter checkout (or the amd-aiter wheel, unpacked)
HEAD_SIZE, Q_PER_KV, BLOCK, SEQLEN = (int(a) for a in sys.argv[2:6])
SEQS = int(sys.argv[6]) if len(sys.argv) > 6 else 4


def package(name: str, path: str) -> None:
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


for name in ("aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils", "aiter.ops.triton.utils._triton",
             "aiter.ops.triton._triton_kernels", "aiter.ops.triton._triton_kernels.attention",
             "aiter.ops.triton._triton_kernels.flash_attn_triton_amd", "aiter.ops.triton.attention"):
    package(name, f"{ROOT}/{name.replace('.', '/')}")
arch_info = types.ModuleType("aiter.ops.triton.utils._triton.arch_info")
arch_info.get_arch = lambda: "gfx950"
sys.modules[arch_info.__name__] = arch_info
device_info = types.ModuleType("aiter.ops.triton.utils.device_info")
device_info.get_num_sms = lambda: 256  # MI355X
device_info.get_num_xcds = lambda: 8
sys.modules[device_info.__name__] = device_info

import aiter.ops.triton._triton_kernels.flash_attn_triton_amd.utils as fa_utils  # noqa: E402

fa_utils.get_arch = lambda: fa_utils.GpuArch(name="gfx950", family="cdna")

from aiter.ops.triton.attention.unified_attention import unified_attention  # noqa: E402

torch.manual_seed(0)
kv_heads = 1
blocks = SEQS * (SEQLEN // BLOCK)
dt = torch.bfloat16
q = torch.randn(SEQS, Q_PER_KV * kv_heads, HEAD_SIZE, dtype=dt)
k = torch.randn(blocks, BLOCK, kv_heads, HEAD_SIZE, dtype=dt)
v = torch.randn(blocks, BLOCK, kv_heads, HEAD_SIZE, dtype=dt)
out = torch.empty_like(q)
unified_attention(q, k, v, out, cu_seqlens_q=torch.arange(SEQS + 1, dtype=torch.int32), max_seqlen_q=1,
                  seqused_k=torch.full((SEQS,), SEQLEN, dtype=torch.int32), max_seqlen_k=SEQLEN,
                  softmax_scale=HEAD_SIZE ** -0.5, causal=True, window_size=(-1, -1),
                  block_table=torch.arange(blocks, dtype=torch.int32).reshape(SEQS, -1), softcap=0.0,
                  q_descale=None, k_descale=None, v_descale=None)
print("launched", bool(torch.isfinite(out.float()).all()))
