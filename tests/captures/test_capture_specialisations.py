"""A capture holds exactly the specialisations the JIT compiles: checked against the JIT's own kernel caches
on a GPU (fla-core 0.6.0's chunked ops, whose autotuned kernels take optional tensors that share one
autotune key), and on the H100 run committed as fixtures (.ci/gpu_capture_fla.sh wrote them)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from capture_helpers import ROOT, capture_vs_jit

FIXTURES = ROOT / "tests" / "fixtures"


def test_the_h100_capture_of_fla_core_holds_each_specialisation_the_jit_compiled():
    """316 JIT compiles on the H100, 316 captured launches, equal kernel by kernel and launch by launch
    (constexpr values, pointer types and alignment, None arguments, num_warps, num_stages)."""
    capture = json.loads(gzip.open(FIXTURES / "fla_gpu_h100_capture.json.gz").read())
    keys = json.loads(gzip.open(FIXTURES / "fla_gpu_h100_jit_keys.json.gz").read())
    assert capture["triton_version"] == "3.6.0"
    assert len(keys) == len(capture["launches"]) == 316
    assert capture_vs_jit(capture, keys) == {}


def test_the_comparison_sees_a_missing_specialisation():
    """The check above can fail: dropping one captured launch is reported against the kernel it belongs to."""
    capture = json.loads(gzip.open(FIXTURES / "fla_gpu_h100_capture.json.gz").read())
    keys = json.loads(gzip.open(FIXTURES / "fla_gpu_h100_jit_keys.json.gz").read())
    dropped = capture["launches"].pop()
    name = capture["kernels"][dropped["kernel"]]["qualname"]
    diff = capture_vs_jit(capture, keys)
    assert [k.rsplit(".", 1)[1] for k in diff] == [name]
    (jit_only, capture_only), = diff.values()
    assert len(jit_only) == 1 and capture_only == []


@pytest.mark.gpu
def test_a_gpu_capture_of_fla_core_equals_the_jit_kernel_caches(tmp_path):
    if importlib.util.find_spec("fla") is None:
        pytest.skip("fla-core is not installed (pip install --no-deps fla-core==0.6.0 einops)")
    keys, out = tmp_path / "keys.json", tmp_path / "cap.json"
    env = {**os.environ, "TRITON_INTERPRET": "0", "VGPRSCOPE_JIT_KEYS": str(keys),
           "TRITON_CACHE_DIR": str(tmp_path / "triton-cache")}
    done = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", str(out), "--", sys.executable,
                           str(ROOT / "scripts" / "gpu_fla_ops.py")], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    capture, jit = json.loads(out.read_text()), json.loads(keys.read_text())
    assert len(capture["launches"]) == len(jit)
    assert capture_vs_jit(capture, jit) == {}
