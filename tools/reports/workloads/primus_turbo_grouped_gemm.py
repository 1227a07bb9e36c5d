"""Primus-Turbo's variable-K grouped GEMM (the MoE expert-weight gradient dW2), launched on the CPU under
TRITON_INTERPRET=1 the way Primus-Turbo launches it on an MI300X (gfx942, 304 CUs): DeepSeek-V2-Lite's dW2
shapes of AMD-AGI/Primus-Turbo#471 (G=64 experts, OUT_M=1408, OUT_N=2048, bf16), with the tile its gfx942
branch picked before that fix (256x256x64, 8 warps, 2 stages). Primus-Turbo is not on PyPI: the kernel file
is the repository's own at e29a9b36^ (the commit before the fix; MIT license); its device queries are
answered here, its knob helper is its own file. The reproduction of reports/upstream-regressions.md:

    git clone -q https://github.com/AMD-AGI/Primus-Turbo primus-turbo && git -C primus-turbo checkout -q e29a9b36^
    TRITON_INTERPRET=1 vgprscope capture -o primus-vk.json -- python -m tools.reports.workloads.primus_turbo_grouped_gemm primus-turbo
    vgprscope diff --triton 3.7.1 --triton 3.8.0 --capture primus-vk.json --arch gfx942

The fix's own tile (BLOCK_K 32): the same commands on a checkout of e29a9b36.
"""

import sys
import types

import torch

ROOT = sys.argv[1]  # a Primus-Turbo checkout
TOKENS_PER_EXPERT = 64  # the K extent of each group; it does not change the launch's specialisation


def package(name: str, path: str) -> None:
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


for name in ("primus_turbo", "primus_turbo.pytorch", "primus_turbo.pytorch.core", "primus_turbo.triton",
             "primus_turbo.triton.utils", "primus_turbo.triton.grouped_gemm"):
    package(name, f"{ROOT}/{name.replace('.', '/')}")
utils = types.ModuleType("primus_turbo.pytorch.core.utils")
utils.is_gfx950 = lambda: False  # MI300X
utils.get_num_cus = lambda: 304
sys.modules[utils.__name__] = utils
origami = types.ModuleType("primus_turbo.triton.utils.origami")
origami.origama_select_params = lambda *a, **k: None  # read by the forward config only
sys.modules[origami.__name__] = origami

import primus_turbo.triton.grouped_gemm.grouped_gemm_kernel as gg  # noqa: E402

torch.manual_seed(0)
groups, out_m, out_n = 64, 1408, 2048
tokens = groups * TOKENS_PER_EXPERT
grad_out = torch.randn(tokens, out_m, dtype=torch.bfloat16)
a = torch.randn(tokens, out_n, dtype=torch.bfloat16)
group_offs = torch.arange(0, tokens + 1, TOKENS_PER_EXPERT, dtype=torch.int64)
dw = gg.grouped_gemm_variable_k_triton_kernel(grad_out, a, group_offs)
print("launched", bool(torch.isfinite(dw[0].float()).all()))
