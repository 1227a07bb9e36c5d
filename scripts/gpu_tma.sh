#!/usr/bin/env bash
# One device call for issue 13's TMA item: tensor-descriptor (TMA) K/V loads against pointer loads.
#   bash scripts/gpu_tma.sh OUTDIR
# 1. GPU numerics of knob tma=1 in every variant that takes it (float64 gate, ragged / causal / GQA / decode);
# 2. prefill B4 H32 N4096 D128 fp16, causal and not: baseline over tiles x stages x tma, beside SDPA;
# 3. decode preset: split-k at its defaults with tma=0 and tma=1.
set -uo pipefail
out=${1:-reports}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITON_INTERPRET=0 VGPRSCOPE_CACHE_DIR=${VGPRSCOPE_CACHE_DIR:-/tmp/vgprscope-cache}
[ -e vgprscope/kernels/__init__.py ] || { rm -rf vgprscope/kernels; ln -s ../kernels vgprscope/kernels; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
timeout "${GPU_TEST_TIMEOUT:-200}" python3 -m pytest -m gpu -q -p no:cacheprovider -n 12 -k "tma" tests/test_gpu.py 2>&1 \
  | tee "$out/gpu-tests-tma.log" | tail -8
export COLUMNS=200
timeout 240 python3 -m vgprscope bench -s baseline --shape 4,32,4096,4096 --block-m 128 --block-n 64,128 \
  --num-warps 8 --num-stages 2,3 --knob tma=0,1 --rep-ms 100 --format md --output "$out/tma-prefill.md" 2>&1 | tail -5
timeout 200 python3 -m vgprscope bench -s split-k --preset decode --knob tma=0,1 --rep-ms 100 --no-anchors \
  --format md --output "$out/tma-decode.md" 2>&1 | tail -5
cut -d'|' -f2-7,9 "$out/tma-prefill.md" "$out/tma-decode.md"
