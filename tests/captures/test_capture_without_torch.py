"""The gate where the README's CI runs it: Triton and vgprscope, no torch, on a project whose kernel modules
import torch at the top (as nearly every Triton project's do, for their Python wrappers).

The project (an autotuned matmul whose helper lives in another file, and a row kernel) is captured under the
interpreter and baselined where torch is installed, then one kernel is made heavier (a second accumulator)
without capturing again. Where torch cannot be imported (a ``sitecustomize`` that refuses it, as in
``tests/project/test_no_torch.py``; ``tests/project/test_no_torch.py::test_the_actions_install_gates_a_project``
builds the Action's own environment), ``check`` reads the modules' current files statically: it fails with the
same worse entries and the same numbers as where torch is installed, whatever the compile cache holds (one
shared with the torch environment, a cold one, none), and passes on the unedited project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from capture_helpers import cli

from tests.project.test_no_torch import BLOCKER

HELPERS = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_acc(acc, alpha):
    return acc * alpha
'''

MATMUL = '''import torch
import triton
import triton.language as tl

from myops.helpers import scale_acc


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn, alpha,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(A + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(B + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    acc = scale_acc(acc, alpha)
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), alpha)
    return c
'''

# the edit made after the baseline: a second accumulator live across the loop
HEAVIER = [("    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n",
            "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
            "    acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"),
           ("        acc += tl.dot(a, b)\n", "        acc += tl.dot(a, b)\n        acc2 += tl.dot(a * 2.0, b)\n"),
           ("    acc = scale_acc(acc, alpha)\n", "    acc = scale_acc(acc, alpha) + acc2 * 0.5\n")]

ROWS = '''import torch
import triton
import triton.language as tl


@triton.jit
def row_kernel(X, Y, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(Y + row * stride + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    row_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return y
'''

RUN = '''import torch
from myops.matmul import matmul
from myops.rows import softmax

a, b = torch.randn(64, 64), torch.randn(64, 64)
torch.testing.assert_close(matmul(a, b), a @ b, atol=1e-2, rtol=1e-2)
x = torch.randn(8, 100)
torch.testing.assert_close(softmax(x), torch.softmax(x, dim=1))
'''

# strict: every count growth fails, so the heavier kernel is worse on every arch it grows on
PYPROJECT = '''[project]
name = "myops"
version = "0"

[tool.vgprscope]
capture = "vgprscope-capture.json"
archs = ["gfx942"]
strict = true
'''


@dataclass(frozen=True)
class Project:
    root: Path  # the user's repository, captured and baselined where torch is installed
    cache: Path  # the compile cache that run left (shared with the torch-free runs of the warm case)
    site: Path  # a directory whose sitecustomize.py refuses torch

    def env(self, torch: bool, cache: Path | None) -> dict[str, str]:
        """The user's CI shell: no PYTHONPATH of the test session, the compile cache named, and without torch
        the site directory first on the path."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET")}
        if not torch:
            env["PYTHONPATH"] = str(self.site)
        if cache is not None:
            env["VGPRSCOPE_CACHE_DIR"] = str(cache)
        return env


def check(project: Project, repo: Path, *, torch: bool, cache: Path | None,
          no_cache: bool = False) -> tuple[int, dict, str]:
    args = [sys.executable, "-m", "vgprscope", "check", "--format", "json", *(["--no-cache"] if no_cache else [])]
    done = subprocess.run(args, cwd=repo, env=project.env(torch, cache), capture_output=True, text=True,
                          timeout=900)
    assert done.stdout.startswith("{"), done.stdout[-2000:] + done.stderr[-2000:]
    return done.returncode, json.loads(done.stdout), done.stderr


def verdicts(doc: dict) -> dict[str, tuple[str, dict]]:
    """key -> (result, the current numbers of every metric)."""
    return {r["key"]: (r["result"], {m["metric"]: m["current"] for m in r["metrics"]}) for r in doc["rows"]}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    """The user's repository, captured and baselined where torch is installed."""
    return build_project(tmp_path_factory)


def build_project(tmp_path_factory) -> Project:
    """The project, captured (TRITON_INTERPRET=1) and baselined where torch is installed."""
    site = tmp_path_factory.mktemp("no_torch_site")
    (site / "sitecustomize.py").write_text(BLOCKER)
    root = tmp_path_factory.mktemp("user") / "repo"
    (root / "myops").mkdir(parents=True)
    (root / "myops" / "__init__.py").write_text("")
    (root / "myops" / "helpers.py").write_text(HELPERS)
    (root / "myops" / "matmul.py").write_text(MATMUL)
    (root / "myops" / "rows.py").write_text(ROWS)
    (root / "run.py").write_text(RUN)
    (root / "pyproject.toml").write_text(PYPROJECT)
    cache = tmp_path_factory.mktemp("shared_cache")
    made = Project(root, cache, site)
    env = made.env(True, cache)
    done = cli("capture", "-o", "vgprscope-capture.json", "--", sys.executable, "run.py",
               env={**env, "TRITON_INTERPRET": "1"}, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    done = cli("baseline", "save", env=env, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    return made


def _copy(project: Path, where: Path, heavier: bool) -> Path:
    root = where / "checkout"
    shutil.copytree(project, root)
    if heavier:
        matmul = root / "myops" / "matmul.py"
        text = matmul.read_text()
        for old, new in HEAVIER:
            text = text.replace(old, new)
        matmul.write_text(text)
    return root


def test_the_blocker_refuses_torch_and_the_modules_do_not_import(project):
    done = subprocess.run([sys.executable, "-c", "import myops.matmul"], cwd=project.root,
                          env=project.env(False, None), capture_output=True, text=True)
    assert done.returncode == 1 and "No module named 'torch'" in done.stderr


def test_the_unedited_project_passes_without_torch(project, tmp_path):
    code, doc, stderr = check(project, _copy(project.root, tmp_path, heavier=False), torch=False,
                              cache=tmp_path / "cold")
    assert code == 0, stderr
    assert {r["result"] for r in doc["rows"]} == {"same"} and len(doc["rows"]) == 3
    assert not any(r["note"] for r in doc["rows"])  # the current files, never the capture's snapshot


def test_a_heavier_kernel_fails_without_torch_as_it_does_with_torch(project, tmp_path):
    """One repository, one command, one verdict: with torch; without torch on the cache the torch run left, on a
    cold cache, and with --no-cache: exit 1, the same worse entries, the same numbers."""
    repo, shared = _copy(project.root, tmp_path, heavier=True), project.cache
    code, doc, stderr = check(project, repo, torch=True, cache=shared)
    assert code == 1, stderr
    expected = verdicts(doc)
    worse = {k for k, (result, _) in expected.items() if result == "worse"}
    assert worse == {k for k in expected if "matmul_kernel" in k} and len(worse) == 2  # both configs
    for torch_free in ({"cache": shared}, {"cache": tmp_path / "cold"}, {"cache": tmp_path / "none", "no_cache": True}):
        code, doc, stderr = check(project, repo, torch=False, **torch_free)
        assert code == 1, (torch_free, stderr)
        assert verdicts(doc) == expected, torch_free
