"""sglang's extend attention (MLA absorbed shape of Kimi-K3: 12 query heads over 1 K/V head, Lq = Lk = 576,
Lv = 512), launched on the CPU under TRITON_INTERPRET=1 as sglang launches it on an MI355X (gfx950); with
--before-fix, the tile sglang used before its Triton 3.7 fix (sgl-project/sglang#34741: BLOCK_M 64, BLOCK_N
64, 4 warps). sglang's runtime is not imported: its device queries and settings are answered here; the
kernel file is the wheel's own. The reproduction of reports/triton-upgrade.md:

    pip download --no-deps sglang==0.5.23 -d wheels && unzip -q wheels/sglang-*.whl 'sglang/*' -d sglang-wheel
    TRITON_INTERPRET=1 vgprscope capture -o extend-before.json -- python -m tools.reports.workloads.sglang_extend_attention sglang-wheel --before-fix
    vgprscope analyze --capture extend-before.json --arch gfx950 --triton 3.6.0..3.9.0 --wide
"""

import sys
import types

import torch

ROOT = sys.argv[1]  # the sglang wheel, unpacked
BEFORE_FIX = sys.argv[2:] == ["--before-fix"]


def package(name: str, path: str) -> None:
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


for name in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.attention", "sglang.srt"):
    package(name, f"{ROOT}/{name.replace('.', '/')}")


class _Setting:
    def get(self):
        return False


class _Envs:
    def __getattr__(self, name):
        return _Setting()


environ = types.ModuleType("sglang.srt.environ")
environ.envs = _Envs()
sys.modules[environ.__name__] = environ
utils = types.ModuleType("sglang.srt.utils")
utils.is_cuda = lambda: False
utils.is_hip = lambda: True
utils.is_gfx95_supported = lambda: True  # MI355X
utils.is_gfx1250_supported = lambda: False
utils.get_device_core_count = lambda *a, **k: 256
sys.modules[utils.__name__] = utils

import sglang.kernels.ops.attention.extend_attention as ext  # noqa: E402

if BEFORE_FIX:
    ext._is_triton_ge_37 = False  # the (64, 64, 4) tile sglang picked on gfx950 before its Triton 3.7 fix

torch.manual_seed(0)
heads, kv_heads, lq, lv, n_ext, n_pre = 12, 1, 576, 512, 64, 64
dt = torch.bfloat16
q = torch.randn(n_ext, heads, lq, dtype=dt)
k = torch.randn(n_ext, kv_heads, lq, dtype=dt)
v = torch.randn(n_ext, kv_heads, lv, dtype=dt)
o = torch.empty(n_ext, heads, lv, dtype=dt)
k_buf = torch.randn(n_pre, kv_heads, lq, dtype=dt)
v_buf = torch.randn(n_pre, kv_heads, lv, dtype=dt)
ext.extend_attention_fwd(q, k, v, o, k_buf, v_buf, qo_indptr=torch.tensor([0, n_ext], dtype=torch.int32),
                         kv_indptr=torch.tensor([0, n_pre], dtype=torch.int32),
                         kv_indices=torch.arange(n_pre, dtype=torch.int64), custom_mask=None, is_causal=True,
                         mask_indptr=None, max_len_extend=n_ext, k_scale=1.0, v_scale=1.0)
print("launched", bool(torch.isfinite(o.float()).all()))
