"""Fresh GPU-free compiles through the engine, and a compile cache that covers the whole compile: every
file the kernel's compile reads, checked on every read; entries of the wrong shape, key, arch or Triton
are misses; failures of the machine are never cached; a worker of another Triton is refused."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from vgprscope import runtime
from vgprscope.compile.cache import FORMAT, CompileCache
from vgprscope.compile.engine import Engine, WorkerVersionError, cache_key, compile_tasks
from vgprscope.core.archs import ARCHS, AmdArch, NvidiaArch, get_arch
from vgprscope.core.records import AmdUsage, NvidiaUsage
from vgprscope.flashattn.config import ConfigRequest
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import get_variant, load_variants, resolve_config
from vgprscope.runtime import facts, protocol

SMALL = ConfigRequest(block_m=64, block_n=32, head_dim=64, num_warps=4, num_stages=1)


def tasks_of(variant, arch, config, engine=None):
    return variant_tasks([(variant, config, arch, "")], engine)


@pytest.fixture(scope="module")
def every_arch(tmp_path_factory):
    cache = CompileCache(tmp_path_factory.mktemp("cache"))
    engine = Engine(2, cache)
    v = get_variant("baseline")
    tasks = variant_tasks([(v, resolve_config(v, a, SMALL), a, "") for a in ARCHS.values()], engine)
    return cache, tasks, engine.compile(tasks)


def test_every_arch_compiles_or_says_why(every_arch):
    _, tasks, rows = every_arch
    assert [r.arch for r in rows] == list(ARCHS)
    for r in rows:
        arch = get_arch(r.arch)
        if not arch.__dict__.get("triton_target", True):
            assert r.status.startswith("the installed Triton (") and f"cannot target {arch.name}" in r.status
            assert r.usage is None
            continue
        assert r.status == "ok", (r.arch, r.status)
        assert r.compile_seconds > 0 and not r.cached
        assert r.triton_version and r.source_hash  # the hash of the files the compile read
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
    # every compile is read back; a row that never compiles (an arch the installed Triton cannot target)
    # has nothing to read
    assert all(r.cached == (r.usage is not None) for r in again) and sum(r.cached for r in again) >= 9
    strip = lambda r: {k: v for k, v in r.as_dict().items() if k != "cached"}  # noqa: E731
    assert [strip(r) for r in again] == [strip(r) for r in rows]


def test_entries_record_their_key_arch_triton_and_the_files_read(every_arch):
    cache, tasks, _ = every_arch
    task = next(t for t in tasks if t.arch.name == "gfx942")
    key = cache_key(task.job, rows_triton(every_arch))
    entry = json.loads((cache.directory / key[:2] / f"{key}.json").read_text())
    assert entry["format"] == FORMAT and entry["key"] == key and entry["arch"] == "gfx942"
    assert entry["triton_version"] == rows_triton(every_arch)
    # the kernel's file and the helpers it calls in other files (its @triton.jit functions)
    assert {Path(p).name for p in entry["deps"]} >= {"baseline.py", "_fa_common.py"}


def rows_triton(every_arch) -> str:
    return every_arch[2][0].triton_version


def test_a_grid_point_is_another_job(every_arch):
    cache, _, _ = every_arch
    v = get_variant("baseline")
    a = get_arch("gfx942")
    engine = Engine(1, cache)
    base = tasks_of(v, a, resolve_config(v, a, SMALL), engine)[0]
    other = base.vary(waves_per_eu=2)
    assert other.job.key() != base.job.key() and other.job.option("waves_per_eu") == 2
    assert other.config.waves_per_eu == 2
    (row,) = engine.compile([other])
    assert not row.cached and row.config.waves_per_eu == 2


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
    # K and V tiles of 256 x 256 fp16 need 128 KiB; 16 query rows (not 64) keep LLVM's register allocation, and so
    # the compile, about a third as long
    cfg = resolve_config(v, a, ConfigRequest(block_m=16, block_n=256, head_dim=256, num_warps=4, num_stages=1))
    (row,) = compile_tasks(tasks_of(v, a, cfg), jobs=1, cache=CompileCache(tmp_path))
    assert row.usage is not None and row.usage.lds_bytes > a.lds_per_workgroup
    assert row.status == f"needs {row.usage.lds_bytes} B of LDS; gfx942 has 65536 B per workgroup"
    assert row.occupancy is not None and row.occupancy.value == 0


def test_a_failing_compile_is_a_row_and_the_sweep_goes_on(tmp_path):
    v = get_variant("baseline")
    a = get_arch("sm_80")
    good = resolve_config(v, a, SMALL)
    bad = resolve_config(v, a, ConfigRequest(block_m=64, block_n=32, head_dim=300, num_warps=4, num_stages=1))
    engine = Engine(2, CompileCache(tmp_path))
    rows = engine.compile(variant_tasks([(v, bad, a, ""), (v, good, a, "")], engine))
    assert rows[0].status == "head_dim 300 is out of range; allowed: 16 to 256 (padded to a power of two)"
    assert rows[1].status == "ok"


def test_interrupted_cache_write_leaves_no_entry(tmp_path, monkeypatch):
    cache = CompileCache(tmp_path)
    import vgprscope.core.fsutil as fsutil

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        cache.store("ab" * 16, {"arch": "x"}, {"kernel": "k"})
    monkeypatch.undo()
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    cache.store("ab" * 16, {"arch": "x"}, {"kernel": "k"})
    assert json.loads((tmp_path / "ab" / ("ab" * 16 + ".json")).read_text())["format"] == FORMAT


def test_waves_per_eu_padding_matches_the_kernel_descriptor(tmp_path):
    """LLVM pads the descriptor's VGPR allocation for waves_per_eu; the model must give the occupancy that
    the padded allocation (.amdhsa_next_free_vgpr) gives, and LLVM's own line."""
    from vgprscope.core.occupancy.amd import waves_with_vgprs

    v = get_variant("baseline")
    a = get_arch("gfx942")
    cfg = resolve_config(v, a, ConfigRequest(block_m=64, block_n=32, head_dim=64, num_warps=4, num_stages=1,
                                             waves_per_eu=2))
    (row,) = compile_tasks(tasks_of(v, a, cfg), jobs=1, cache=CompileCache(tmp_path))
    u = row.usage
    assert u.vgpr_alloc is not None and u.vgpr_alloc > u.vgpr_total  # padded
    assert row.occupancy.value == waves_with_vgprs(a, u.vgpr_alloc) == u.llvm_occupancy == 2


