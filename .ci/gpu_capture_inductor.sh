#!/usr/bin/env bash
# One device call: a torch.compile'd Llama-style block (default mode, then max-autotune) under
# `vgprscope capture`, cold (fresh Inductor and Triton caches, Inductor's caches on as users have them) and
# warm (Inductor's caches filled by the cold run: the capture makes it compile again); `analyze --capture`
# for sm_90 against cuobjdump of each cubin the cold run left (issue 27). From the repository root:
#   bash .ci/gpu_capture_inductor.sh OUTDIR
set -uo pipefail
source .ci/gpu_env.sh "${1:-reports}"
for mode in ${MODES:-default max-autotune}; do
  [ "$mode" = default ] && export MODE= || export MODE=$mode
  export TRITON_CACHE_DIR=/tmp/tc-$mode TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-$mode
  rm -rf "$TRITON_CACHE_DIR" "$TORCHINDUCTOR_CACHE_DIR" /tmp/tc-vgprscope-$mode
  TORCHINDUCTOR_FORCE_DISABLE_CACHES=0 timeout 240 python3 -m vgprscope capture -o "$out/inductor-$mode-capture.json" \
    -- python3 scripts/gpu_inductor_block.py 2>&1 | grep -E "^(ok|vgprscope)"
  echo "$mode cold: cubins $(find "$TRITON_CACHE_DIR" -name '*.cubin' | wc -l)"
  # vgprscope's own compiles go to a cache of their own, not among the cubins Inductor's run left
  TRITON_CACHE_DIR=/tmp/tc-vgprscope-$mode python3 -m vgprscope analyze --capture "$out/inductor-$mode-capture.json" \
    --arch sm_90 --format json -o "$out/inductor-$mode-sm90.json" --jobs 16 2>&1 | tail -2
  python3 scripts/compare_cubins.py "$TRITON_CACHE_DIR" "$out/inductor-$mode-sm90.json" > "$out/inductor-$mode-vs-cuobjdump.txt"
  grep -E "^x|distinct|equal" "$out/inductor-$mode-vs-cuobjdump.txt" | cut -c1-300
  timeout 240 python3 -m vgprscope capture -o "$out/inductor-$mode-warm-capture.json" \
    -- python3 scripts/gpu_inductor_block.py 2>&1 | grep -E "^(ok|vgprscope)"
  python3 - "$out/inductor-$mode-capture.json" "$out/inductor-$mode-warm-capture.json" <<'PY'
import json, sys
def launches(path):
    c = json.load(open(path))
    return sorted(json.dumps([c["kernels"][x["kernel"]]["qualname"], x["args"], x["options"]], sort_keys=True) for x in c["launches"])
cold, warm = launches(sys.argv[1]), launches(sys.argv[2])
print(f"warm capture: {len(warm)} launches, cold {len(cold)}; the same set: {sorted(set(cold)) == sorted(set(warm))}")
PY
  (cd /tmp && tar czf "$out/inductor-$mode-caches.tgz" --exclude='*.llir' --exclude='*.ptx' "tc-$mode" "inductor-$mode")
done
