"""Both sides of a ``diff`` compile the same source, the kernels' current files, in any toolchain: a release's
environment holds Triton alone, so a kernel module that imports torch is read statically there. An edit made
after the capture shows on neither side as a change (the other side here is a release whose Triton is the
installed one's files: the same compiler, so every entry is the same on both sides).
"""

from __future__ import annotations

import sys

from capture_helpers import cli

from tests.compile.test_compile_identity import TORCH_OPS, TORCH_RUN, _fake_release

HEAVIER = ("    tl.store(Y + offs, tl.exp(x) * 2, mask=offs < n)",
           "    t = x[:, None] + tl.arange(0, 16)[None, :].to(tl.float32)\n"
           "    tl.store(Y + offs, tl.sum(tl.exp(t) * tl.sin(t), axis=1) * 2, mask=offs < n)")


def test_an_edit_after_the_capture_is_on_both_sides(tmp_path, monkeypatch):
    import vgprscope
    from vgprscope.compile import toolchains

    tc, _ = _fake_release(tmp_path, monkeypatch)
    (tmp_path / "torch_ops.py").write_text(TORCH_OPS)
    (tmp_path / "run_torch.py").write_text(TORCH_RUN)
    cap = tmp_path / "cap.json"
    done = cli("capture", "-o", str(cap), "--", sys.executable, str(tmp_path / "run_torch.py"), str(tmp_path),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    (tmp_path / "torch_ops.py").write_text(TORCH_OPS.replace(*HEAVIER))
    result = vgprscope.diff(triton=[tc.version, toolchains.triton_version()], capture=str(cap), arch=["gfx942"],
                            jobs=1, cache=str(tmp_path / "cache"))
    assert result.comparable and result.passed and result.compared == 1
    (before,), (after,) = result.records_before, result.records_after
    assert before.ok and after.ok and before.usage == after.usage
    assert "note" not in dict(before.extras)  # the current file, never the capture's snapshot
    assert {d.change.name for d in result.gate.entries} == {"SAME"}
    light = vgprscope.analyze(capture=str(cap), arch=["gfx942"], jobs=1, cache=str(tmp_path / "cache2"))
    (tmp_path / "torch_ops.py").write_text(TORCH_OPS)
    original = vgprscope.analyze(capture=str(cap), arch=["gfx942"], jobs=1, cache=str(tmp_path / "cache2"))
    assert light.records[0].usage == after.usage != original.records[0].usage  # the edit is what both compiled
