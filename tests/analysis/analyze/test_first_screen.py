"""The first screen (issue 35 item 1): ``vgprscope analyze``, the design card's ``analyze --block-m 128`` and
``compare --strategies all``. A variant written for other archs (ws-regalloc: sm_90), or a value outside a
variant's range (small-tiles at block_m 128), is a one-line note under the table, never a failed row and never
a Python exception's name; with the default archs such a variant is also compiled on the archs it is written
for (ws-regalloc on sm_90, and compare's reference beside it there); analyze keeps its ``limiter: next``
column at 100 columns."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

_register()


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def _no_failed_rows(text: str) -> None:
    assert "✗ [" not in text and "ValueError" not in text and "Error:" not in text, text
    assert max(len(line) for line in text.splitlines()) <= 100, text


def test_analyze_block_m_128_says_the_refusals_under_the_table():
    res = run("analyze", "--variant", "baseline,small-tiles,ws-regalloc", "--block-m", "128")
    assert res.exit_code == 0, res.output
    _no_failed_rows(res.stdout)
    notes = [ln for ln in res.stdout.splitlines() if ln.startswith("not compiled: ")]
    assert len(notes) == 2, res.stdout
    assert notes[0].startswith("not compiled: small-tiles on gfx90a, gfx942, sm_80: block_m 128 is not a small tile")
    assert notes[1] == "not compiled: ws-regalloc on gfx90a, gfx942, sm_80: written for sm_90"
    assert "or 64 (larger is baseline)" in res.stdout
    header = next(ln for ln in res.stdout.splitlines() if ln.startswith("variant "))
    assert "limiter: next" in header  # the header line keeps the column
    # ws-regalloc on the arch it is written for, by default; no other variant goes there
    rows = [ln.split() for ln in res.stdout.splitlines() if " sm_90 " in ln]
    assert len(rows) == 1 and rows[0][0] == "sm_90", res.stdout
    assert "ws-regalloc  pingpong=1" in res.stdout  # its own knob on its name's line, not in the config column
    assert "did not compile" not in res.stderr


def test_analyze_json_keeps_the_refusals_apart():
    res = run("analyze", "--variant", "small-tiles,ws-regalloc", "--block-m", "128", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [(r["variant"], r["arch"], r["status"]) for r in doc["rows"]] == [("ws-regalloc", "sm_90", "ok")]
    assert {(r["variant"], r["arch"]) for r in doc["refused"]} == {
        (v, a) for v in ("small-tiles", "ws-regalloc") for a in ("gfx90a", "gfx942", "sm_80")}
    assert all("Error" not in r["reason"] for r in doc["refused"])


def test_named_archs_add_none_and_a_refusal_alone_is_exit_1():
    res = run("analyze", "--variant", "ws-regalloc", "--arch", "gfx942", "--format", "json")
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert doc["rows"] == [] and [r["arch"] for r in doc["refused"]] == ["gfx942"]
    assert res.stderr.strip() == "vgprscope: error: no row compiled: ws-regalloc on gfx942: written for sm_90"


def test_compare_puts_the_reference_beside_a_variant_on_its_own_arch():
    res = run("compare", "--strategies", "baseline,ws-regalloc")
    assert res.exit_code == 0, res.output
    _no_failed_rows(res.stdout)
    assert "not compiled: ws-regalloc on gfx90a, gfx942, sm_80: written for sm_90" in res.stdout
    sm90 = res.stdout.split("vgprscope compare: sm_90", 1)[1]
    assert "baseline" in sm90 and "ws-regalloc" in sm90 and "(-87 ✓)" not in res.stdout.split("sm_90", 1)[0]
    doc = json.loads(run("compare", "--strategies", "baseline,ws-regalloc", "--format", "json").stdout)
    assert list(doc["archs"]) == ["gfx90a", "gfx942", "sm_80", "sm_90"]
    assert [ln["variant"] for ln in doc["archs"]["sm_90"]] == ["baseline", "ws-regalloc"]
    assert all(ln["status"] == "ok" for lines in doc["archs"].values() for ln in lines)


def test_compare_footnotes_only_for_markers_shown():
    """A footnote whose marker stood only in a column left out at 100 columns (an earlier table's
    ``limiter: next``) is not printed: every footnote under the tables has its marker in one of them."""
    import re

    res = run("compare", "--strategies", "baseline,remat-q,two-phase,row-stream", "--arch", "gfx90a", "--arch",
              "sm_90")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    marks = [m.group(0) for ln in lines if (m := re.match(r"\[\d+\]", ln))]
    body = "\n".join(ln for ln in lines if not re.match(r"\[\d+\]", ln))
    assert all(m in body for m in marks), res.stdout
    assert marks == [f"[{i}]" for i in range(1, len(marks) + 1)]
    assert "not shown at 100 columns: limiter: next" in res.stdout.split("vgprscope compare: sm_90")[0]


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["analyze"], ["analyze", "--block-m", "128"], ["compare", "--strategies", "all"]])
def test_the_first_screen_whole(argv):
    """Every bundled variant on the default archs, as a new user types it: no failed row, every line within
    100 columns, analyze's ``limiter: next`` kept."""
    res = run(*argv)
    assert res.exit_code == 0, res.output
    _no_failed_rows(res.stdout)
    assert "not compiled: ws-regalloc on gfx90a, gfx942, sm_80: written for sm_90" in res.stdout
    assert "not shown at 100 columns" not in res.stdout.split("vgprscope compare: sm_80")[0] or argv[0] == "compare"
    if argv[0] == "analyze":
        assert "limiter: next" in res.stdout and "not shown at 100 columns" not in res.stdout
