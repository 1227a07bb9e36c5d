"""A kernel's snapshot records the module globals it reads, not its own variables: FlagGems' sum kernels keep
their running total in a variable named ``sum`` beside the library's ``sum`` op (a plain Python function no
snapshot can hold), and their snapshot was refused as incomplete on every arch (reports/ecosystem-h200.md)."""

from __future__ import annotations

import sys

import pytest

from vgprscope.runtime.snapshot import load_snapshot, snapshot

OPS = '''
import triton
import triton.language as tl


def sum(inp, *, dtype=None):  # the library's op, named as the builtin it replaces
    return inp


def helper(x):
    return x


@triton.jit
def total(X, Y, N, BLOCK: tl.constexpr):
    sum = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        sum += tl.load(X + offs, mask=offs < N, other=0)
    tl.store(Y, tl.sum(sum, axis=0))


@triton.jit
def reads_helper(X, BLOCK: tl.constexpr):
    tl.store(X, helper(1))
'''


@pytest.fixture()
def ops(tmp_path, monkeypatch):
    (tmp_path / "sum_like_ops.py").write_text(OPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import sum_like_ops

    yield sum_like_ops
    sys.modules.pop("sum_like_ops", None)


def test_a_variable_named_as_a_module_global_is_the_kernels_own(ops, tmp_path):
    snap = snapshot(ops.total)
    assert snap["problems"] == []
    assert "sum" not in snap["functions"]["sum_like_ops:total"]["names"]
    (tmp_path / "load").mkdir()
    assert load_snapshot(snap, str(tmp_path / "load")).fn.__name__ == "total"


def test_a_plain_function_the_kernel_reads_is_still_a_problem(ops):
    """What the kernel does read from its module and a snapshot cannot hold is still said."""
    snap = snapshot(ops.reads_helper)
    assert len(snap["problems"]) == 1 and "helper" in snap["problems"][0]
