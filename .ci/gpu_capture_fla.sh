#!/usr/bin/env bash
# One device call: capture fla-core's chunked ops through Triton's JIT (no interpreter) and compare the
# capture's specialisations with the ones the JIT compiled (issue 24, item 13); then write the Triton and
# Inductor caches of a torch.compile'd block for `scan` to read elsewhere. From the repository root:
#   bash .ci/gpu_capture_fla.sh OUTDIR     (fla-core 0.6.0 as a wheel in .whl/, carried)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/fla_core-*.whl
export PYTHONPATH=/tmp/site
source .ci/gpu_env.sh "${1:-reports}"
export TRITON_CACHE_DIR=/tmp/tc-fla VGPRSCOPE_JIT_KEYS="$out/fla-jit-keys.json"
rm -rf "$TRITON_CACHE_DIR"
python3 -m vgprscope capture -o "$out/fla-gpu-capture.json" -- python3 scripts/gpu_fla_ops.py; echo "capture rc=$?"
echo "cubins: $(find "$TRITON_CACHE_DIR" -name '*.cubin' | wc -l)"
python3 - "$out" <<'PY'
import json, sys
sys.path.insert(0, "tests")
from capture_helpers import capture_vs_jit
out = sys.argv[1]
cap, keys = json.load(open(f"{out}/fla-gpu-capture.json")), json.load(open(f"{out}/fla-jit-keys.json"))
diff = capture_vs_jit(cap, keys)
print(f"capture {len(cap['launches'])} specialisations, JIT {len(keys)} compiles; differing kernels: {len(diff)}")
for name, (jit_only, cap_only) in diff.items():
    print(" ", name, "JIT only", len(jit_only), "capture only", len(cap_only))
PY
unset VGPRSCOPE_JIT_KEYS
export TRITON_CACHE_DIR=/tmp/tc-inductor TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
rm -rf /tmp/tc-inductor /tmp/inductor
python3 scripts/gpu_inductor_block.py; echo "inductor rc=$?"
echo "inductor cubins: $(find /tmp/tc-inductor -name '*.cubin' | wc -l)"
tar czf "$out/inductor-block-caches.tgz" --exclude='*.llir' --exclude='*.ptx' -C /tmp tc-inductor inductor
ls -la "$out"
