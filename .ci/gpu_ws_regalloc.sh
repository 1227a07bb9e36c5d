#!/usr/bin/env bash
# One device call: ws-regalloc's GPU numerics at its defaults (every case of tests/gpu/test_gpu.py, the ping-pong
# cases, knobs tma_store and persistent on every case, the broken copy), then its configs side by side in one process on the
# four prefill cases of issue 28 beside SDPA, fp16 and bf16 (.ci/ws_side_by_side.py: the sm_90 default, a
# 2-slot ring, the first default of one 8-warp consumer partition, tma_store=1).
#   bash .ci/gpu_ws_regalloc.sh OUTDIR [NAME=KNOBS ...]   (NAME=KNOBS: the configs to set side by side instead)
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
shift || true
# a wrong turn of the ping-pong would hang, not fail: each test gets its own limit where pytest-timeout is there
limit=$(python3 -c "import pytest_timeout" 2>/dev/null && echo "--timeout 90")
timeout "${GPU_TEST_TIMEOUT:-300}" python3 -m pytest -m gpu -v -p no:cacheprovider -n 8 $limit tests/gpu/test_gpu.py \
  tests/gpu/test_gpu_ws_persistent.py -k "ws-regalloc or ws_regalloc" 2>&1 | tee "$out/gpu-tests-ws.log" | grep -E "FAILED|ERROR|passed|failed" | tail -40
export COLUMNS=220
timeout "${BENCH_TIMEOUT:-280}" python3 .ci/ws_side_by_side.py "$out/ws-side-by-side.md" "$@" 2>&1 \
  | tee "$out/ws-side-by-side.log" | grep -v "^\[" | tail -80
