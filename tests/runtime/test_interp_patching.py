"""Under Triton's interpreter a kernel's launch patches the language (``triton.language`` and its ``core``) once
and restores it when it ends: a device call inside it (a @jit helper, called in a loop) patches nothing more, so a
kernel's CPU time does not grow by a scan of the language's members per call, and no patch outlives the launch."""

from __future__ import annotations

import inspect

import pytest

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _scaled(x, s):
    return tl.maximum(x, 0.0) * s  # tl.maximum: a builtin of core's, reached through triton.language


@triton.jit
def _loop(X, Y, N: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, N)
    acc = tl.zeros([N], dtype=tl.float32)
    for _ in range(STEPS):
        acc += _scaled(tl.load(X + offs), 2.0)
    tl.store(Y + offs, acc)


def _builtins() -> dict[tuple[str, str], object]:
    return {(m.__name__, name): member for m in (tl, tl.core) for name, member in inspect.getmembers(m)
            if tl.core.is_builtin(member)}


@pytest.fixture
def patch_scans(monkeypatch):
    """How many times the interpreter scans a module's members to patch its builtins."""
    from triton.runtime import interpreter

    from vgprscope.runtime.interp import fix_interpreter, interpreting

    if not interpreting() or not hasattr(interpreter, "_patch_builtin"):
        pytest.skip("not under TRITON_INTERPRET=1, or an interpreter that patches otherwise")
    fix_interpreter()
    calls = []
    original = interpreter._patch_builtin
    monkeypatch.setattr(interpreter, "_patch_builtin",
                        lambda *a, **k: (calls.append(a[0]), original(*a, **k))[1])
    return calls


def test_device_calls_in_a_launch_patch_nothing_more_and_nothing_outlives_it(patch_scans):
    torch = pytest.importorskip("torch")
    x = torch.linspace(-1.0, 1.0, 16)
    before = _builtins()
    scans = []
    for steps in (1, 8):
        y = torch.empty(16)
        patch_scans.clear()
        _loop[(1,)](x, y, N=16, STEPS=steps)
        scans.append(len(patch_scans))
        assert torch.allclose(y, torch.clamp(x, min=0.0) * 2.0 * steps)
    # the launch's patches alone: as many with eight device calls as with one
    assert scans[0] == scans[1] > 0, scans
    # every builtin of triton.language and of core is Triton's own again once the launch ends
    assert _builtins() == before
