"""diff names the hot loop whose scratch traffic per trip changed between two sides: its source lines, bytes
and scratch instructions per trip, the matrix share, in the table, markdown, JSON and the summary line
(entries built from the committed gfx942 listing, the after side with the loop's figures moved)."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.gate.test_loop_gate import _amd_raw  # type: ignore[import-not-found]
from vgprscope.analysis.diff.core import SidesDiff
from vgprscope.backends import HIP
from vgprscope.compile.toolchains import Toolchain
from vgprscope.core.records import LaunchConfig
from vgprscope.gate.baseline import Baseline, Entry
from vgprscope.gate.diff import judge


def _entry(slot: str, **fields) -> Entry:
    u = replace(HIP.parse(_amd_raw()), **fields)
    config = LaunchConfig(args=(), constexprs=(("SLOT", slot),), options=(("num_warps", 8),))
    occ = {"unit": "waves/SIMD", "value": 1, "limits": {"vgpr": 1}, "limiters": ["vgpr"]}
    return Entry("baseline", "attn_fwd", "gfx942", slot, config, config.key(), "ok", u, occ)


def _result() -> SidesDiff:
    before = [_entry("grows", loop_spill_bytes=0, loop_scratch_insts=0, loop_matrix_share=13), _entry("same"),
              _entry("unknown", loop_spill_bytes=None)]
    after = [_entry("grows", loop_lines="_fa_common.py:67-172"), _entry("same"), _entry("unknown")]
    gate = judge(Baseline.of(before, "3.7.1"), after, current_triton="3.8.0")
    return SidesDiff(Toolchain("release", "3.7.1"), Toolchain("release", "3.8.0"), ("gfx942",), gate, (), (), ())


def test_diff_names_the_hot_loop_whose_scratch_traffic_grew():
    result = _result()
    (change,) = result.loops  # the unchanged entry and the one read on one side only are not named
    assert (change.key, change.spill_before, change.spill_after, change.insts_after) == (
        "baseline/attn_fwd/gfx942/grows", 0, 548, 58)
    assert change.text() == ("baseline/attn_fwd/gfx942/grows: hot loop at _fa_common.py:67-172 (was "
                             "_fa_common.py:67-171): scratch traffic per trip 0 -> 548 B (0 -> 58 instructions), "
                             "matrix share 13 -> 12 %")
    assert result.summary().endswith("; the hot loop's scratch traffic per trip grows in 1 entry (0 -> 548 B)")
    fails = {d.key: [m.metric for m in d.metrics if m.fails] for d in result.gate.failures}
    assert fails == {"baseline/attn_fwd/gfx942/grows": ["loop_spill_bytes"]}  # the share is shown, not gated


def test_diff_views_carry_the_loop_changes():
    from vgprscope.analysis.diff.view import to_json, to_markdown, to_table
    from vgprscope.report.machine import compile_only

    result, machine = _result(), compile_only()
    text = to_table(result, machine, width=100)
    assert "hot loop at _fa_common.py:67-172" in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 100
    md = to_markdown(result, machine)
    assert "### Hot loops whose scratch traffic per trip changed" in md and "| 0 | 548 |" in md
    (doc,) = json.loads(to_json(result, machine))["loop_changes"]
    assert (doc["spill_bytes_before"], doc["spill_bytes_after"], doc["lines_after"]) == (0, 548,
                                                                                        "_fa_common.py:67-172")


def test_the_loop_diff_report_names_each_cases_hot_loop(monkeypatch, tmp_path):
    """`python -m tools.reports loop-diff` (reports/loop-diff-gfx942.md): each case's command, the loop the diff names,
    and every compared kernel's hot loop on both sides (the diff itself stubbed with the fixture's entries)."""
    import vgprscope.library.api as api
    from tools.reports.loop_diff import CASES, loop_diff_report
    from vgprscope.analysis.diff.result import DiffResult as LibraryDiff

    calls = []
    monkeypatch.setattr(api, "diff", lambda **kw: calls.append(kw) or LibraryDiff.of(_result()))
    (path,) = loop_diff_report(tmp_path)
    text = path.read_text()
    assert [c["triton"] for c in calls] == [["3.7.1", "3.8.0"]] * len(CASES)
    assert "`vgprscope diff --triton 3.7.1 --triton 3.8.0 --arch gfx942 --variant baseline --variant remat-q" in text
    assert "- baseline/attn_fwd/gfx942/grows: hot loop at _fa_common.py:67-172" in text
    assert "| baseline / attn_fwd | `_fa_common.py:67-172` | 0 | 548 | 0 | 58 | 13 | 12 |" in text
    assert "| baseline / attn_fwd | `_fa_common.py:67-171` | ? | 548 |" in text  # unknown before: "?", never 0
