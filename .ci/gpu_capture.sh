#!/usr/bin/env bash
# One device call for issue 10's GPU half: capture liger-kernel's ops through Triton's JIT (no interpreter),
# analyze the capture for AMD and NVIDIA, and time capture's overhead on the GPU. From the repository root:
#   bash .ci/gpu_capture.sh OUTDIR        (liger-kernel importable: pip install liger-kernel==0.8.5)
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
python3 -m vgprscope capture -o "$out/capture-gpu.json" -- python3 -m tools.reports.workloads.liger_ops; echo "capture rc=$?"
python3 -m vgprscope analyze --capture "$out/capture-gpu.json" --arch gfx942 --arch sm_90 --format csv \
  --output "$out/capture-gpu-analyze.csv"; echo "analyze rc=$?"
COLUMNS=100 python3 -m vgprscope analyze --capture "$out/capture-gpu.json" --arch sm_90 | head -40
python3 scripts/bench_capture_overhead.py --repeats "${REPEATS:-5}" --json "$out/capture-overhead-gpu.json"
