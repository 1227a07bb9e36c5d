"""Fresh GPU-free compiles of the bundled baseline for every supported arch, through the engine."""

from __future__ import annotations

import json

import pytest

from vgprscope.archs import ARCHS, AmdArch, NvidiaArch, get_arch
from vgprscope.compile.cache import FORMAT, CompileCache
from vgprscope.compile.engine import Task, compile_tasks
from vgprscope.records import AmdUsage, NvidiaUsage
from vgprscope.variants import ConfigRequest, get_variant, resolve_config

SMALL = ConfigRequest(block_m=64, block_n=32, head_dim=64, num_warps=4, num_stages=1)


@pytest.fixture(scope="module")
def every_arch(tmp_path_factory):
    cache = CompileCache(tmp_path_factory.mktemp("cache"))
    v = get_variant("baseline")
    tasks = [Task(v, a, resolve_config(v, a, SMALL)) for a in ARCHS.values()]
    return cache, tasks, compile_tasks(tasks, jobs=2, cache=cache)


def test_every_arch_compiles_or_says_why(every_arch):
    _, tasks, rows = every_arch
    assert [r.arch for r in rows] == list(ARCHS)
    for r in rows:
        arch = get_arch(r.arch)
        if not arch.__dict__.get("triton_target", True):
            assert r.status.startswith(f"the installed Triton (") and f"cannot target {arch.name}" in r.status
            assert r.usage is None
            continue
        assert r.status == "ok", (r.arch, r.status)
        assert r.compile_seconds > 0 and not r.cached
        assert r.triton_version and r.source_hash == get_variant("baseline").source_hash
        u = r.usage
        if isinstance(arch, AmdArch):
            assert isinstance(u, AmdUsage)
            assert 0 < u.arch_vgpr <= arch.max_arch_vgprs and u.agpr <= arch.max_agprs
            expected_total = (-(-u.arch_vgpr // 4) * 4 + u.agpr) if u.agpr else u.arch_vgpr
            assert u.vgpr_total == expected_total
            assert u.sgpr > 0 and u.lds_dynamic > 0 and u.lds_static == 0
            assert u.max_flat_workgroup_size == 4 * arch.wave_size
            assert u.llvm_occupancy is not None and 1 <= u.llvm_occupancy <= arch.max_waves_per_simd
        else:
            assert isinstance(arch, NvidiaArch) and isinstance(u, NvidiaUsage)
            assert 0 < u.regs <= arch.max_regs_per_thread
            assert u.shared_dynamic > 0
            assert u.ptxas_version and "release" in u.ptxas_version


def test_rerun_is_all_cached_and_identical(every_arch):
    cache, tasks, rows = every_arch
    again = compile_tasks(tasks, jobs=2, cache=cache)
    assert all(r.cached for r in again)
    strip = lambda r: {k: v for k, v in r.as_dict().items() if k != "cached"}  # noqa: E731
    assert [strip(r) for r in again] == [strip(r) for r in rows]


def test_cache_entry_is_keyed_by_the_full_specialisation(every_arch, tmp_path):
    cache, _, _ = every_arch
    v = get_variant("baseline")
    a = get_arch("gfx942")
    base = resolve_config(v, a, SMALL)
    other = resolve_config(v, a, ConfigRequest(block_m=64, block_n=32, head_dim=64, num_warps=4, num_stages=1,
                                               waves_per_eu=2))
    assert base.key() != other.key()
    rows = compile_tasks([Task(v, a, other)], jobs=1, cache=cache)
    assert not rows[0].cached and rows[0].config.waves_per_eu == 2


def test_nvidia_options_are_dropped_for_amd_and_kept_for_nvidia():
    v = get_variant("baseline")
    req = ConfigRequest(head_dim=64, maxnreg=128, waves_per_eu=2)
    assert resolve_config(v, get_arch("gfx942"), req).maxnreg is None
    assert resolve_config(v, get_arch("gfx942"), req).waves_per_eu == 2
    assert resolve_config(v, get_arch("sm_90"), req).waves_per_eu is None
    assert resolve_config(v, get_arch("sm_90"), req).maxnreg == 128


def test_lds_over_the_arch_limit_is_a_row_with_the_reason(tmp_path):
    v = get_variant("baseline")
    a = get_arch("gfx942")
    cfg = resolve_config(v, a, ConfigRequest(block_m=64, block_n=256, head_dim=256, num_warps=4, num_stages=1))
    (row,) = compile_tasks([Task(v, a, cfg)], jobs=1, cache=CompileCache(tmp_path))
    assert row.usage is not None and row.usage.lds_bytes > a.lds_per_workgroup
    assert row.status == f"needs {row.usage.lds_bytes} B of LDS; gfx942 has 65536 B per workgroup"
    assert row.occupancy is not None and row.occupancy.value == 0


def test_a_failing_compile_is_a_row_and_the_sweep_goes_on(tmp_path):
    v = get_variant("baseline")
    a = get_arch("sm_80")
    good = resolve_config(v, a, SMALL)
    bad = resolve_config(v, a, ConfigRequest(block_m=64, block_n=32, head_dim=300, num_warps=4, num_stages=1))
    rows = compile_tasks([Task(v, a, bad), Task(v, a, good)], jobs=2, cache=CompileCache(tmp_path))
    assert rows[0].status == "head_dim 300 is out of range; allowed: 16 to 256 (padded to a power of two)"
    assert rows[1].status == "ok"


def test_interrupted_cache_write_leaves_no_entry(tmp_path, monkeypatch):
    cache = CompileCache(tmp_path)
    import vgprscope.fsutil as fsutil

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        cache.store("ab" * 16, [{"kernel": "k"}], {"parser": 1, "kernels": []})
    monkeypatch.undo()
    assert cache.load_parsed("ab" * 16) is None
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    cache.store("ab" * 16, [{"kernel": "k"}], {"parser": 1, "kernels": []})
    assert json.loads((tmp_path / "ab" / ("ab" * 16 + ".json")).read_text())["format"] == FORMAT


def test_waves_per_eu_padding_matches_the_kernel_descriptor(tmp_path):
    """LLVM pads the descriptor's VGPR allocation for waves_per_eu; the model must give the occupancy that
    the padded allocation (.amdhsa_next_free_vgpr) gives, and LLVM's own line."""
    from vgprscope.occupancy import waves_with_vgprs

    v = get_variant("baseline")
    a = get_arch("gfx942")
    cfg = resolve_config(v, a, ConfigRequest(block_m=64, block_n=32, head_dim=64, num_warps=4, num_stages=1,
                                             waves_per_eu=2))
    (row,) = compile_tasks([Task(v, a, cfg)], jobs=1, cache=CompileCache(tmp_path))
    u = row.usage
    assert u.vgpr_alloc is not None and u.vgpr_alloc > u.vgpr_total  # padded
    assert row.occupancy.value == waves_with_vgprs(a, u.vgpr_alloc) == u.llvm_occupancy == 2


def test_source_hash_follows_relative_imports(tmp_path):
    """A variant that runs another file's kernel (small-tiles runs baseline's) is re-keyed when that file
    changes, so a cached compile can never be stale."""
    from vgprscope.loader import source_hash

    (tmp_path / "_common.py").write_text("X = 1\n")
    (tmp_path / "base.py").write_text("from ._common import X\n")
    (tmp_path / "small.py").write_text("from .base import X\n")
    (tmp_path / "other.py").write_text("Y = 2\n")
    before = source_hash(tmp_path, tmp_path / "small.py")
    other = source_hash(tmp_path, tmp_path / "other.py")
    (tmp_path / "base.py").write_text("from ._common import X  # changed\n")
    assert source_hash(tmp_path, tmp_path / "small.py") != before
    assert source_hash(tmp_path, tmp_path / "other.py") == other