# --------------------------------------------------------------------------------- the cache's trust

HELPER_LIGHT = """
import triton
import triton.language as tl


@triton.jit
def combine(x):
    return x * 2.0
"""

HELPER_HEAVY = """
import triton
import triton.language as tl


@triton.jit
def combine(x):
    # a (BLOCK, 16) tile live at once: many more registers than the light helper
    t = x[:, None] + tl.arange(0, 16)[None, :].to(tl.float32)
    return tl.sum(tl.exp(t) * tl.sin(t), axis=1)
"""

VARIANT = '''
import triton
import triton.language as tl

from .common.fa import combine

VARIANT = {"name": "mine", "strategy": "a user's kernel", "seed": "-", "trades": "-", "kernels": ["k"],
           "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit
def k(X, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < n, other=1.0)
    tl.store(Y + i, combine(x), mask=i < n)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    return [{"name": "k", "fn": k, "args": {"X": "*fp32", "Y": "*fp32", "n": 1000},
             "constexprs": {"BLOCK": cfg["block_m"] * 16}}]
'''


@pytest.fixture()
def kernel_dir(tmp_path) -> Path:
    """A user's kernel directory whose kernel calls a helper in a subpackage."""
    d = tmp_path / "kernels"
    (d / "common").mkdir(parents=True)
    (d / "common" / "__init__.py").write_text("")
    (d / "common" / "fa.py").write_text(HELPER_LIGHT)
    (d / "mine.py").write_text(textwrap.dedent(VARIANT))
    load_variants.cache_clear()
    return d


def _compile_mine(directory: Path, cache: CompileCache, arch: str = "gfx942"):
    v = load_variants(directory.resolve())["mine"]
    a = get_arch(arch)
    engine = Engine(1, cache)
    (row,) = engine.compile(variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine))
    assert row.ok, row.status
    return row


def test_a_heavier_helper_in_another_file_is_never_served_from_the_cache(kernel_dir, tmp_path):
    """The cache key covers a helper the kernel calls from a subpackage: a heavier helper is compiled again,
    without --no-cache."""
    cache = CompileCache(tmp_path / "cache")
    light = _compile_mine(kernel_dir, cache)
    assert _compile_mine(kernel_dir, cache).cached
    (kernel_dir / "common" / "fa.py").write_text(HELPER_HEAVY)
    heavy = _compile_mine(kernel_dir, cache)
    assert not heavy.cached
    assert heavy.usage.vgpr_total > light.usage.vgpr_total
    fresh = _compile_mine(kernel_dir, CompileCache(tmp_path / "fresh"))
    assert heavy.usage == fresh.usage


