"""The README's minimal install for running kernels, in a fresh virtual environment: only the `bench` extra
and the pinned torch, nothing the test or plots extras would bring along: the `bench` extra itself brings numpy, which Triton's
interpreter imports.

One environment per test session, built with pip's normal resolver and the repository's constraints (pip's
cache makes a rebuild take about a minute). Marked ``install``: `-m "not install"` skips it locally; CI
runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The README's command for running kernels ("install the `bench` extra ..."), with the repository's pins.
INSTALL = [".[bench]", "torch==2.13.0", "-c", "constraints.txt"]

KERNEL = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def add(X, Y, Z, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(Z + i, tl.load(X + i, mask=i < n) + tl.load(Y + i, mask=i < n), mask=i < n)


    x, y = torch.randn(300), torch.randn(300)
    z = torch.empty_like(x)
    add[(3,)](x, y, z, 300, BLOCK=128)
    torch.testing.assert_close(z, x + y)
    print("kernel ran")
''')


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user who activated nothing: no test-session variables, no checkout on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TRITON_INTERPRET", "PYTHONHOME")}
    return {**env, **extra}


@pytest.fixture(scope="session")
def minimal_venv(tmp_path_factory) -> Path:
    """A fresh virtual environment with only the README's `bench` install (shared by the session)."""
    where = tmp_path_factory.mktemp("minimal-venv") / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    python = where / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile", *INSTALL], cwd=ROOT,
                          capture_output=True, text=True, env=_clean_env())
    assert done.returncode == 0, done.stderr[-3000:]
    return where


@pytest.mark.install
def test_minimal_bench_install_captures_under_the_interpreter(minimal_venv, tmp_path):
    script = tmp_path / "my_script.py"
    script.write_text(KERNEL)
    cap = tmp_path / "cap.json"
    bindir = minimal_venv / "bin"
    done = subprocess.run([str(bindir / "vgprscope"), "capture", "-o", str(cap), "--", str(bindir / "python"),
                           str(script)], cwd=tmp_path, capture_output=True, text=True,
                          env=_clean_env(TRITON_INTERPRET="1", VGPRSCOPE_CACHE_DIR=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "kernel ran"
    doc = json.loads(cap.read_text())
    assert [k["qualname"] for k in doc["kernels"]] == ["add"]
    (launch,) = doc["launches"]
    constexprs = {a["name"]: a["value"] for a in launch["args"] if a["type"] == "constexpr"}
    assert constexprs == {"BLOCK": 128} and launch["interpreted"] is True
    assert "1 kernel, 1 specialisation" in done.stderr


@pytest.mark.install
def test_minimal_bench_install_runs_a_variant_on_cpu_tensors(minimal_venv, tmp_path):
    code = textwrap.dedent('''
        import torch, vgprscope
        from vgprscope.flashattn.correctness import tolerance
        torch.manual_seed(0)
        q, k, v = (torch.randn(1, 1, 20, 16, dtype=torch.float16) for _ in range(3))
        o = vgprscope.attention(q, k, v, block_m=16, block_n=16)
        ref = torch.softmax((q.double() @ k.double().transpose(-1, -2)) / 4.0, dim=-1) @ v.double()
        tol = tolerance("fp16")
        torch.testing.assert_close(o.double(), ref, atol=tol.atol, rtol=tol.rtol)
        print("attention ok")
    ''')
    done = subprocess.run([str(minimal_venv / "bin" / "python"), "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env=_clean_env(TRITON_INTERPRET="1"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "attention ok"
