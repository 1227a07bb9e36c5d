"""aiter's unified attention (adapted from vLLM's), launched on the CPU under TRITON_INTERPRET=1 the way a
serving engine launches it: a prefill batch of 256 tokens on a paged KV cache (block 64), one K/V head for
Q_HEADS query heads of HEAD_SIZE. aiter's package __init__ needs ROCm, so its Triton ops are imported from
the wheel's files with the device queries answered for an MI355X. The reproduction of ROCm/aiter#5409's
shape in reports/triton-upgrade.md:

    pip download --no-deps amd-aiter==0.1.7.post2.dev18 -d wheels && unzip -q wheels/amd_aiter-*.whl 'aiter/*' -d aiter-wheel
    TRITON_INTERPRET=1 vgprscope capture -o unified-d256.json -- python -m tools.reports.workloads.aiter_unified_attention aiter-wheel 256 16
    vgprscope analyze --capture unified-d256.json --arch gfx950 --arch gfx942 --triton 3.6.0..3.9.0 --wide
"""

import sys
import types

import torch

ROOT = sys.argv[1]  # the amd-aiter wheel, unpacked
HEAD_SIZE, Q_HEADS = int(sys.argv[2]), int(sys.argv[3])


def package(name: str, path: str) -> None:
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


for name in ("aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils", "aiter.ops.triton.utils._triton",
             "aiter.ops.triton._triton_kernels"):
    package(name, f"{ROOT}/{name.replace('.', '/')}")
arch_info = types.ModuleType("aiter.ops.triton.utils._triton.arch_info")
arch_info.get_arch = lambda: "gfx950"
sys.modules[arch_info.__name__] = arch_info
device_info = types.ModuleType("aiter.ops.triton.utils.device_info")
device_info.get_num_sms = lambda: 256  # MI355X
device_info.get_num_xcds = lambda: 8
sys.modules[device_info.__name__] = device_info

from aiter.ops.triton.unified_attention import unified_attention  # noqa: E402

torch.manual_seed(0)
head, q_heads, kv_heads, block, seqlen = HEAD_SIZE, Q_HEADS, 1, 64, 256
blocks = seqlen // block
q = torch.randn(seqlen, q_heads, head, dtype=torch.bfloat16)
k = torch.randn(blocks, block, kv_heads, head, dtype=torch.bfloat16)
v = torch.randn(blocks, block, kv_heads, head, dtype=torch.bfloat16)
out = torch.empty_like(q)
unified_attention(q, k, v, out, cu_seqlens_q=torch.tensor([0, seqlen], dtype=torch.int32), max_seqlen_q=seqlen,
                  seqused_k=torch.tensor([seqlen], dtype=torch.int32), max_seqlen_k=seqlen,
                  softmax_scale=head ** -0.5, causal=True, window_size=(-1, -1),
                  block_table=torch.arange(blocks, dtype=torch.int32)[None, :], softcap=0.0, q_descale=None,
                  k_descale=None, v_descale=None)
print("launched", out.float().abs().mean().item() > 0)
