"""torch.compile's kernels without a capture: ``vgprscope scan`` of Inductor's cache directory (its generated
modules, compiled GPU-free for any arch and Triton release), Inductor's configs as the gate's slots, and
Inductor's spill threshold (a config with n_spills over 16, 32 on HIP, is skipped by its autotuner) per row and
across two releases.

tests/fixtures/inductor_block_h100_cache.tar.xz: what a torch.compile'd Llama-style block (default mode, forward,
bf16) left on an H100 under torch 2.11 and Triton 3.6.0 (/work/gpu/inductor-block-caches.tgz of the GPU machine,
scripts/gpu_inductor_block.py): ``inductor/`` (TORCHINDUCTOR_CACHE_DIR: 7 generated kernel modules, 5
``.best_config`` files, the graph's output code; the fx-graph and AOT-autograd caches left out) and
``tc-inductor/`` (the TRITON_CACHE_DIR Inductor compiled into: 12 cubins, one per config). The committed capture
of the same block (inductor_block_h100_capture.json.gz) holds what Inductor compiled there, config by config.
"""

from __future__ import annotations

import gzip
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
from capture_helpers import ROOT, cli
from fixture_paths import unpack

from vgprscope.analysis.scan.core import scan
from vgprscope.captures.model import load_capture
from vgprscope.compile.engine import triton_version
from vgprscope.core.archs import ARCHS
from vgprscope.core.records import AmdUsage, LaunchConfig, NvidiaUsage, Record
from vgprscope.sources.capture import capture_tasks
from vgprscope.sources.inductor import (
    THRESHOLD_EXTRA,
    SpillThreshold,
    inductor_capture,
    inductor_slot,
    spill_threshold,
    spill_verdict,
)

FIXTURES = ROOT / "tests" / "fixtures"
OLD = "3.6.0"  # the Triton release that wrote the caches