def _entry_path(cache: CompileCache) -> Path:
    (path,) = [p for p in cache.directory.glob("??/*.json")]
    return path


def test_an_entry_copied_to_another_configs_key_is_a_miss(kernel_dir, tmp_path):
    """An entry copied to another config's key is not believed: entries are verified on read."""
    cache = CompileCache(tmp_path / "cache")
    v = load_variants(kernel_dir.resolve())["mine"]
    a = get_arch("gfx942")
    engine = Engine(1, cache)
    small, big = variant_tasks([(v, resolve_config(v, a, ConfigRequest(block_m=m)), a, "") for m in (16, 64)],
                               engine)
    rows = engine.compile([small, big])
    tv = rows[0].triton_version
    small_path, big_path = (cache.directory / k[:2] / f"{k}.json"
                            for k in (cache_key(t.job, tv) for t in (small, big)))
    shutil.copy(small_path, big_path)
    (again,) = Engine(1, cache).compile([big])
    assert not again.cached and again.usage == rows[1].usage


@pytest.mark.parametrize("damage", ["claims another key", "empty kernel result", "list", "null",
                                    "partial usage", "boolean count", "other triton", "other arch"])
def test_a_misplaced_or_malformed_entry_is_a_miss(kernel_dir, tmp_path, damage):
    cache = CompileCache(tmp_path / "cache")
    first = _compile_mine(kernel_dir, cache)
    path = _entry_path(cache)
    entry = json.loads(path.read_text())
    if damage == "claims another key":
        entry["key"] = "ff" + entry["key"][2:]
        path.write_text(json.dumps(entry))
    elif damage == "empty kernel result":
        entry["result"] = {}
        path.write_text(json.dumps(entry))
    elif damage == "list":
        path.write_text("[]")
    elif damage == "null":
        path.write_text("null")
    elif damage == "partial usage":
        del entry["result"]["usage"]["sgpr"]
        path.write_text(json.dumps(entry))
    elif damage == "boolean count":
        entry["result"]["usage"]["vgpr_spill"] = True
        path.write_text(json.dumps(entry))
    elif damage == "other triton":
        entry["triton_version"] = "3.8.0"
        path.write_text(json.dumps(entry))
    elif damage == "other arch":
        entry["arch"] = "gfx90a"
        path.write_text(json.dumps(entry))
    again = _compile_mine(kernel_dir, cache)
    assert not again.cached and again.usage == first.usage


def _worker_without_memory() -> None:
    """A compile worker whose triton.compile fails the way a memory limit makes it fail."""
    protocol.configure()
    import triton

    def no_memory(*a, **k):
        raise OSError("failed to map segment from shared object")

    triton.compile = no_memory


def test_a_failure_of_the_machine_is_not_cached(kernel_dir, tmp_path):
    """An OSError while compiling (a memory limit: 'failed to map segment') is a row, never the cached
    result of the compile: the next run compiles."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    cache = CompileCache(tmp_path / "cache")
    v = load_variants(kernel_dir.resolve())["mine"]
    a = get_arch("gfx942")
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=_worker_without_memory) as pool:
        engine = Engine(1, cache, executor=pool)
        (row,) = engine.compile(variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine))
    assert row.status == "OSError: failed to map segment from shared object"
    assert not list(cache.directory.glob("??/*.json"))
    assert _compile_mine(kernel_dir, cache).ok


def test_a_compile_verdict_is_cached(kernel_dir, tmp_path):
    """What the compiler says about the input (here a failed static assertion, with its message) is cached."""
    src = (kernel_dir / "mine.py").read_text().replace(
        "    i = tl.program_id(0)", '    tl.static_assert(BLOCK < 16, "BLOCK must stay below 16")\n    i = tl.program_id(0)')
    (kernel_dir / "mine.py").write_text(src)
    load_variants.cache_clear()
    cache = CompileCache(tmp_path / "cache")
    v = load_variants(kernel_dir.resolve())["mine"]
    a = get_arch("sm_90")
    for cached in (False, True):
        engine = Engine(1, cache)
        (row,) = engine.compile(variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine))
        assert row.status == "CompileTimeAssertionFailure: BLOCK must stay below 16"
        assert row.cached is cached


class _OtherTriton:
    """An executor whose workers run another Triton release (as a Dask worker with Triton 3.8.0 did)."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        fut = Future()
        answer = fn(*args)
        fut.set_result(answer | {"triton_version": "3.8.0"})
        return fut


