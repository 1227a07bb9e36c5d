#!/usr/bin/env bash
# One device call: the GPU tests, then the bench report. Run from the repository root on a GPU machine:
#   bash scripts/gpu_run.sh OUTDIR
# (the device image has torch, Triton, typer, rich, pandas, pytest and pytest-xdist; no network). Pass
# VGPRSCOPE_GIT_SHA=<the checkout's short sha> with the command: the tree's .git there is not this checkout's.
set -uo pipefail
out=${1:-reports}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITON_INTERPRET=0 VGPRSCOPE_CACHE_DIR=${VGPRSCOPE_CACHE_DIR:-/tmp/vgprscope-cache}
# Uninstalled checkout: the bundled kernels install as vgprscope.kernels (pyproject's package-dir); map them the
# same way here, so PYTHONPATH=$PWD finds them where an install would put them.
[ -e vgprscope/kernels/__init__.py ] || { rm -rf vgprscope/kernels; ln -s ../kernels vgprscope/kernels; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
timeout "${GPU_TEST_TIMEOUT:-240}" python3 -m pytest -m gpu -q -p no:cacheprovider -n "${GPU_TEST_WORKERS:-12}" tests/test_gpu.py 2>&1 \
  | tee "$out/gpu-tests.log" | tail -25
timeout "${BENCH_TIMEOUT:-300}" python3 scripts/bench_report.py --out "$out" --rep-ms "${REP_MS:-100}" ${BENCH_ARGS:-} 2>&1 \
  | tee "$out/bench.log" | tail -60
