"""frontier shows the gate loop's one trip at each occupancy level: its matrix instructions' share and its
scratch traffic, in the table, the summary's price, JSON and the DataFrame (synthetic compiles: the loop's
figures are set per level, so every expected cell is exact)."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.analysis.frontier.test_frontier import CFG, _access, _amd_record  # type: ignore[import-not-found]
from vgprscope.analysis.frontier.core import run_frontier
from vgprscope.analysis.frontier.summary import summary


def _with_loop(task) -> object:
    """The synthetic kernel of test_frontier (100 VGPRs, 32 KB LDS) whose loop holds 64 matrix instructions
    in a body of 500 plus 4 B of scratch traffic per VGPR spilled (its uncapped compile: the arch's whole
    file, no spill)."""
    rec = _amd_record(task, need=200, lds=0)
    u = rec.usage
    moved = 4 * u.vgpr_spill
    body = 500 + moved // 4
    share = (200 * 64 + body) // (2 * body)
    return replace(rec, usage=replace(u, loop_matrix_share=share, loop_spill_bytes=moved,
                                      loop_scratch_insts=moved // 4, loop_lines="k.py:10-20"))


def _frontier():
    [kf] = run_frontier([("base", "gfx942", CFG)], lambda ts: [_with_loop(t) for t in ts], _access())
    return kf


def test_each_level_has_its_loop_mix_in_json_and_the_dataframe():
    from vgprscope.analysis.frontier.view import csv_rows

    kf = _frontier()
    by_level = {lv["level"]: lv for lv in json.loads(json.dumps(kf.as_dict()))["levels"]}
    # level 3: a budget of 168 VGPRs, 32 spilled: 128 B and 32 scratch instructions per trip, 64 of 532 matrix
    assert {k: by_level[3][k] for k in ("loop_matrix_share", "loop_spill_bytes", "loop_scratch_insts")} == {
        "loop_matrix_share": 12, "loop_spill_bytes": 128, "loop_scratch_insts": 32}
    assert (by_level[2]["loop_matrix_share"], by_level[2]["loop_spill_bytes"]) == (13, 0)
    rows = {r["level"]: r for r in csv_rows([kf]) if not r["uncapped"]}
    assert (rows[4]["loop_matrix_share"], rows[4]["loop_spill_bytes"]) == (11, 4 * 72)


def test_the_table_and_the_summary_say_what_the_next_level_costs_in_the_loop():
    from vgprscope.analysis.frontier.view import tables_md, tables_text
    from vgprscope.report.machine import compile_only

    kf = _frontier()
    assert summary(kf).startswith("spill-free to 2 waves/SIMD (256 VGPRs); 3 waves/SIMD: 32 spills")
    assert "128 B of scratch traffic per trip of the hot loop (12 % matrix instructions)" in summary(kf)
    machine = compile_only()
    text = tables_text([kf], machine, width=100)
    assert max(len(line) for line in text.splitlines()) <= 100
    header = next(line for line in text.splitlines() if "budget" in line)
    assert "hot loop" in header
    cells = {line.split()[0]: line for line in text.splitlines() if line.split()[1:2] in (["168"], ["256"])}
    assert "12% 128B" in cells["3"] and "13% 0B" in cells["2"]
    md = tables_md([kf], machine)
    assert "loop matrix %" in md and "loop scratch B/trip" in md
