"""A committed capture in a user's repository, checked by CI in a checkout at another path.

The README's gate flow: capture once, commit the capture and the baseline, edit kernels; CI (the project
checked out elsewhere, vgprscope and Triton installed, no PYTHONPATH) compiles the current sources with
the recorded launches: the capture holds paths relative to the project, so its rows compile in another
checkout, and an edit that changes nothing the compiler sees (a comment) leaves the gate passing.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from capture_helpers import cli

OPS = '''
import triton
import triton.language as tl

from mypkg.helpers import combine


@triton.jit
def add(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Z + offs, combine(x, tl.load(Y + offs, mask=mask)), mask=mask)
'''

# a @triton.jit helper in another file of the package
HELPERS = '''
import triton
import triton.language as tl


@triton.jit
def combine(x, y):
    return x + y
'''

RUN = '''
import torch
from mypkg.ops import add

x, y = torch.randn(1000), torch.randn(1000)
z = torch.empty_like(x)
add[(4,)](x, y, z, 1000, BLOCK=256)
assert torch.allclose(z, x + y)
'''

PYPROJECT = '''
[project]
name = "mypkg"
version = "0"

[tool.vgprscope]
capture = "vgprscope-capture.json"
archs = ["gfx942"]
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A user's repository with a committed capture and baseline."""
    root = tmp_path_factory.mktemp("repo") / "proj"
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "ops.py").write_text(OPS)
    (root / "mypkg" / "helpers.py").write_text(HELPERS)
    (root / "run.py").write_text(RUN)
    (root / "pyproject.toml").write_text(PYPROJECT)
    done = cli("capture", "-o", "vgprscope-capture.json", "--", sys.executable, "run.py",
               env={"TRITON_INTERPRET": "1"}, cwd=root)
    assert done.returncode == 0, done.stderr
    assert '"file": "mypkg/ops.py"' in (root / "vgprscope-capture.json").read_text()
    done = cli("baseline", "save", cwd=root)
    assert done.returncode == 0, done.stderr
    # the checkout the capture was taken in is gone: only what the files say can find the kernels
    committed = root.with_name("committed")
    root.rename(committed)
    return committed


def checkout(project: Path, where: Path) -> Path:
    """The repository as CI checks it out: same files, another path, the original gone from view."""
    copy = where / "ci" / "checkout"
    shutil.copytree(project, copy)
    return copy


def check(repo: Path):
    return cli("check", cwd=repo, env=_env())


def test_unchanged_checkout_elsewhere_passes(project, tmp_path):
    repo = checkout(project, tmp_path)
    done = check(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 same" in done.stderr or " same" in done.stdout


def test_a_comment_edit_passes(project, tmp_path):
    repo = checkout(project, tmp_path)
    ops = repo / "mypkg" / "ops.py"
    ops.write_text(ops.read_text().replace("    mask = offs < n\n", "    mask = offs < n  # the tail\n"))
    done = check(repo)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_body_change_fails_by_its_registers(project, tmp_path):
    repo = checkout(project, tmp_path)
    ops = repo / "mypkg" / "ops.py"
    ops.write_text(ops.read_text().replace(
        "    tl.store(Z + offs, combine(x, tl.load(Y + offs, mask=mask)), mask=mask)",
        "    t = x[:, None] + tl.arange(0, 32)[None, :].to(tl.float32)\n"
        "    tl.store(Z + offs, tl.sum(tl.exp(t), axis=1) + tl.load(Y + offs, mask=mask), mask=mask)"))
    seen = check(repo)  # by default: seen, a change (within its occupancy step) or a regression (across one)
    assert ("changed" in seen.stdout or "worse" in seen.stdout) and "vgpr_total" in seen.stdout, seen.stdout
    done = cli("check", "--strict", cwd=repo, env=_env())  # every register growth fails
    assert done.returncode == 1, done.stdout + done.stderr
    assert "worse" in done.stdout and "vgpr_total" in done.stdout


def test_a_heavier_helper_in_another_file_fails_even_when_cached(project, tmp_path):
    """The cache key covers the helpers a kernel calls in other files: a heavier helper is compiled again
    and `check` sees it, without --no-cache."""
    repo = checkout(project, tmp_path)
    env = {**_env(), "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    assert cli("check", cwd=repo, env=env).returncode == 0  # warms the cache with the light helper
    helpers = repo / "mypkg" / "helpers.py"
    helpers.write_text(helpers.read_text().replace(
        "    return x + y",
        "    t = x[:, None] + tl.arange(0, 32)[None, :].to(tl.float32)\n"
        "    return tl.sum(tl.exp(t), axis=1) + y"))
    seen = cli("check", cwd=repo, env=env)  # by default: seen, as a change or a regression
    assert ("changed" in seen.stdout or "worse" in seen.stdout) and "vgpr_total" in seen.stdout, seen.stdout
    done = cli("check", "--strict", cwd=repo, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "worse" in done.stdout and "vgpr_total" in done.stdout
