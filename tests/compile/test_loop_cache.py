"""The loop metrics of cached compiles: an entry parsed before the usage carried them is parsed again from
its raw outputs (no compile) and gains them; one whose raw outputs hold no assembly to read has them unknown,
never 0. A real compile of a small kernel with one loop and no matrix instruction: its loop is the gate loop,
0 % matrix, no scratch."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from fixture_paths import unpack

from tests.compile.test_compile_identity import _compile  # type: ignore[import-not-found]
from vgprscope.backends import backend_of_usage
from vgprscope.compile.cache import CompileCache

KERNEL = '''
import triton
import triton.language as tl

VARIANT = {"name": "mine", "strategy": "a user's kernel", "seed": "-", "trades": "-", "kernels": ["k"],
           "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit
def k(X, Y, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for j in range(0, n, BLOCK):
        i = j + tl.arange(0, BLOCK)
        acc += tl.load(X + i, mask=i < n, other=0.0)
    tl.store(Y + tl.arange(0, BLOCK), acc)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    return [{"name": "k", "fn": k, "args": {"X": "*fp32", "Y": "*fp32", "n": 1000},
             "constexprs": {"BLOCK": cfg["block_m"]}}]
'''


def _entry(cache_dir: Path) -> tuple[Path, Path]:
    (path,) = [p for p in cache_dir.glob("*/*.json")]
    return path, path.with_name(path.name.replace(".json", ".raw.json.gz"))


def _as_before_the_loop_metrics(path: Path, raw_path: Path, drop: tuple[str, ...] = ()) -> None:
    """The entry as an older parser wrote it: no loop fields; ``drop``: outputs its raw outputs lack."""
    entry = json.loads(path.read_text())
    entry["parser"] = 2
    entry["result"]["usage"] = {k: v for k, v in entry["result"]["usage"].items() if not k.startswith("loop_")}
    path.write_text(json.dumps(entry))
    if drop:
        raw = json.loads(gzip.open(raw_path).read())
        for name in drop:
            del raw[name]
        raw_path.write_bytes(gzip.compress(json.dumps(raw).encode()))


@pytest.mark.parametrize("arch, assembly", [("gfx942", ("amdgcn",)), ("sm_90", ("cubin_b64", "sass"))])
def test_an_entry_parsed_before_the_loop_metrics_gains_them_from_its_raw_outputs(kernel_dir, tmp_path, arch,
                                                                                   assembly):
    cache = CompileCache(tmp_path / "cache")
    fresh = _compile(kernel_dir, cache, arch)
    u = fresh.usage
    assert fresh.ok and not fresh.cached
    assert (u.loop_matrix_share, u.loop_spill_bytes, u.loop_scratch_insts) == (0, 0, 0)
    assert u.loop_lines.startswith("mine.py:")
    path, raw_path = _entry(cache.directory)
    assert set(assembly) <= set(json.loads(gzip.open(raw_path).read()))  # the worker's SASS beside the cubin

    _as_before_the_loop_metrics(path, raw_path)
    again = _compile(kernel_dir, cache, arch)
    assert again.cached and again.usage == u  # parsed again, not compiled
    assert json.loads(path.read_text())["result"]["usage"]["loop_spill_bytes"] == 0  # and stored so

    if arch == "sm_90":  # a raw without the cubin and its SASS: the share unknown, left out of the gate's numbers;
        # the kernel has no local memory or stack, so no loop of it spills: 0, known without the SASS
        _as_before_the_loop_metrics(path, raw_path, drop=assembly)
        blind = _compile(kernel_dir, cache, arch)
        assert blind.cached and blind.usage.regs == u.regs and blind.usage.loop_matrix_share is None
        assert blind.usage.loop_spill_bytes == 0 and blind.usage.stack_bytes == blind.usage.local_bytes == 0
        assert "loop_matrix_share" not in backend_of_usage(blind.usage).metric_values(blind.usage)


def test_a_triton_cache_entrys_stored_cubin_gives_its_loop(tmp_path, monkeypatch):
    """scan reads the loop of another release's stored cubin even where its spill bytes are unknown (no ptxas
    here rebuilds it). The 3.6.0 fixture's matmul on sm_90, hand-counted from `nvdisasm -gi -c matmul.cubin`,
    lines 632-1872 (.L_x_2 to its @!P0 BRA): 1178 instructions, 8 HGMMA.64x256x16.F32 (0.68 % -> 1);
    LDL.64 x64 + LDL.LU + LDL.LU.64 x128 = 1540 B, STL + STL.64 x128 = 1028 B: 2568 B and 322 local
    instructions per trip. scale_add has no loop: no scratch in a loop, no share."""
    import tarfile

    from vgprscope.analysis.scan.core import scan

    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "no-toolchains"))
    with tarfile.open(Path(__file__).resolve().parents[1] / "fixtures" / "triton36_cache.tar.xz") as tar:
        unpack(tar, tmp_path / "cache")
    rows = {(r.kernel, r.arch): r.usage for r in scan(tmp_path / "cache", jobs=1).records
            if dict(r.extras)["cache"] == "stored"}
    mm = rows[("matmul", "sm_90")]
    assert not mm.spills_known and mm.stack_bytes > 0  # ptxas's figures unknown, the loop's read
    assert (mm.loop_matrix_share, mm.loop_spill_bytes, mm.loop_scratch_insts) == (1, 2568, 322)
    assert mm.loop_lines == "make_scan_fixture.py:57-64"
    add = rows[("scale_add", "sm_90")]
    assert (add.loop_matrix_share, add.loop_spill_bytes, add.loop_lines) == (None, 0, None)
