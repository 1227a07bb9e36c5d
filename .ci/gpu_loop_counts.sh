#!/usr/bin/env bash
# One device call: per-loop static instruction counts against Nsight Compute's executed-instruction counts
# per SASS address (issue 30). From the repository root:   bash .ci/gpu_loop_counts.sh OUTDIR
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
export TRITON_CACHE_DIR=/tmp/tc-loops
rm -rf "$TRITON_CACHE_DIR"
python3 scripts/gpu_loop_counts.py run || exit 1                     # compile and check first, unprofiled
ncu --section SourceCounters -k regex:"loop_gemm|attn_fwd" -c 2 -f -o /tmp/loops python3 scripts/gpu_loop_counts.py run
ncu -i /tmp/loops.ncu-rep --page source --csv --print-source sass > "$out/ncu-sass-counts.csv"
head -c 600 "$out/ncu-sass-counts.csv"; echo
python3 scripts/gpu_loop_counts.py compare "$out/ncu-sass-counts.csv" "$TRITON_CACHE_DIR" | tee "$out/loop-counts.txt"
