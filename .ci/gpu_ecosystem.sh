#!/usr/bin/env bash
# One device call: the ecosystem's fidelity run (tools/reports/ecosystem.py): five Triton libraries and two
# torch.compile'd models, each captured through Triton's JIT and analysed GPU-free for sm_90, gfx942 and
# gfx950, one archive per workload in OUTDIR as soon as it is done. From the repository root:
#   bash .ci/gpu_ecosystem.sh OUTDIR     (the libraries' wheels in .whl/, carried: flag-gems, sqlalchemy,
#                                          greenlet, liger-kernel, fla-core, gemlite, torchao)
# then, on any machine: python -m tools.reports ecosystem tests/fixtures/ecosystem --collect OUTDIR
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
source .ci/gpu_env.sh "${1:-ecosystem-out}"
nproc
python3 -m tools.reports ecosystem-run --work /tmp/vgprscope-ecosystem --out "$out" --deadline "${DEADLINE:-400}" \
  --jobs "${JOBS:-8}" ${ONLY:-} ${ANALYZE_ONLY:+--analyze-only}
ls -la "$out"
