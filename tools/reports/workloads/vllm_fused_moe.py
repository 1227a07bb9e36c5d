"""vLLM's int4 (W4A16) fused-MoE kernel (`fused_moe_kernel_gptq_awq`), launched on the CPU under
TRITON_INTERPRET=1 the way vLLM launches it for Kimi K2.5 on an MI355X (gfx950), the model of
vllm-project/vllm#43153: 384 experts, top-8, hidden 7168, intermediate 2048 split over 8 GPUs (N=256 a
shard), int4 weights in groups of 32, bf16 activations; both GEMMs of the layer (gate/up, then down) at
each batch size given (default 1 64 256 1024). The launch code is vLLM 0.21.0's own file (the release of
the report; Apache-2.0), so each batch size takes its config from vLLM's tuned MI355X table; vLLM's runtime
is not imported: its device queries are answered for an MI355X and its CUDA routing op
(`moe_align_block_size`) is done in torch with the same outputs. The launches are vLLM's (argument types,
alignment, the values a specialisation reads, constexprs, options); only the count of routed slots the
kernels read at run time is set to 0 after the routing, so that the interpreter's programs return at once
instead of running a 7168-deep K loop per block for minutes. The reproduction of
reports/upstream-regressions.md:

    pip download --no-deps vllm==0.21.0 -d wheels && unzip -q wheels/vllm-*.whl 'vllm/model_executor/layers/fused_moe/*' -d vllm-wheel
    TRITON_INTERPRET=1 vgprscope capture -o vllm-moe.json -- python -m tools.reports.workloads.vllm_fused_moe vllm-wheel
    vgprscope diff --triton 3.4.0 --triton 3.6.0 --capture vllm-moe.json --arch gfx950
"""

import logging
import sys
import types

import torch
import triton
import triton.language as tl

ROOT = sys.argv[1]  # the vllm wheel, unpacked (vllm/model_executor/layers/fused_moe/ at least)
BATCHES = [int(a) for a in sys.argv[2:]] or [1, 64, 256, 1024]
EXPERTS, TOP_K, HIDDEN, SHARD_N, GROUP = 384, 8, 7168, 256, 32


def module(name: str, path: str | None = None, **attrs: object) -> types.ModuleType:
    mod = types.ModuleType(name)
    if path is not None:
        mod.__path__ = [path]
    for key, value in attrs.items():
        setattr(mod, key, value)
    sys.modules[name] = mod
    parent, _, leaf = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], leaf, mod)
    return mod


