"""aiter's paged-attention decode (the GQA kernel with tl.dot, `_paged_attn_decode_v1_w_dot_kernel`), launched
on the CPU under TRITON_INTERPRET=1 the way aiter launches it: llama3-8B's decode of ROCm/aiter#5137 (32
query heads over 8 K/V heads of 128, a paged bf16 KV cache of 16-token blocks, sequences of 1024 tokens, so
aiter's dispatch picks v1; 4 of them: the batch does not change the launch's specialisation). The kernel
files are the repository's own at e4048607 (2026-08-22, before #5137 changed the launch's waves_per_eu; MIT
license); aiter's package __init__ needs ROCm, so its Triton ops are imported from the tree's files. The
reproduction of reports/upstream-regressions.md:

    git clone -q https://github.com/ROCm/aiter aiter-src && git -C aiter-src checkout -q e4048607
    TRITON_INTERPRET=1 vgprscope capture -o pa-decode.json -- python -m tools.reports.workloads.aiter_pa_decode aiter-src
    vgprscope diff --triton 3.7.1 --triton 3.8.0 --capture pa-decode.json --arch gfx950
"""

import sys
import types

import torch
import triton.language as tl

ROOT = sys.argv[1]  # an aiter checkout (or the amd-aiter wheel, unpacked)


def package(name: str, path: str) -> None:
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


for name in ("aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils", "aiter.ops.triton.utils._triton",
             "aiter.ops.triton._triton_kernels", "aiter.ops.triton._triton_kernels.attention",
             "aiter.ops.triton.attention"):
    package(name, f"{ROOT}/{name.replace('.', '/')}")

from aiter.ops.triton.attention.pa_decode import paged_attention_decode  # noqa: E402

torch.manual_seed(0)
seqs, q_heads, kv_heads, head, block, seqlen = 4, 32, 8, 128, 16, 1024
blocks_per_seq = seqlen // block
dt = torch.bfloat16
q = torch.randn(seqs, q_heads, head, dtype=dt)
k_cache = torch.randn(seqs * blocks_per_seq, kv_heads, block, head, dtype=dt)
v_cache = torch.randn(seqs * blocks_per_seq, kv_heads, block, head, dtype=dt)
out = torch.empty_like(q)
block_tables = torch.arange(seqs * blocks_per_seq, dtype=torch.int32).reshape(seqs, blocks_per_seq)
seq_lens = torch.full((seqs,), seqlen, dtype=torch.int32)
one = torch.ones(1, dtype=torch.float32)
paged_attention_decode(out, q, k_cache, v_cache, seq_lens, block_tables, head ** -0.5, seqlen,
                       compute_type=tl.bfloat16, k_scale=one, v_scale=one)
print("launched", bool(torch.isfinite(out.float()).all()))
