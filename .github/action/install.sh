#!/usr/bin/env bash
# action.yml's install step: the pinned Triton, then vgprscope (no torch: the gate does not need it).
set -euo pipefail
: "${VGPRSCOPE_TRITON:?the action's triton-version input is required (the release the baseline was saved with)}"
python -m pip install --disable-pip-version-check -q "triton==${VGPRSCOPE_TRITON}" "${VGPRSCOPE_SPEC:?}"
python -m vgprscope --help > /dev/null   # installed and importable