@pytest.fixture(scope="module")
def caches(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("inductor-block")
    with tarfile.open(FIXTURES / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, directory)
    return directory


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inductor-capture") / "cap.json"
    path.write_bytes(gzip.open(FIXTURES / "inductor_block_h100_capture.json.gz").read())
    return path


def _slots(captured: Path) -> set[tuple[str, str]]:
    """(kernel, slot) of every config Inductor compiled on the H100, as the capture recorded them."""
    return {(x.kernel.qualname, inductor_slot(x.args, x.options)) for x in load_capture(captured).launches}


def test_scan_of_an_inductor_cache_compiles_each_generated_kernel_config_for_the_arch_it_was_built_for(
        caches, captured):
    """The directory another machine wrote: a row per kernel and config on sm_90 (the triton_meta's device),
    compiled from the generated source; its configs are the ones Inductor compiled there (the capture's)."""
    result = scan(caches / "inductor", jobs=2)
    rows = [r for r in result.records if r.source == "inductor-cache"]
    assert len(rows) == 12 and {r.arch for r in rows} == {"sm_90"}
    assert all(r.ok for r in rows), sorted({r.status for r in rows if not r.ok})
    assert {(r.kernel, r.slot) for r in rows} == _slots(captured)
    assert {dict(r.extras)[THRESHOLD_EXTRA] for r in rows} == {16}
    assert "Inductor's generated modules: 7 kernels, 12 configs, 0 unread" in result.summary()


def test_scan_retargets_an_inductor_cache_with_the_release_that_wrote_it(caches, release36):
    """--triton 3.6.0: on the arch it was built for, each config's registers and shared memory equal the cubin
    Triton 3.6.0 wrote on the H100 for it (the Triton cache Inductor compiled into, read as stored); on gfx942
    the same kernels compile, with HIP's threshold."""
    stored = {}
    for r in scan(caches / "tc-inductor").records:
        if dict(r.extras).get("cache") == "stored":
            stored[(r.kernel, r.config.option("num_warps"))] = (r.usage.regs, r.usage.shared_bytes)
    assert len(stored) == 12
    result = scan(caches / "inductor", archs=[ARCHS["gfx942"]], triton=OLD, jobs=2)
    rows = [r for r in result.records if r.source == "inductor-cache"]
    assert len(rows) == 24 and all(r.ok for r in rows), sorted({r.status for r in rows if not r.ok})
    assert {r.triton_version for r in rows} == {OLD}
    h100 = {(r.kernel, r.config.option("num_warps")): (r.usage.regs, r.usage.shared_bytes)
            for r in rows if r.arch == "sm_90"}
    assert h100 == stored
    assert {dict(r.extras)[THRESHOLD_EXTRA] for r in rows if r.arch == "gfx942"} == {32}


def test_the_triton_cache_inductor_keeps_in_its_own_directory_is_read_as_stored(caches, tmp_path):
    """Without TRITON_CACHE_DIR, Inductor compiles into ``triton/<device>/`` of its own directory: scan reads
    those entries as it reads any Triton cache, beside the generated modules."""
    shutil.copytree(caches / "inductor", tmp_path / "inductor")
    shutil.copytree(caches / "tc-inductor", tmp_path / "inductor" / "triton" / "0")
    result = scan(tmp_path / "inductor", jobs=2)
    stored = [r for r in result.records if dict(r.extras).get("cache") == "stored"]
    assert len(stored) == 12 and all(r.ok for r in stored)
    assert len([r for r in result.records if r.source == "inductor-cache"]) == 12


def test_scan_cli_of_an_inductor_cache(caches):
    done = cli("scan", str(caches / "inductor"), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    # each generated kernel named with its module and def line, where a person opens it
    assert "triton_poi_fused__unsafe_view_add_6  (cqgq6yiwqwtq…py:18)" in done.stdout
    assert "7 kernels, 12 configs" in done.stderr


def test_without_torch_the_configs_are_the_ones_inductor_saved_or_the_row_says_to_install_torch(caches, monkeypatch):
    """PyTorch's heuristics list a kernel's configs; where torch is not installed, a kernel Inductor tuned has the
    config it saved as the best (.best_config), and one it did not tune is a row saying what is missing."""
    monkeypatch.setitem(sys.modules, "torch", None)
    cache = inductor_capture(caches / "inductor")
    assert len(cache.kernels) == 7 and len(cache.capture.launches) == 5
    assert {x.producer["configs_from"].split(" (")[0] for x in cache.capture.launches} == \
        {"the config Inductor saved as the best"}
    assert len(cache.unread) == 2 and all("install torch" in why for _, why in cache.unread)
    assert {k.heuristic for k, _ in cache.unread} == {"persistent_reduction"}


def test_a_captured_inductor_config_is_its_slot_with_the_threshold_of_each_arch(captured):
    """Slots follow Inductor's kernel names and configs (not the config's place in a list a PyTorch release
    may reorder); each row carries the threshold Inductor applies on its arch."""
    tasks = capture_tasks(load_capture(captured), [ARCHS["sm_90"], ARCHS["gfx942"]])
    slots = {(t.row.kernel, t.row.slot) for t in tasks}
    assert len(slots) == 12
    assert ("triton_poi_fused__unsafe_view_add_6", "cfg XBLOCK=1024,num_warps=4,num_stages=1") in slots
    assert {(t.arch.name, dict(t.row.extras)[THRESHOLD_EXTRA], t.row.judge) for t in tasks} == {
        ("sm_90", 16, SpillThreshold(16)), ("gfx942", 32, SpillThreshold(32))}  # the judge of its record's verdict


def _row(usage, threshold: int | None) -> Record:
    """An Inductor row as the engine makes it: the threshold extra, and the verdict its judge gives the counts."""
    extras = ((THRESHOLD_EXTRA, threshold),) if threshold is not None else ()
    verdict = SpillThreshold(threshold)(usage) if threshold is not None else None
    return Record(variant="inductor", kernel="k", arch="sm_90", config=LaunchConfig(args=(), constexprs=(), options=()),
                  status="ok", usage=usage, extras=extras, verdict=verdict)


def _nvidia(stack: int) -> NvidiaUsage:
    return NvidiaUsage(regs=255, stack_bytes=stack, spill_store_bytes=stack, spill_load_bytes=stack, shared_static=0,
                       shared_dynamic=0, local_bytes=0)


def _amd(scratch: int) -> AmdUsage:
    return AmdUsage(arch_vgpr=512, agpr=0, vgpr_total=512, sgpr=100, vgpr_spill=scratch // 4, sgpr_spill=0,
                    scratch_bytes=scratch, lds_static=0, lds_dynamic=0, spill_stores=1, spill_loads=1,
                    spill_insts_in_loop=0, llvm_occupancy=1, max_flat_workgroup_size=256, code_bytes=100)


def test_inductors_spill_count_is_local_memory_over_4_and_skips_strictly_above_the_threshold():
    """Triton's driver gives n_spills as the local memory per thread // 4; Inductor skips n_spills > threshold."""
    assert spill_verdict(_row(_nvidia(68), 16)).skipped  # 17 > 16
    assert not spill_verdict(_row(_nvidia(67), 16)).skipped  # 16
    assert spill_verdict(_row(_amd(132), 32)).n_spills == 33 and spill_verdict(_row(_amd(132), 32)).skipped
    assert not spill_verdict(_row(_amd(128), 32)).skipped
    assert spill_verdict(_row(_nvidia(400), None)) is None  # not Inductor's row
    # the kernel's own spill_threshold on the backend it was generated for, PyTorch's default elsewhere
    assert spill_threshold({"spill_threshold": 8}, "cuda", "cuda") == 8
    assert spill_threshold({"spill_threshold": 8}, "cuda", "hip") == 32
    assert spill_threshold({}, "hip", "cuda") == 16


def test_a_skipped_config_says_so_in_the_table_and_the_exports():
    from vgprscope.report.formats import Footnotes
    from vgprscope.report.rows import flat, fmt_spills_noted

    notes = Footnotes()
    cell = fmt_spills_noted(_row(_nvidia(80), 16), notes)
    assert "skip" in cell and any("n_spills (local memory per thread / 4) is 20, over Inductor's spill_threshold 16"
                                  in line for line in notes.lines())
    assert "skip" not in fmt_spills_noted(_row(_nvidia(64), 16), Footnotes())
    assert flat(_row(_nvidia(80), 16))["inductor_skips"] is True
    assert flat(_row(_nvidia(8), 16))["inductor_n_spills"] == 2


def test_the_verdict_is_judged_as_the_record_is_made_and_travels_with_it():
    """The engine makes an Inductor row's verdict with its record (the row's judge, from the compiled counts); a
    record read back from JSON carries it: the tables render its column with no Inductor code asked again."""
    import json

    from vgprscope.compile.results import record_of
    from vgprscope.compile.task import RowInfo, Task
    from vgprscope.core.archs import get_arch
    from vgprscope.core.records import KernelIdentity, usage_to_dict
    from vgprscope.report.rows import verdict_cell, verdict_headers

    config = LaunchConfig(args=(), constexprs=(), options=(("num_warps", 4),))
    row = RowInfo("inductor", "k", config, KernelIdentity("m", "k", "m.py", ""), "capture", extras=((THRESHOLD_EXTRA, 16),),
                  judge=SpillThreshold(16))
    made = record_of(Task(None, get_arch("sm_90"), row), {"usage": usage_to_dict(_nvidia(80))}, "3.6.0", False, None)
    assert made.verdict == _row(_nvidia(80), 16).verdict and made.verdict is not None and not made.verdict.kept
    back = Record.from_dict(json.loads(json.dumps(made.as_dict())))
    assert back.verdict == made.verdict and verdict_headers([back]) == ["Inductor spill threshold"]
    assert verdict_cell("Inductor spill threshold")(back) == "skip: n_spills 20 > 16"
    assert spill_verdict(back) == spill_verdict(made) and spill_verdict(back).skipped
    failed = record_of(Task(None, get_arch("sm_90"), row), {"error": "boom"}, "3.6.0", False, None)
    assert failed.verdict is None and verdict_cell("Inductor spill threshold")(failed) == "-"


def test_a_diff_names_the_configs_two_releases_put_on_opposite_sides_of_the_threshold():
    from vgprscope.sources.inductor import threshold_crossings

    before = {"a": _row(_nvidia(60), 16), "b": _row(_nvidia(100), 16), "c": _row(_nvidia(0), 16)}
    after = {"a": _row(_nvidia(72), 16), "b": _row(_nvidia(100), 16), "c": _row(_nvidia(0), 16)}
    crossings = threshold_crossings(before, after)
    assert [c.key for c in crossings] == ["a"]
    assert crossings[0].text() == "a: kept: n_spills 15 <= 16 -> skip: n_spills 18 > 16"


@pytest.fixture(scope="module")
def release36():
    """Triton 3.6.0 as a toolchain (installed once into $VGPRSCOPE_TOOLCHAIN_DIR); skipped where it cannot be
    had (no network)."""
    from vgprscope.compile import toolchains

    if triton_version() == OLD:
        pytest.skip(f"the installed Triton is {OLD}: the fixture is not another release's cache here")
    try:
        return toolchains.release(OLD)
    except toolchains.ToolchainError as exc:
        pytest.skip(f"Triton {OLD} cannot be installed as a toolchain here: {exc}")


def test_inductor_cache_fixture_is_what_the_h100_wrote(caches):
    modules = sorted(p.name for p in (caches / "inductor").glob("*/*.py"))
    assert len(modules) == 8  # 7 kernel modules and the graph's output code (no kernel of its own)
    assert len(list((caches / "tc-inductor").glob("*/*.cubin"))) == 12
    assert Path(caches / "inductor").is_dir()


def test_a_generated_module_that_cannot_be_read_as_data_is_a_row_with_why(caches, tmp_path):
    """The decorator's arguments are read as literals, never run: one computed at import (a call) makes the
    kernel a row saying so; scan's rows keep it beside the kernels that compile."""
    src = next((caches / "inductor").glob("qg/*.py"))
    (tmp_path / "qg").mkdir()
    text = src.read_text().replace("size_hints={'x': 1048576}", "size_hints=hints_of(1048576)")
    (tmp_path / "qg" / src.name).write_text(text)
    cache = inductor_capture(tmp_path)
    assert len(cache.capture.launches) == 0
    [(kernel, why)] = cache.unread
    assert kernel.name == "triton_poi_fused__unsafe_view_add_6"
    assert "@triton_heuristics.pointwise arguments are not literals" in why
    [row] = scan(tmp_path).records
    assert row.kernel == kernel.name and row.arch == "sm_90" and row.status == why and row.source == "inductor-cache"
