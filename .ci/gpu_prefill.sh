#!/usr/bin/env bash
# One device call: GPU numerics of every variant, then prefill B4 H32 N4096 D128 fp16 (causal and not) at the
# sm_90 tiles around the default, beside SDPA.   bash .ci/gpu_prefill.sh OUTDIR
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
timeout "${GPU_TEST_TIMEOUT:-240}" python3 -m pytest -m gpu -q -p no:cacheprovider -n 12 tests/gpu/test_gpu.py 2>&1 \
  | tee "$out/gpu-tests.log" | tail -6
export COLUMNS=200
for c in --no-causal --causal; do
  timeout 200 python3 -m vgprscope bench -s baseline --shape 4,32,4096,4096 $c --block-m 128 --block-n 64,128 \
    --num-warps 8 --num-stages 2,3 ${PREFILL_ARGS:-} --rep-ms 100 --format md --output "$out/prefill$c.md" 2>&1 | tail -2
  cut -d'|' -f2-7 "$out/prefill$c.md"
done
