"""GemLite (0.6.0.post2) as its users run it: a quantized linear layer's forward (gemlite is an inference
library, there is no backward) at the batch sizes that pick each of its kernels (GEMV, GEMV_REVSPLITK,
GEMM_SPLITK, GEMM), autotuned by gemlite's own settings: 4-bit weights in groups of 128 with fp16 activations
(``GemLiteLinear`` packed in HQQ's format, the README's usage), and 8-bit weights with fp16 activations
(``helper.A16W8_INT8().from_linear``). Each layer and batch size prints ok or FAIL with its error. The
ecosystem report's gemlite workload (``python -m tools.reports ecosystem-run``).

    pip install --no-deps gemlite==0.6.0.post2
    python -m tools.reports.workloads.gemlite_ops
"""

import sys

import torch

IN, OUT, GROUP = 4096, 4096, 128
BATCHES = (1, 16, 256, 2048)


def main() -> None:
    import gemlite
    from gemlite import DType, GemLiteLinear
    from gemlite.helper import A16W8_INT8

    dev, dt = "cuda", torch.float16
    torch.manual_seed(0)
    w = torch.randn(OUT, IN, dtype=dt, device=dev) / IN ** 0.5
    # 4-bit in HQQ's format: (W_q - zeros) * scales ~= W, one scale and zero per group of 128
    groups = w.view(OUT, IN // GROUP, GROUP).float()
    lo, hi = groups.amin(-1, keepdim=True), groups.amax(-1, keepdim=True)
    scales = ((hi - lo) / 15).clamp(min=1e-8)
    zeros = -lo / scales
    w_q = ((groups / scales) + zeros).round().clamp(0, 15).to(torch.uint8).view(OUT, IN)
    w4 = (w_q.view(OUT, IN // GROUP, GROUP).float() - zeros) * scales
    layers = {}
    try:
        int4 = GemLiteLinear(4, group_size=GROUP, in_features=IN, out_features=OUT, input_dtype=DType.FP16,
                             output_dtype=DType.FP16)
        int4.pack(w_q, scales.view(OUT, -1).to(dt), zeros.view(OUT, -1).to(dt), None)
        layers["A16W4 (GemLiteLinear)"] = (int4, w4.view(OUT, IN).to(dt))
    except Exception as exc:
        print("FAIL A16W4 pack", type(exc).__name__, " ".join(str(exc).split())[:200], flush=True)
    try:
        linear = torch.nn.Linear(IN, OUT, bias=False, dtype=dt, device=dev)
        linear.weight.data.copy_(w)
        layers["A16W8_INT8 (helper)"] = (A16W8_INT8(device=dev, dtype=dt).from_linear(linear, del_orig=False), w)
    except Exception as exc:
        print("FAIL A16W8_INT8 from_linear", type(exc).__name__, " ".join(str(exc).split())[:200], flush=True)
    failed = total = 0
    for name, (layer, ref_w) in layers.items():
        for batch in BATCHES:
            total += 1
            x = torch.randn(batch, IN, dtype=dt, device=dev)
            try:
                out = layer(x)
                torch.cuda.synchronize()
                ref = x.float() @ ref_w.float().t()
                err = ((out.float() - ref).norm() / ref.norm()).item()
                print(f"ok {name} batch {batch}: relative error {err:.1e}", flush=True)
            except Exception as exc:
                failed += 1
                print(f"FAIL {name} batch {batch}", type(exc).__name__, " ".join(str(exc).split())[:200], flush=True)
    print(f"gemlite {gemlite.__version__}: {total - failed} of {total} forwards ran")
    sys.exit(1 if failed == total else 0)


if __name__ == "__main__":
    main()
