"""What a scan of an Inductor cache needs of the installed torch and Triton (PyTorch's config heuristics, the names
a generated kernel reads) comes from one child process, never the scanning process, and is kept in the compile
cache: the scanning process stays free of torch and Triton (its compile workers fork from it), and a second scan
of the same modules asks no child at all and gives the same launches.

tests/fixtures/inductor_block_h100_cache.tar.xz: the default-mode Llama-style block's Inductor cache (7 generated
kernels, 12 configs; tests/sources/test_inductor_scan.py checks those configs against the capture of the run)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from capture_helpers import ROOT
from fixture_paths import unpack

from vgprscope.compile.cache import CompileCache
from vgprscope.sources import inductor_configs
from vgprscope.sources.inductor import inductor_capture

FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def block_cache(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("block")
    with tarfile.open(FIXTURES / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, directory)
    return directory / "inductor"


def _launches(cache) -> list[tuple]:
    return [(x.kernel.qualname, x.kernel.snapshot, x.args, tuple(sorted(x.options.items())),
             json.dumps(x.producer, sort_keys=True)) for x in cache.capture.launches]


def test_a_second_read_of_the_same_modules_asks_no_child_and_gives_the_same_launches(block_cache, tmp_path,
                                                                                       monkeypatch):
    pytest.importorskip("torch")
    cache = CompileCache(tmp_path / "vc")
    first = inductor_capture(block_cache, cache)
    assert len(first.capture.launches) == 12 and not first.unread
    assert {x.producer["configs_from"] for x in first.capture.launches if x.producer["heuristic"] != "template"} \
        == {f"PyTorch {_torch_version()}'s {h} heuristic" for h in ("pointwise", "persistent_reduction")}

    def no_child(*args, **kwargs):
        raise AssertionError("a warm read started the child that imports torch")

    monkeypatch.setattr(inductor_configs, "_run_child", no_child)
    again = inductor_capture(block_cache, cache)
    assert _launches(again) == _launches(first)
    # without the cache (--no-cache), the child answers again: the same launches
    monkeypatch.undo()
    assert _launches(inductor_capture(block_cache, CompileCache(tmp_path / "vc", enabled=False))) == _launches(first)


def test_a_heuristic_answer_is_not_reused_under_other_inductor_settings(block_cache, tmp_path, monkeypatch):
    """TORCHINDUCTOR_* settings change PyTorch's config (and so a heuristic's answer): they are in the key."""
    calls = [inductor_configs.HeuristicCall("pointwise", {"size_hints": {"x": 1024}}, "/x/c1.py", False)]
    asked: list[int] = []

    def child(heuristics, snapshots, torch):
        asked.append(len(heuristics))
        return [inductor_configs.Answer(({"kwargs": {"XBLOCK": 8}, "num_warps": 1, "num_stages": 1},),
                                        "PyTorch's pointwise heuristic")], [], True

    monkeypatch.setattr(inductor_configs, "_identity", lambda package: f"{package} here")
    monkeypatch.setattr(inductor_configs, "_run_child", child)
    cache = CompileCache(tmp_path / "vc")
    first = inductor_configs.resolve(calls, [], cache)
    assert inductor_configs.resolve(calls, [], cache) == first and asked == [1]
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE", "1")
    assert inductor_configs.resolve(calls, [], cache) == first and asked == [1, 1]


def test_the_scanning_process_imports_neither_torch_nor_triton(block_cache, tmp_path):
    """The child answers; the process that reads the cache (and forks the compile workers) imports neither."""
    pytest.importorskip("torch")
    code = ("import sys; from pathlib import Path; from vgprscope.compile.cache import CompileCache\n"
            "from vgprscope.sources.inductor import inductor_capture\n"
            f"c = inductor_capture(Path({str(block_cache)!r}), CompileCache(Path({str(tmp_path)!r})))\n"
            "print(len(c.capture.launches), sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'triton'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["12", "[]"]


def test_a_child_that_fails_is_a_reason_on_each_kernel_and_nothing_is_kept(block_cache, tmp_path, monkeypatch):
    """A child process that dies says so on the rows (the .best_config where Inductor saved one), and its answer
    is not cached: the next scan asks again."""
    monkeypatch.setattr(inductor_configs, "_CHILD", "import sys; sys.exit('the child broke')")
    cache = CompileCache(tmp_path / "vc")
    got = inductor_capture(block_cache, cache)
    assert got.unread and all("the process reading the generated modules failed (the child broke)" in why
                              for _, why in got.unread)
    assert not list((tmp_path / "vc").rglob("*.json"))


def _torch_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("torch").split("+")[0]
