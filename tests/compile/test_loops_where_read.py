"""The loop figures are read where a view reads them, and whoever reads them gets the same numbers.

A compile for a view that shows no hot-loop share or lines (analyze's and compare's table: ``loops=False``) runs
no disassembler for a kernel without local memory: its loops' spill figures are 0, known from its resource usage,
its share and lines left unread (the cached result says ``loops_unread``). A later reader (``check``, JSON,
explain) fills them from the raw outputs the cache kept, once (an NVIDIA cubin's SASS is stored back beside it),
and gets what a compile that read everything gets, and what the committed baseline holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vgprscope
from vgprscope.compile.cache import CompileCache

ROOT = Path(__file__).resolve().parents[2]


def _entries(cache: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in cache.glob("*/*.json")}


@pytest.fixture()
def nvdisasm_runs(monkeypatch) -> list[int]:
    """Counts nvdisasm runs in this process (the parent's: where an unread entry's SASS is read)."""
    import vgprscope.backends.cuda as cuda

    runs: list[int] = []
    real = cuda.nvdisasm

    def counted(cubin: bytes) -> str:
        runs.append(len(cubin))
        return real(cubin)

    monkeypatch.setattr(cuda, "nvdisasm", counted)
    return runs


def test_a_table_leaves_the_hot_loop_unread_and_a_later_reader_gets_the_committed_numbers(tmp_path, nvdisasm_runs):
    """baseline on sm_80 and gfx942 at its defaults: compiled for a table (loops=False), then checked against
    the committed baseline: every figure the baseline holds is the same, the loop figures included, those of
    the table's entries read from the cache (not compiled again) with one disassembly per NVIDIA entry; a
    third run reads them from the entries, disassembling nothing, and equals a compile that read everything."""
    cache = tmp_path / "cache"
    table = vgprscope.analyze(variant=["baseline"], arch=["sm_80", "gfx942"], cache=cache, jobs=1, loops=False)
    assert table.records and all(r.ok for r in table.records)
    unread = [r for r in table.records if r.usage.loop_matrix_share is None]
    assert unread, "a kernel without scratch has its share left unread for a table"
    for r in unread:
        assert (r.usage.loop_spill_bytes, r.usage.loop_spill_bytes_max, r.usage.loop_spill_bytes_sum) == (0, 0, 0)
    assert sum(bool(e["result"].get("loops_unread")) for e in _entries(cache).values()) == len(unread)
    nvidia_unread = sum(r.arch == "sm_80" for r in unread)

    totals: list[int] = []
    result = vgprscope.check(baseline=ROOT / "vgprscope-baseline.json", variant=["baseline"],
                             arch=["sm_80", "gfx942"], cache=cache, jobs=1, config=ROOT / "pyproject.toml",
                             allow_missing=True, on_progress=lambda done, total: totals.append(total))
    compared = [e for e in result.result.entries if e.state.name == "COMPARED"]
    assert compared and all(e.change.name == "SAME" for e in compared), [
        (e.key, [(m.metric, m.baseline, m.current) for m in e.changed_metrics]) for e in compared]
    # the table's entries are read, not compiled again: only the gate's other slots (decode) compile
    assert set(totals) == {len(result.entries) - len(table.records)}
    assert len(nvdisasm_runs) == nvidia_unread
    assert not any(e["result"].get("loops_unread") for e in _entries(cache).values())

    nvdisasm_runs.clear()
    again = vgprscope.analyze(variant=["baseline"], arch=["sm_80", "gfx942"], cache=cache, jobs=1)
    assert nvdisasm_runs == [] and all(r.cached for r in again.records)
    fresh = vgprscope.analyze(variant=["baseline"], arch=["sm_80", "gfx942"], cache=tmp_path / "fresh", jobs=1)
    assert [r.usage for r in again.records] == [r.usage for r in fresh.records]
    assert [r.usage for r in table.records] != [r.usage for r in fresh.records]  # the table's were unread


def test_a_kernel_with_local_memory_has_every_loop_figure_even_for_a_table(tmp_path):
    """maxnreg 64 makes the sm_80 baseline spill to local memory: its loops are read at the compile (the
    worker's nvdisasm), every figure, whatever the view."""
    cache = CompileCache(tmp_path / "cache")
    (rec,) = vgprscope.analyze(variant=["baseline"], arch=["sm_80"], maxnreg=[64], cache=cache.directory, jobs=1,
                               loops=False).records
    assert rec.ok and rec.usage.stack_bytes > 0
    assert rec.usage.loop_matrix_share is not None and rec.usage.loop_spill_bytes is not None
    assert not any(e["result"].get("loops_unread") for e in _entries(cache.directory).values())