def test_a_worker_of_another_triton_is_refused(kernel_dir, tmp_path):
    v = load_variants(kernel_dir.resolve())["mine"]
    a = get_arch("gfx942")
    cache = CompileCache(tmp_path / "cache")
    engine = Engine(1, cache, executor=_OtherTriton())
    with pytest.raises(WorkerVersionError, match=r"Triton 3\.8\.0, this run compiles with Triton 3\.9"):
        engine.compile(variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine))
    assert not list(cache.directory.rglob("*.json"))


def test_an_unwritable_cache_is_a_warning_and_the_results_are_reported(kernel_dir, tmp_path):
    from vgprscope.compile.cache import CacheWarning

    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    with pytest.warns(CacheWarning, match="cannot write the compile cache"):
        row = _compile_mine(kernel_dir, CompileCache(blocker / "cache"))
    assert row.ok and row.usage.vgpr_total > 0


def test_the_worker_runs_without_vgprscope(tmp_path, kernel_dir):
    """The compile worker needs Triton and the standard library only: run from a copy of the runtime package's
    directory, in an interpreter where vgprscope cannot be imported, it compiles a job to the same outputs."""
    import subprocess
    import sys

    v = load_variants(kernel_dir.resolve())["mine"]
    a = get_arch("gfx942")
    engine = Engine(1, CompileCache(tmp_path / "c"))
    (task,) = variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine)
    (row,) = engine.compile([task])
    folder = tmp_path / "alone"
    folder.mkdir()
    shutil.copytree(runtime.DIRECTORY, folder / "runtime", ignore=shutil.ignore_patterns("__pycache__"))
    request = json.dumps({"op": "compile", "job": task.job.as_dict(), "id": 7}) + "\n"
    # isolated (-I: no PYTHONPATH, no user site), vgprscope made unimportable before the worker runs
    code = ("import runpy, sys; sys.modules['vgprscope'] = None; sys.argv = ['runtime', '--serve']; "
            "runpy.run_path('runtime', run_name='__main__')")
    done = subprocess.run([sys.executable, "-I", "-c", code], input=request, capture_output=True, text=True,
                          cwd=folder)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["id"] == 7 and "error" not in answer, answer.get("error")
    from vgprscope.compile.results import parse_output

    assert parse_output(a, answer) == row.usage


def test_stand_ins_of_many_dtypes_keep_their_own_type():
    """Triton's native binder caches what a dtype object maps to by the object's identity: stand-in dtypes
    freed and reallocated at the same address were read as the previous dtype (fp32 pointers compiled as
    fp16, at random). Each dtype has one stand-in object for the life of the worker."""
    import gc

    from triton._C.libtriton import native_specialize_impl
    from triton.backends.nvidia.compiler import CUDABackend

    seen = []
    for i in range(40):
        typ = ("*fp16", "*fp32", "*bf16", "*i8")[i % 4]
        arg = facts.stand_in({"name": "X", "type": typ, "aligned": True})
        seen.append((typ, native_specialize_impl(CUDABackend, arg, False, True, True)[0]))
        del arg
        gc.collect()
    assert all(want == got for want, got in seen)


def test_an_answer_made_by_other_runtime_code_is_made_again(kernel_dir, tmp_path, monkeypatch):
    """A failure the runtime's own code caused (FlagGems' host-side TMA descriptors once met a stand-in dtype
    without ``itemsize``) was served from the cache after the fix, until --no-cache: the runtime's code is part
    of every compile's key, so a fixed runtime compiles again and a reinstall of the same code keeps the entry."""
    cache = CompileCache(tmp_path / "cache")
    first = _compile_mine(kernel_dir, cache)
    assert not first.cached and _compile_mine(kernel_dir, cache).cached
    monkeypatch.setattr(runtime, "code_hash", lambda names=(): "code-after-a-fix")
    again = _compile_mine(kernel_dir, cache)
    assert not again.cached and again.usage == first.usage


def test_the_runtime_code_hash_follows_the_code_not_the_install(tmp_path, monkeypatch):
    """Equal files hash alike wherever they are installed; one edited byte gives another hash."""
    import shutil

    copy = tmp_path / "runtime"
    shutil.copytree(runtime.DIRECTORY, copy, ignore=shutil.ignore_patterns("__pycache__", "boot"))
    installed = runtime.code_hash()
    monkeypatch.setattr(runtime, "DIRECTORY", str(copy))
    runtime.code_hash.cache_clear()
    try:
        assert runtime.code_hash() == installed
        (copy / "facts.py").write_text((copy / "facts.py").read_text() + "\n# edited\n")
        runtime.code_hash.cache_clear()
        assert runtime.code_hash() != installed
    finally:
        runtime.code_hash.cache_clear()
