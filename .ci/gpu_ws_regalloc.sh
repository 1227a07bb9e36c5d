#!/usr/bin/env bash
# One device call: ws-regalloc's GPU numerics (every case of tests/gpu/test_gpu.py, the broken copy), then the four
# prefill cases of issue 28 beside SDPA (every backend, same process), fp16 and bf16.
#   bash .ci/gpu_ws_regalloc.sh OUTDIR
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
timeout "${GPU_TEST_TIMEOUT:-200}" python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/gpu/test_gpu.py \
  -k "(ws-regalloc or ws_regalloc) and not pingpong" 2>&1 | tee "$out/gpu-tests-ws.log" | tail -15
# the ping-pong schedule apart: a wrong turn would hang, not fail, and must not cost the tests above
timeout "${PINGPONG_TEST_TIMEOUT:-90}" python3 -m pytest -m gpu -q -p no:cacheprovider -n 6 tests/gpu/test_gpu.py \
  -k "pingpong" 2>&1 | tee "$out/gpu-tests-ws-pingpong.log" | tail -8
export COLUMNS=220
V=${WS_VARIANTS:-ws-regalloc,baseline}
bench() {  # NAME ARGS...
  local name=$1; shift
  timeout "${BENCH_TIMEOUT:-150}" python3 -m vgprscope bench -s "$V" --dtype fp16,bf16 --rep-ms "${REP_MS:-100}" \
    "$@" --format md --output "$out/$name.md" 2>&1 | tail -3
  cat "$out/$name.md"
}
bench b4h32n4096 --shape 4,32,4096,4096 --no-causal -d 128
bench b4h32n4096-causal --shape 4,32,4096,4096 --causal -d 128
bench b2h16n8192d64-causal --shape 2,16,8192,8192 --causal -d 64
bench b2h32kv8n8192-causal --shape 2,32,8192,8192,8 --causal -d 128
# FA3's ingredients one at a time on the first two cases (fp16), beside SDPA: the overlap of S with P V (knob
# overlap), the register split (producer_regs 24: consumers get 240; 168: every warp keeps the kernel's 168), the
# ping-pong of two consumer partitions (pingpong=1 at 4 warps each; pingpong=0 at 4 warps: one warp group)
for c in --no-causal --causal; do
  for grid in "-k overlap=0,1 -k producer_regs=24,168" "--num-warps 4,8 -k pingpong=0,1"; do
    name=ingredients$c-$(echo "$grid" | tr -dc 'a-z0-9' | head -c 24)
    timeout "${BENCH_TIMEOUT:-150}" python3 -m vgprscope bench -s ws-regalloc --dtype fp16 --rep-ms "${REP_MS:-100}" \
      --shape 4,32,4096,4096 $c -d 128 $grid --format md --output "$out/$name.md" 2>&1 | tail -2
    cat "$out/$name.md"
  done
done
