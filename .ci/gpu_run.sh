#!/usr/bin/env bash
# One device call: the GPU tests, then the bench report. Run from the repository root on a GPU machine:
#   bash .ci/gpu_run.sh OUTDIR
# (the device image has torch, Triton, typer, rich, pandas, pytest and pytest-xdist; no network). Pass
# VGPRSCOPE_GIT_SHA=$(git rev-parse --short=12 HEAD), expanded here, not there: the tree's .git on the device is not this checkout's.
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
timeout "${GPU_TEST_TIMEOUT:-240}" python3 -m pytest -m gpu -q -p no:cacheprovider -n "${GPU_TEST_WORKERS:-12}" tests/gpu/test_gpu.py 2>&1 \
  | tee "$out/gpu-tests.log" | tail -25
timeout "${BENCH_TIMEOUT:-300}" python3 -m tools.reports bench --out "$out" --rep-ms "${REP_MS:-100}" ${BENCH_ARGS:-} 2>&1 \
  | tee "$out/bench.log" | tail -60