def align_op(topk_ids, num_experts, block_size, sorted_ids, expert_ids, num_tokens_post_pad, expert_map):
    """vLLM's CUDA op moe_align_block_size: each expert's token slots, padded to whole blocks, in order."""
    flat = topk_ids.flatten()
    sorted_ids.fill_(flat.numel())
    expert_ids.fill_(-1)
    start = 0
    for e in range(num_experts):
        slots = (flat == e).nonzero().flatten().to(torch.int32)
        if len(slots) == 0:
            continue
        sorted_ids[start:start + len(slots)] = slots
        padded = triton.cdiv(len(slots), block_size) * block_size
        expert_ids[start // block_size:(start + padded) // block_size] = e
        start += padded
    num_tokens_post_pad.fill_(start)


class _Logger(logging.Logger):
    def info_once(self, msg: str, *args: object, **kw: object) -> None:
        self.info(msg, *args)

    def warning_once(self, msg: str, *args: object, **kw: object) -> None:
        self.warning(msg, *args)


class _Platform:
    def is_rocm(self) -> bool:
        return True

    def is_cuda(self) -> bool:
        return False

    def get_device_name(self) -> str:
        return "AMD Instinct MI355X"


base = f"{ROOT}/vllm"
module("vllm", base)
module("vllm.envs", VLLM_BATCH_INVARIANT=False, VLLM_TUNED_CONFIG_FOLDER=None)
module("vllm._custom_ops", moe_align_block_size=align_op)
module("vllm.logger", init_logger=_Logger)
module("vllm.platforms", current_platform=_Platform())
module("vllm.triton_utils", triton=triton, tl=tl)
module("vllm.utils", f"{base}/utils")
module("vllm.utils.torch_utils", direct_register_custom_op=lambda **kw: None)
module("vllm.utils.math_utils", round_up=lambda x, y: (x + y - 1) // y * y)
module("vllm.model_executor", f"{base}/model_executor")
module("vllm.model_executor.layers", f"{base}/model_executor/layers")
module("vllm.model_executor.layers.fused_moe", f"{base}/model_executor/layers/fused_moe", get_config=lambda: None)
module("vllm.model_executor.layers.fused_moe.modular_kernel")
module("vllm.model_executor.layers.fused_moe.activation", MoEActivation=types.SimpleNamespace(SILU="silu"),
       apply_moe_activation=None)
module("vllm.model_executor.layers.fused_moe.config", FUSED_MOE_UNQUANTIZED_CONFIG=None,
       FusedMoEQuantConfig=type("FusedMoEQuantConfig", (), {}), _get_config_dtype_str=None)
module("vllm.model_executor.layers.fused_moe.utils", disable_inplace=None, moe_kernel_quantize_input=None)

import vllm.model_executor.layers.fused_moe.fused_moe as fm  # noqa: E402

torch.manual_seed(0)
# the weights of the experts as Kimi K2.5's compressed-tensors checkpoint holds them: int4 packed in bytes
# along K, one bf16 scale per group of 32, no zero points (their values are never read: see above)
w1 = torch.empty(EXPERTS, 2 * SHARD_N, HIDDEN // 2, dtype=torch.uint8)
w2 = torch.empty(EXPERTS, HIDDEN, SHARD_N // 2, dtype=torch.uint8)
w1_scale = torch.empty(EXPERTS, 2 * SHARD_N, HIDDEN // GROUP, dtype=torch.bfloat16)
w2_scale = torch.empty(EXPERTS, HIDDEN, SHARD_N // GROUP, dtype=torch.bfloat16)
block_shape = [0, GROUP]
for m in BATCHES:
    hidden = torch.randn(m, HIDDEN, dtype=torch.bfloat16)
    topk_weights, topk_ids = torch.rand(m, EXPERTS).topk(TOP_K, dim=1)
    topk_ids = topk_ids.to(torch.int32)
    config = fm.try_get_optimal_moe_config(w1.size(), w2.size(), TOP_K, "int4_w4a16", m, block_shape=block_shape)
    sorted_ids, expert_ids, post_padded = fm._prepare_expert_assignment(
        topk_ids, config, m, TOP_K, EXPERTS, None, use_int4_w4a16=True, block_shape=block_shape,
        ignore_invalid_experts=True)
    post_padded.zero_()  # every program returns at once (the launch is unchanged)
    n, k = w1.size(1), w2.size(1)
    cache13 = torch.empty(m * TOP_K * max(n, k), dtype=torch.bfloat16)
    cache1 = cache13[: m * TOP_K * n].view(m, TOP_K, n)
    cache3 = cache13[: m * TOP_K * k].view(m, TOP_K, k)
    cache2 = torch.empty(m * TOP_K, n // 2, dtype=torch.bfloat16)
    common = dict(sorted_token_ids=sorted_ids, expert_ids=expert_ids, num_tokens_post_padded=post_padded,
                  config=config, compute_type=tl.bfloat16, use_fp8_w8a8=False, use_int8_w8a8=False,
                  use_int8_w8a16=False, use_int4_w4a16=True, per_channel_quant=False, block_shape=block_shape)
    fm.dispatch_fused_moe_kernel(hidden, w1, cache1, None, w1_scale, None, topk_weights, mul_routed_weight=False,
                                 top_k=TOP_K, **common)
    cache2.zero_()  # vLLM's silu_and_mul of cache1 would go here
    fm.dispatch_fused_moe_kernel(cache2, w2, cache3, None, w2_scale, None, topk_weights, mul_routed_weight=True,
                                 top_k=1, **common)
    print("launched", m, config)
