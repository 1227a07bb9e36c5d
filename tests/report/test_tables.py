"""Every table's default view fits the terminal it is printed in (here 100 and 160 columns): no line over
the width, no row folded into more than two lines; --wide shows every column; deltas are the value's
own signed change with the verdict marked apart from the sign, the same in compare and check.

Data: the committed register baseline and gate fixtures (real compiler output), records built from real
usage numbers through the occupancy rules, and one small real compile per command (the compile cache is
per test session).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.backends import occupancy_of
from vgprscope.cli.app import _register, app
from vgprscope.core.archs import ARCHS, get_arch
from vgprscope.core.records import AmdUsage, Occupancy, Record
from vgprscope.flashattn.config import DEFAULT_SHAPE, AttentionConfig
from vgprscope.gate.baseline import load_baseline
from vgprscope.gate.diff import Change
from vgprscope.gate.diff import judge as judge_entries
from vgprscope.gate.rules import RuleSet, parse_rule
from vgprscope.report.deltas import Delta, Verdict, judge
from vgprscope.report.formats import Footnotes, drop_order, new_table, output_width, render_table
from vgprscope.report.machine import compile_only


def compare(records):
    """The compare lines of records, with the bundled variants' traffic model on theirs (as the CLI's)."""
    from vgprscope.analysis.compare.core import compare as lines
    from vgprscope.flashattn.traffic import line_traffic

    return lines(records, line_traffic())

_register()

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures"
WIDTHS = (100, 160)
SMALL = ["--head-dim", "64", "--block-m", "64", "--block-n", "32"]  # the small config other CLI tests compile


# ---- reading a rendered table as a person would ----------------------------------------------------

def _tables(text: str):
    """(header line, data lines) of every table in ``text``: the lines after a header rule up to a
    footnote, a legend line or the next table's title (prose: words one space apart)."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln and set(ln) == {"─"}:
            body = []
            for row in lines[i + 1:]:
                prose = not row.startswith(" ") and len(row.split()) >= 4 and "  " not in row
                if row.startswith("[") or prose:
                    break
                body.append(row)
            yield lines[i - 1], body


def _column(header: str, name: str) -> int:
    m = re.search(rf"(?:^|(?<=\s)){re.escape(name)}(?=\s|$)", header)
    assert m, f"no column {name!r} in {header!r}"
    return m.start()


def row_heights(text: str, key: str, titles: set[str] = frozenset()) -> list[int]:
    """Lines each record takes: a record starts where the ``key`` column (never folded, never blank on a
    record) has text; a title row (a group's name alone) and blank lines end it."""
    heights: list[int] = []
    for header, body in _tables(text):
        at = _column(header, key)
        current = None
        for ln in body:
            if not ln.strip() or ln.strip() in titles:
                current = None
                continue
            if ln[at:at + len(key)].strip():
                heights.append(1)
                current = len(heights) - 1
            else:
                assert current is not None, f"a line that belongs to no record: {ln!r}"
                heights[current] += 1
    return heights


def assert_fits(text: str, width: int, key: str, records: int, titles: set[str] = frozenset()) -> None:
    too_long = [ln for ln in text.splitlines() if len(ln) > width]
    assert not too_long, f"{len(too_long)} lines over {width} columns, e.g. {too_long[0]!r}"
    heights = row_heights(text, key, titles)
    assert len(heights) == records, (len(heights), records, text)
    assert max(heights) <= 2, text


def run(monkeypatch, width: int, *args: str):
    monkeypatch.setenv("COLUMNS", str(width))
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code in (0, 1), res.output
    return res


# ---- records with real numbers --------------------------------------------------------------------

def committed_records() -> list[Record]:
    """Every compiled entry of the committed register baseline (8 variants, 3 archs; ws-regalloc's entries
    there say why it cannot target them; ws-regalloc on sm_90) as the record analyze prints."""
    base = load_baseline(ROOT / "vgprscope-baseline.json")
    return [Record(variant=e.variant, kernel=e.kernel, arch=e.arch, config=e.config, status=e.status,
                   usage=e.usage, occupancy=Occupancy.from_dict(e.occupancy)) for e in base.entries.values()
            if e.usage is not None]


def amd(variant: str, arch_vgpr: int, agpr: int, lds: int = 16384, kernel: str = "attn_fwd",
        spills: int = 0) -> Record:
    total = (arch_vgpr + 3) // 4 * 4 + agpr if agpr else arch_vgpr  # rule 1 of docs/occupancy-rules.md
    usage = AmdUsage(arch_vgpr=arch_vgpr, agpr=agpr, vgpr_total=total, sgpr=60, vgpr_spill=spills, sgpr_spill=0,
                     scratch_bytes=4 * spills, lds_static=0, lds_dynamic=lds, spill_stores=spills,
                     spill_loads=spills, spill_insts_in_loop=0, llvm_occupancy=None, max_flat_workgroup_size=256,
                     code_bytes=None)
    cfg = AttentionConfig(block_m=128, block_n=64, head_dim=128)
    return Record(variant=variant, kernel=kernel, arch="gfx942", config=cfg, status="ok", usage=usage,
                  occupancy=occupancy_of(usage, get_arch("gfx942"), cfg.num_warps))


# ---- the shared pieces ----------------------------------------------------------------------------

def test_output_width_is_columns_else_100_in_a_pipe(monkeypatch):
    monkeypatch.setenv("COLUMNS", "123")
    assert output_width() == 123
    monkeypatch.delenv("COLUMNS")
    assert output_width() == 100  # pytest's stdout is not a terminal


def test_a_table_for_output_file_is_laid_out_as_for_a_pipe(monkeypatch):
    import io
    import sys

    from vgprscope.report.formats import rendering_to_file

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", Terminal())
    table = new_table()
    table.add_column("a")
    table.add_row("x")
    assert "\x1b[" in render_table(table)  # a terminal gets colour
    with rendering_to_file(True):  # what --output FILE sets around a command
        assert output_width() == 100 and "\x1b[" not in render_table(table)


def test_render_table_folds_to_two_lines_and_footnotes():
    notes = Footnotes()
    table = new_table("t")
    table.add_column("name", no_wrap=True)
    table.add_column("words", no_wrap=False)
    for i in range(3):
        table.add_row(f"row{i}", " ".join(["word"] * 30) + f" {notes.ref('the same note')}")
    text = render_table(table, footnotes=notes, notes=["legend " * 30], width=100)
    assert all(len(ln) <= 100 for ln in text.splitlines())
    assert row_heights(text, "name") == [2, 2, 2]
    assert text.count("[1] the same note") == 1 and "[2]" not in text
    wide = render_table(table, wide=True, width=100)
    assert row_heights(wide, "name") == [1, 1, 1]


def test_a_table_that_cannot_fit_folds_values_instead_of_cropping_them():
    table = new_table()
    for i in range(12):
        table.add_column(f"c{i}", no_wrap=True)
    table.add_row(*[f"value-{i:02d}-abc" for i in range(12)])
    text = render_table(table, width=100)
    assert all(len(ln) <= 100 for ln in text.splitlines())
    shown = sum(1 for ch in text if not ch.isspace() and ch != "─")
    assert "…" not in text and shown == sum(len(f"c{i}") + len(f"value-{i:02d}-abc") for i in range(12))


@pytest.mark.parametrize("value, ref, higher_is_better, text, verdict", [
    (2, 1, True, "+1 ✓", Verdict.BETTER),  # occupancy 1 -> 2
    (242, 274, False, "-32 ✓", Verdict.BETTER),  # VGPRs 274 -> 242
    (277, 274, False, "+3 ✗", Verdict.WORSE),
    (1, 5, True, "-4 ✗", Verdict.WORSE),
    (274, 274, False, "=", Verdict.SAME),
    (None, 274, False, "x", Verdict.NOT_COMPARABLE),
])
def test_a_delta_is_the_signed_change_with_its_verdict_apart(value, ref, higher_is_better, text, verdict):
    d = judge(value, ref, higher_is_better)
    assert (d.text(), d.verdict) == (text, verdict)


def test_config_words_every_row_shares_are_said_once():
    from vgprscope.report.labels import common_config

    assert common_config(["128x64 d128 fp16 w4 s1", "64x64 d128 fp16 w4 s1 causal"]) == (
        "d128 fp16 w4 s1", ["128x64", "64x64 causal"])
    # a captured launch's label: "cfg" names the value after it and stays with it
    assert common_config(["fp32 BLOCK_SIZE=1024 w4 s3 cfg 2/18", "fp32 BLOCK_SIZE=512 w4 s3 cfg 3/18"]) == (
        "fp32 w4 s3", ["BLOCK_SIZE=1024 cfg 2/18", "BLOCK_SIZE=512 cfg 3/18"])


# ---- analyze --------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_analyze_of_the_committed_set_fits(width):
    from vgprscope.analysis.analyze.view import table_text

    records = committed_records()
    text = table_text(records, compile_only(), title="vgprscope analyze", width=width)
    # a variant's name line, with the knob all its rows share (remat-q  block_dk=32)
    titles = {ln.strip() for ln in text.splitlines() for r in records if ln.startswith(f"{r.variant}  ")
              and "=" in ln} | {r.variant for r in records}
    assert_fits(text, width, "arch", len(records), titles)
    # the dense forms: 264 (256v+8a), 1 w/SIMD 12.5%, vgpr: -8 -> 2
    assert re.search(r"\b\d+ \(\d+v\+\d+a\)", text) and re.search(r"\b\d w/SIMD \d+(\.\d)?%", text)
    assert re.search(r"\bvgpr: -\d+ -> \d\b", text) and re.search(r"\b\d blk/SM", text)


def test_analyze_wide_has_every_column_one_line_a_row():
    from vgprscope.analysis.analyze.view import table_text
    from vgprscope.report.rows import COLUMNS

    records = committed_records()
    text = table_text(records, compile_only(), title="vgprscope analyze", wide=True, width=100)
    header = next(h for h, _ in _tables(text))
    assert all(h in header for h, _ in COLUMNS)
    assert row_heights(text, "arch") == [1] * len(records)


@pytest.mark.parametrize("width", WIDTHS)
def test_analyze_command_fits(monkeypatch, width):
    res = run(monkeypatch, width, "analyze", "--variant", "baseline,split-k", "--arch", "gfx942", "--arch", "sm_80",
              *SMALL)
    assert res.exit_code == 0
    assert_fits(res.stdout, width, "arch", 6, {"split-k"})
    assert res.stdout.startswith("compile-only (compiled here, no GPU: ")


def test_analyze_command_wide_shows_every_column(monkeypatch):
    from vgprscope.report.rows import COLUMNS

    res = run(monkeypatch, 100, "analyze", "--variant", "baseline", "--arch", "gfx942", *SMALL, "--wide")
    header = next(h for h, _ in _tables(res.stdout))
    assert [h for h, _ in COLUMNS if h not in header] == []


def test_a_failed_row_says_why_in_a_footnote():
    from vgprscope.analysis.analyze.view import table_text

    ok = amd("baseline", 256, 18)
    bad = Record(variant="remat-q", kernel="attn_fwd", arch="gfx942", config=ok.config,
                 status="needs 131072 B of LDS; gfx942 has 65536 B per workgroup")
    text = table_text([ok, bad], compile_only(), width=100)
    assert "✗ [1]" in text and "[1] needs 131072 B of LDS; gfx942 has 65536 B per workgroup" in text
    assert_fits(text, 100, "arch", 2)


def test_the_next_step_short_form_is_read_from_the_occupancy_model():
    from vgprscope.report.rows import fmt_next_short

    notes = Footnotes()
    assert fmt_next_short(amd("b", 256, 18), notes) == "vgpr: -18 -> 2"  # 274 VGPRs: shed 18 for 2 waves
    assert fmt_next_short(amd("b", 32, 0, lds=0), notes) == "max"
    assert not notes


# ---- compare --------------------------------------------------------------------------------------

def _compare_text(records, width=100, wide=False):
    from vgprscope.analysis.compare.view import tables_text

    return tables_text(compare(records), compile_only(), width=width, wide=wide)


def test_compare_deltas_are_signed_changes_marked_apart():
    records = [amd("baseline", 256, 18), amd("remat-q", 242, 0), amd("split-k", 256, 21, kernel="attn_fwd_split"),
               amd("split-k", 24, 0, kernel="attn_merge", lds=0)]
    text = _compare_text(records, width=160)
    line = {ln.split()[0]: ln for ln in text.splitlines() if ln.split() and ln.split()[0] in ("remat-q", "(variant)")}
    # VGPRs 274 -> 242: -32, better; occupancy 1 -> 2 waves/SIMD: +1, better; LDS unchanged: bare
    assert "242 (-32 ✓)" in line["remat-q"] and "2 (+1 ✓)" in line["remat-q"]
    assert "16384 (" not in line["remat-q"]
    # split-k's variant line: its most VGPRs, 277 (256 + 21 AGPRs), 3 more than baseline: worse
    assert "277 (+3 ✗)" in line["(variant)"]
    assert "✓ better, ✗ worse" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_of_the_committed_set_fits(width):
    # compare shows one grid point; the committed set has two (the prefill defaults and a GQA decode config)
    records = [r for r in committed_records() if tuple(r.config.shape) == DEFAULT_SHAPE]
    assert records and len(records) < len(committed_records())
    text = _compare_text(records, width=width)
    rows = len({(r.arch, r.variant) for r in records}) + sum(
        1 for r in records if sum(x.variant == r.variant and x.arch == r.arch for x in records) > 1)
    assert_fits(text, width, "variant", rows, {r.variant for r in records})
    # one table per arch: gfx90a, gfx942, sm_80 and sm_90 (ws-regalloc, on the arch it is written for)
    assert text.count("vgprscope compare: ") == len({r.arch for r in records}) == 4


def test_compare_wide_has_every_column():
    text = _compare_text(committed_records(), wide=True)
    header = next(h for h, _ in _tables(text))
    for h in ("variant", "kernel", "config", "VGPRs / regs (Δ)", "SGPRs", "spills (Δ)", "scratch / stack B (Δ)",
              "LDS / smem B (Δ)", "occupancy (Δ)", "occ %", "limiter", "next step", "read GB", "written GB",
              "GFLOP", "FLOP/B", "status"):
        assert h in header, h


def test_compare_json_and_markdown_keep_the_signed_deltas():
    import json

    from vgprscope.analysis.compare.view import tables_md, to_json

    per_arch = compare([amd("baseline", 256, 18), amd("remat-q", 242, 0)])
    doc = json.loads(to_json(per_arch, compile_only()))
    remat = next(ln for ln in doc["archs"]["gfx942"] if ln["variant"] == "remat-q")
    assert remat["deltas"]["regs"] == {"change": -32, "verdict": "better"}
    assert remat["deltas"]["occupancy"] == {"change": 1, "verdict": "better"}
    md = tables_md(per_arch, compile_only())
    assert "| 242 (-32 ✓) |" in md and "| 2 waves/SIMD (+1 ✓) |" in md


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_command_fits(monkeypatch, width):
    res = run(monkeypatch, width, "compare", "--strategies", "baseline,split-k", "--arch", "gfx942", *SMALL)
    assert res.exit_code == 0
    assert_fits(res.stdout, width, "variant", 4, {"split-k"})


# ---- check ----------------------------------------------------------------------------------------

def _gate_result(rules: RuleSet = RuleSet()):
    base = load_baseline(FIXTURES / "gate_baseline.json")
    return judge_entries(base, list(load_baseline(FIXTURES / "gate_current.json").entries.values()), rules)


@pytest.mark.parametrize("width", WIDTHS)
def test_check_fits_and_says_result_and_delta_apart(width):
    from vgprscope.gate import report as gate_report

    result = _gate_result(RuleSet(strict=True))  # strict: the 4 VGPRs within their step fail too
    text = gate_report.to_table(result, compile_only().fields(), "gate_baseline.json", width=width)
    assert_fits(text, width, "result", len(result.entries))
    rows_text = text.split("\n[1]")[0]  # the rows (the legend under the table may start a line with "new")
    results = [ln.split()[0] for ln in rows_text.splitlines() if ln.split() and ln.split()[0] in
               ("worse", "changed", "better", "same", "new", "missing", "n/c")]
    assert results == ["worse", "worse", "worse", "missing", "new", "better", "same"]  # missing fails: with the failures
    rows = {ln.split()[0] + " " + ln.split()[1]: ln for ln in text.splitlines() if len(ln.split()) > 1}
    assert "108 -> 112 (+4 ✗)" in rows["worse baseline"]  # vgpr_total grew by 4: the value's own sign
    assert "126 -> 120 (-6 ✓)" in rows["better baseline"]  # regs dropped by 6: better
    assert "4 -> 3 (-1 ✗)" in text  # occupancy dropped by 1: worse
    assert "vgpr_total 108 -> 112 (+4 ✗, allowed +0)" in text  # the whole story in a footnote
    assert "✓ better, ✗ worse" in text


def test_check_growth_within_the_rule_has_no_marker():
    from vgprscope.gate import report as gate_report

    result = _gate_result(RuleSet((parse_rule("vgpr_total:+4"),)))
    grown = next(d for d in result.entries if d.key.startswith("baseline/attn_fwd/gfx942/"))
    vgpr = next(m for m in grown.metrics if m.metric == "vgpr_total")
    assert (vgpr.change, grown.fails) == (Change.SAME, False)
    assert gate_report.metric_delta(vgpr) == Delta(4, Verdict.SAME)
    text = gate_report.to_table(result, ["compile-only"], "b", width=100)
    assert "108 -> 112 (+4)" in text and "vgpr_total 108 -> 112 (+4, within +4)" in text


def test_check_wide_and_markdown_keep_every_column():
    from vgprscope.gate import report as gate_report

    result = _gate_result(RuleSet(strict=True))
    wide = gate_report.to_table(result, ["compile-only"], "b", wide=True, width=100)
    header = next(h for h, _ in _tables(wide))
    assert all(h in header for h in gate_report.HEADERS)
    assert row_heights(wide, "result") == [1] * len(result.entries)
    md = gate_report.to_markdown(result, "compile-only", "b")
    slot = "block_m=64 block_n=32 head_dim=64 num_warps=4 num_stages=1"  # the fixtures' one request
    assert f"| worse | baseline | attn_fwd | gfx942 | {slot} | 64x32 d64 fp16 w4 s1 | 108 -> 112 (+4 ✗) | 4 |" in md
    # by default the 4 VGPRs keep 4 waves/SIMD: changed, no mark
    md = gate_report.to_markdown(_gate_result(), "compile-only", "b")
    assert f"| changed | baseline | attn_fwd | gfx942 | {slot} | 64x32 d64 fp16 w4 s1 | 108 -> 112 (+4) | 4 |" in md
    assert f"| better | baseline | attn_fwd | sm_80 | {slot} | 64x32 d64 fp16 w4 s1 | 126 -> 120 (-6 ✓) | 4 |" in md


@pytest.mark.parametrize("width", WIDTHS)
def test_check_command_fits_and_wide_shows_every_column(monkeypatch, tmp_path, width):
    import json

    from vgprscope.gate import report as gate_report

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    config = tmp_path / "vgprscope.toml"
    config.write_text('variants = ["baseline"]\narchs = ["gfx942", "sm_80"]\n'
                      'configs = [{block_m = 64, block_n = 32, head_dim = 64, num_warps = 4, num_stages = 1}]\n')
    assert run(monkeypatch, width, "baseline", "save", "--config", config).exit_code == 0
    path = tmp_path / "vgprscope-baseline.json"
    doc = json.loads(path.read_text())
    key = next(k for k in doc["entries"] if "/gfx942/" in k)
    doc["entries"][key]["usage"]["vgpr_total"] -= 4  # the compile now has 4 more than the baseline says
    path.write_text(json.dumps(doc))
    default = run(monkeypatch, width, "check", "--config", config)  # 4 VGPRs within the occupancy step
    assert default.exit_code == 0 and any(ln.startswith("changed") for ln in default.stdout.splitlines())
    res = run(monkeypatch, width, "check", "--config", config, "--strict")
    assert res.exit_code == 1
    assert_fits(res.stdout, width, "result", 2)
    worse = next(ln for ln in res.stdout.splitlines() if ln.startswith("worse"))
    now = doc["entries"][key]["usage"]["vgpr_total"] + 4
    assert f"{now - 4} -> {now}" in res.stdout and "(+4 ✗)" in res.stdout and "gfx942" in worse
    wide = run(monkeypatch, width, "check", "--config", config, "--wide", "--strict")
    header = next(h for h, _ in _tables(wide.stdout))
    assert all(h in header for h in gate_report.HEADERS) and row_heights(wide.stdout, "result") == [1, 1]


# ---- occupancy, archs, variants, bench ------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("args, key, rows", [
    (["archs"], "arch", len(ARCHS)),
    (["variants"], "name", 9),  # the bundled variants, ws-regalloc (issue 28) the ninth
    (["occupancy", "--arch", "gfx942", "--vgprs", "128", "--agprs", "64", "--lds", "32768", "--workgroup", "256",
      "--ladder"], "waves/SIMD", 8),
])
def test_info_tables_fit(monkeypatch, width, args, key, rows):
    res = run(monkeypatch, width, *args)
    assert res.exit_code == 0
    assert_fits(res.stdout, width, key, rows)


def test_occupancy_key_value_rows_fit(monkeypatch):
    res = run(monkeypatch, 100, "occupancy", "--arch", "sm_90", "--regs", "168", "--shared", "100000",
              "--threads", "256")
    assert all(len(ln) <= 100 for ln in res.stdout.splitlines())
    assert "headroom" in res.stdout and "shed 40 registers (-> 128) for 2 blocks/SM" in res.stdout


@pytest.mark.parametrize("args, headers", [
    (["archs"], ["vendor", "description", "wave", "max occupancy", "registers", "per wave/thread", "alloc granule",
                 "LDS/shared per CU/SM", "per workgroup/block", "LDS/shared granule", "max workgroups/blocks"]),
    (["variants"], ["name", "seed", "kernels", "strategy", "trades"]),
])
def test_info_tables_wide_show_every_column(monkeypatch, args, headers):
    res = run(monkeypatch, 100, *args, "--wide")
    text = res.stdout
    head = next(h for h, _ in _tables(text))
    assert [h for h in headers if h not in head] == []


def test_archs_help_names_the_rules_doc_that_exists():
    res = CliRunner().invoke(app, ["archs", "--help"], env={"COLUMNS": "200"})
    doc = re.search(r"docs/[\w.-]+\.md", res.output)
    assert doc and (ROOT / doc[0]).is_file()
    assert "vgprscope archs" in (ROOT / doc[0]).read_text()


def _bench_rows():
    from vgprscope.bench.cases import Case
    from vgprscope.bench.runner import BenchRow
    from vgprscope.bench.timing import summarize

    case = Case(4, 32, 4096, 4096, 128, False, "fp16")
    t = summarize([2.40, 2.41, 2.39, 2.42, 2.40])
    return [
        BenchRow(case=case, name="baseline", kind="variant", status="ok", config="128x128 d128 fp16 w8 s2", timing=t,
                 tflops=458.2, gbps=3691.0, max_abs_err=5.98e-05, regs="252", occupancy="1 blocks/SM", spills="0"),
        BenchRow(case=case, name="split-k-two-phase", kind="variant", status="ok", config="64x64 d128 fp16 w4 s3",
                 timing=t, tflops=425.7, gbps=6967.0, max_abs_err=5.98e-05, regs="176 / 104 / 40",
                 occupancy="2 blocks/SM / 4 blocks/SM / 8 blocks/SM", spills="0 / 0 / 0"),
        BenchRow(case=case, name="remat-q", kind="variant",
                 status="failed the correctness gate: 12 elements outside the tolerance; max |err| 0.5 at (0,1,2,3)",
                 config="128x64 d128 fp16 w8 s3 block_dk=32"),
        BenchRow(case=case, name="sdpa-flash", kind="anchor", status="ok", config="torch SDPA", timing=t, tflops=401.0),
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_bench_table_fits(monkeypatch, width):
    from vgprscope.bench.output import to_table

    monkeypatch.setenv("COLUMNS", str(width))
    text = to_table(_bench_rows(), compile_only())
    assert_fits(text, width, "name", 4)
    assert "✗ [1]" in text and ("2 / 4 / 8 blk/SM" in text or width < 160)
    assert "[1] failed the correctness gate: 12 elements outside the tolerance" in text


def test_bench_wide_shows_every_column(monkeypatch):
    from vgprscope.bench.output import COLUMNS, to_table

    monkeypatch.setenv("COLUMNS", "100")
    text = to_table(_bench_rows(), compile_only(), wide=True)
    header = next(h for h, _ in _tables(text))
    assert [h for h, _ in COLUMNS if h not in header] == []


# ---- long names, large captures, compare's notation, headers ----------------------------------------------

def fixture_records(name: str) -> list[Record]:
    import gzip
    import json

    with gzip.open(FIXTURES / name, "rt") as f:
        return [Record.from_dict(r) for r in json.load(f)["rows"]]


def _frontier(name: str, arch: str, cfg, need: int, kernel: str = "k"):
    """A frontier of synthetic compiles: the kernel needs ``need`` registers; each level's budget caps it and
    the rest spills (as ptxas and LLVM do), occupancy from the rules."""
    from dataclasses import replace

    from vgprscope.analysis.frontier.core import SpecAccess, occupancy_levels, run_frontier
    from vgprscope.core.records import LaunchConfig, NvidiaUsage

    def vary(t, knob, v):
        c = t[2]
        if isinstance(c, LaunchConfig):
            return t[0], t[1], replace(c, options=tuple(sorted({**dict(c.options), knob: v}.items())))
        return t[0], t[1], replace(c, **{knob: v})

    def record(t) -> Record:
        a = get_arch(t[1])
        c = t[2]
        if a.vendor == "amd":
            # the frontier's uncapped compile (no waves_per_eu): the whole register file is its budget
            budget = {p.setting: p.budget for p in occupancy_levels(a, c.num_warps)}.get(c.waves_per_eu,
                                                                                          a.max_vgprs_total)
            used, spill = min(need, budget), max(0, need - budget)
            u = AmdUsage(arch_vgpr=used, agpr=0, vgpr_total=used, sgpr=40, vgpr_spill=spill, sgpr_spill=0,
                         scratch_bytes=4 * spill, lds_static=0, lds_dynamic=32768, spill_stores=spill,
                         spill_loads=spill, spill_insts_in_loop=spill // 4, llvm_occupancy=None,
                         max_flat_workgroup_size=None, code_bytes=None)
            occ = occupancy_of(u, a, c.num_warps, waves_per_eu=c.waves_per_eu)
        else:
            cap = c.maxnreg or a.max_regs_per_thread  # no maxnreg: the frontier's uncapped compile
            spill = max(0, need - cap) * 8
            u = NvidiaUsage(regs=min(need, cap), stack_bytes=spill, spill_store_bytes=spill,
                            spill_load_bytes=spill, shared_static=0, shared_dynamic=16384, local_bytes=spill)
            occ = occupancy_of(u, a, c.num_warps)
        return Record(t[0], kernel, t[1], c, status="ok", usage=u, occupancy=occ)

    access = SpecAccess(arch=lambda t: get_arch(t[1]), num_warps=lambda t: t[2].num_warps, vary=vary,
                        key=lambda t: (t[0], t[1], t[2].key()), record_key=lambda r: (r.variant, r.arch, r.config.key()),
                        label=lambda t: t[0], config=lambda t: t[2])
    return run_frontier([(name, arch, cfg)], lambda ts: [record(t) for t in ts], access)


@pytest.mark.parametrize("width", WIDTHS)
def test_frontier_names_each_kernel_on_a_line_of_its_own(width):
    from dataclasses import replace

    from vgprscope.analysis.frontier.view import tables_text

    cfg = AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=4)
    kfs = [*_frontier("split-k-two-phase", "gfx942", cfg, 200, "attn_stats"),
           *_frontier("split-k-two-phase", "gfx942", cfg, 300, "attn_value"),
           *_frontier("split-k-two-phase", "sm_90", replace(cfg, num_warps=8), 100, "attn_stats")]
    text = tables_text(kfs, compile_only(), width=width)
    lines = [ln.rstrip() for ln in text.splitlines()]
    titles = {"split-k-two-phase attn_stats", "split-k-two-phase attn_value"}
    assert lines.count("split-k-two-phase attn_stats") == 2 and "split-k-two-phase attn_value" in lines
    assert_fits(text, width, "level", 8 + 8 + 7 + 6 + 3, titles)  # levels, bisection, each uncapped compile
    headers = [h for h, _ in _tables(text)]
    # AMD: waves_per_eu N is level N, so one column says both (the legend says so); NVIDIA's cap differs
    assert "wpe" not in headers[0].split() and "kernel" not in headers[0].split()
    assert "compiled as waves_per_eu = level" in text
    assert headers[1].split()[:2] == ["maxnreg", "level"]


def test_frontier_of_a_captured_kernel_puts_its_config_in_the_title():
    from vgprscope.analysis.frontier.view import tables_text
    from vgprscope.core.records import ArgSpec, LaunchConfig

    def launch(block: int) -> LaunchConfig:
        return LaunchConfig(args=(ArgSpec("X", "*bf16", (("hip", "DS"), ("cuda", "D"))), ArgSpec("n", "i32", (("hip", "D"), ("cuda", "D")))),
                            constexprs=(("BLOCK_SIZE", block), ("BT", 64), ("USE_G", True)),
                            options=(("num_stages", 3), ("num_warps", 4)))

    kfs = [*_frontier("fla.ops.common.chunk_delta_h", "gfx942", launch(64), 120,
                      "chunk_gated_delta_rule_fwd_kernel_h_blockdim64"),
           *_frontier("fla.ops.common.chunk_delta_h", "gfx942", launch(128), 150,
                      "chunk_gated_delta_rule_fwd_kernel_h_blockdim64")]
    text = tables_text(kfs, compile_only(), width=100)
    lines = text.splitlines()
    name = "fla.ops.common.chunk_delta_h chunk_gated_delta_rule_fwd_kernel_h_blockdim64"
    # the kernel's own config words on its title line, then its uncapped compile and its eight levels, one
    # line each, nothing between
    titles = [lines.index(f"{name}  BLOCK_SIZE=64"), lines.index(f"{name}  BLOCK_SIZE=128")]
    for i in titles:
        assert lines[i + 1].split()[0] == "-"
        assert [int(ln.split()[0]) for ln in lines[i + 2:i + 10]] == list(range(1, 9))
    assert "every config: bf16 w4 s3" in text and max(len(ln) for ln in lines) <= 100


@pytest.mark.parametrize("width", WIDTHS)
def test_analyze_of_a_large_third_party_capture_keeps_every_column(width):
    """fla-core's kernels as captured (675 rows): long module and kernel names must not squeeze the data
    columns; a column that does not fit is left out by its stated priority and named, never folded to
    nothing, and no word is cut."""
    from vgprscope.analysis.analyze.view import table_text

    records = fixture_records("fla_core_analyze.json.gz")
    assert len(records) == 675
    text = table_text(records, compile_only(), title="vgprscope analyze", width=width)
    titles = {f"{r.variant} {r.kernel}" for r in records}
    # every kernel named whole on a title line; every row one line, its arch first
    assert titles <= {ln.strip() for ln in text.splitlines()}
    assert_fits(text, width, "arch", len(records), titles)
    assert row_heights(text, "arch", titles) == [1] * len(records)
    header = next(h for h, _ in _tables(text))
    for name in ("arch", "config", "VGPRs / regs", "LDS B", "occupancy"):
        _column(header, name)
    body = [ln for _, rows in _tables(text) for ln in rows if ln.strip() and ln.strip() not in titles]
    archs = {r.arch for r in records}
    assert all(ln.split()[0] in archs for ln in body)
    lds = _column(header, "LDS B")
    assert all(ln[lds:lds + 5].strip().isdigit() for ln in body)  # right-justified bytes, the column whole
    if width == 100:
        assert "not shown at 100 columns: limiter: next (--wide shows every column)" in text
    else:
        _column(header, "limiter: next")


def test_a_column_left_out_takes_its_footnotes_along():
    notes = Footnotes()
    table = new_table()
    from vgprscope.report.formats import Column, add_columns

    cols = [Column("name", str), Column("note", str, drop=1), Column("words", str, wrap=True)]
    add_columns(table, cols)
    for i in range(4):
        table.add_row(f"row{i}", f"x {notes.ref('only in the note column')}", " ".join(["word"] * 40))
    text = render_table(table, footnotes=notes, width=60)
    assert "note" not in text.splitlines()[0] and "only in the note column" not in text
    assert "not shown at 60 columns: note" in text


# ---- compare on real compiles: a change stays with its value; parentheses mean a change only ---------------

def _bundled_compare(width: int = 100, wide: bool = False) -> str:
    return _compare_text(fixture_records("bundled_gfx942_sm_90_analyze.json.gz"), width=width, wide=wide)


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_keeps_a_value_and_its_change_on_one_line(width):
    from vgprscope.analysis.compare.view import line_deltas

    records = fixture_records("bundled_gfx942_sm_90_analyze.json.gz")
    text = _compare_text(records, width=width)
    for arch, lines in compare(records).items():
        deltas = line_deltas(lines)
        for ln in lines:
            for metric, value in (("regs", ln.regs), ("lds", ln.lds), ("spills", ln.spills)):
                d = deltas.get(ln.variant, {}).get(metric)
                if d is not None and d.change:
                    assert f"{value} ({d.text()})" in text, (arch, ln.variant, metric)
    # sm_90's shared memory shrinks by 147456 B: the cell and its change on one line, as on gfx942
    assert "82944 (-147456 ✓)" in text and "16384 (-16384 ✓)" in text
    # names are never cut: each variant and kernel whole at the start of a line
    names = {ln.split()[0] for ln in text.splitlines() if ln.strip()}
    assert {"split-k-two-phase", "attn_fwd_split", "row-stream"} <= names
    rows = sum(1 + (len(ln.kernels) if len(ln.kernels) > 1 else 0) for lines in compare(records).values()
               for ln in lines)
    assert_fits(text, width, "variant", rows, {r.variant for r in records})


def test_compare_parentheses_mean_a_change_only():
    text = _bundled_compare()
    wide = _bundled_compare(wide=True)
    from vgprscope.analysis.compare.view import tables_md

    md = tables_md(compare(fixture_records("bundled_gfx942_sm_90_analyze.json.gz")), compile_only())
    for out in (text, wide, md):
        assert not re.search(r"\(\d+v\+\d+a\)", out)  # no register split in parentheses
    # the split has its own column where every column is shown: split-k's attn_fwd_split is 256 + 21 AGPRs
    assert "arch VGPR+AGPR" in wide and "| 256+21 |" in md and re.search(r"\b277\s+256\+21\b", wide)


def test_compare_prints_its_reference_shape_and_defines_every_symbol():
    from vgprscope.flashattn.variants import load_variants

    models = [v.traffic for v in load_variants().values()]
    text = _bundled_compare()
    assert "GB moved: the traffic model's bytes read + written at B=4 H=32 Nq=4096 Nk=4096 (--shape)" in text
    # the formulas and their notation are a page: the wide view's, the default one points there
    assert "(the formulas: --wide)" in " ".join(text.split()) and "traffic notation:" not in text
    text = _bundled_compare(wide=True)
    flat = " ".join(text.split())
    notation = flat[flat.index("traffic notation:"):]
    used = {w for m in models for w in re.findall(r"\b(?:Tq|rho|Kb|Nq|Nk|A_s|m_s|l_s|[PSDeG])\b", m.formula)}
    assert {"Tq", "rho", "P", "S", "e", "Kb", "D", "Nq", "Nk"} <= used
    # and every name the evaluated formulas read
    used |= {n for m in models for x in (m.read, m.written, m.flops) for n in x.names}
    for sym in used:
        assert re.search(rf"(?:^|[;:,(] ?){re.escape(sym)}(?:,| =)", notation), sym
    # each formula once, with the variants whose formula it is
    assert "baseline, small-tiles, qk-fp16-acc: read = Nq*D*e + Tq * 2*rho*Nk*D*e" in flat
    assert not re.search(r"\d \[\d+\]", text)  # no footnote marker on the GB cells any more


def test_compare_of_a_capture_shows_only_what_applies():
    from vgprscope.analysis.compare.view import tables_md, tables_text

    records = fixture_records("fla_core_analyze.json.gz")
    per_arch = compare(records)
    text = tables_text(per_arch, compile_only(), width=100)
    header = next(h for h, _ in _tables(text))
    # no baseline line to change against, no traffic model for these kernels: no (Δ), no GB column
    assert "(Δ)" not in text and "GB" not in header and "±N" not in text and "traffic" not in text
    assert "fla.ops.common.chunk_delta_h chunk_gated_delta_rule_fwd_kernel_h_blockdim64" in text.splitlines()
    assert all(len(ln) <= 100 for ln in text.splitlines())
    md = tables_md(per_arch, compile_only())
    assert "(Δ)" not in md and "read GB" not in md and "baseline" not in md


# ---- the machine line -------------------------------------------------------------------------------------

def test_the_machine_line_says_what_compile_only_means():
    line = compile_only().line()
    assert line.startswith("compile-only (compiled here, no GPU: numbers from the compiler's output and the "
                           "occupancy rules) | Triton ")


def test_the_machine_line_names_the_users_repository_apart_from_vgprscope(tmp_path, monkeypatch):
    import subprocess

    import vgprscope
    from vgprscope.report.machine import git_sha

    project = tmp_path / "my-kernels"
    project.mkdir()
    env = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}
    for cmd in (["git", "init", "-q"], ["git", "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(cmd, cwd=project, check=True, env={**__import__("os").environ, **env})
    sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=project, capture_output=True, text=True,
                         check=True).stdout.strip()
    monkeypatch.delenv("VGPRSCOPE_GIT_SHA", raising=False)
    monkeypatch.chdir(project)
    m = compile_only()
    assert m.project == f"my-kernels {sha}" and m.git_sha != sha
    fields = m.fields()
    assert f"repo my-kernels {sha}" in fields
    own = git_sha()
    assert fields[-1] == f"vgprscope {vgprscope.__version__}" + (f" (git {own})" if own != "unknown" else "")
    monkeypatch.chdir(tmp_path)  # outside any repository: no repository to name
    assert not any(f.startswith("repo ") for f in compile_only().fields())


def test_compare_with_the_frontiers_columns_leaves_out_by_priority_and_cuts_no_name():
    """compare --frontier on sm_90 at 100 columns (measured: 142 columns wide): the columns asked for stay,
    limiter: next, the traffic and then shared memory are left out and named, and no name is cut."""
    from vgprscope.analysis.compare.view import tables_text

    records = fixture_records("bundled_gfx942_sm_90_analyze.json.gz")
    per_arch = compare(records)
    headers = ("spill-free occ", "next level")
    extra = {arch: {ln.variant: {"spill-free occ": "1 blk/SM", "next level": "2: 6648+6404 B"} for ln in lines}
             for arch, lines in per_arch.items()}
    text = tables_text(per_arch, compile_only(), headers, extra, width=100)
    assert "not shown at 100 columns: limiter: next, GB moved, smem B (Δ) (--wide shows every column)" in text
    sm90 = [h for h, _ in _tables(text)][1]
    assert "occ" in sm90.split() and "next level" in sm90 and "spills (Δ)" in sm90  # "spill-free" above "occ"
    names = {ln.split()[0] for ln in text.splitlines() if ln.strip()}
    assert {"split-k-two-phase", "attn_fwd_split", "attn_merge", "attn_stats", "attn_value"} <= names
    assert "82944 (-147456 ✓)" not in text and "177 (-78 ✓)" in text
    # the notes explain what is shown: no traffic formulas for a traffic column no table shows
    assert "traffic notation" not in text and "limiter: next =" not in text
    assert all(len(ln) <= 100 for ln in text.splitlines())


# ---- every default table at 100 columns, one line a row, no word split ------------------------------------

@pytest.fixture()
def folds(monkeypatch):
    """Per table rendered: the columns narrowed below their widest cell (each narrowed column folds a row,
    and a word only ever splits in a folded cell), and "too wide" where even that could not fit."""
    from vgprscope.report import formats

    seen: list[list[str]] = []
    original = formats.fit_columns

    def fit(table, console, width):
        dropped = original(table, console, width)
        natural, overhead = formats._measure(table, console)
        narrowed = [formats._plain(c.header) for c, n in zip(table.columns, natural) if c.width is not None
                    and c.width < n]
        if sum(c.width or n for c, n in zip(table.columns, natural)) + overhead > width:
            narrowed.append("too wide")
        seen.append(narrowed)
        return dropped

    monkeypatch.setattr(formats, "fit_columns", fit)
    return seen


def assert_one_line_a_row(text: str, folds: list[list[str]], width: int = 100) -> None:
    assert folds, "no table was rendered"
    assert all(f == [] for f in folds), folds
    too_long = [ln for ln in text.splitlines() if len(ln) > width]
    assert not too_long and "…" not in text, too_long


BUNDLED = "bundled_gfx942_sm_90_analyze.json.gz"  # every bundled variant compiled for gfx942 and sm_90
CAPTURED = "fla_core_analyze.json.gz"  # a capture of autotuned kernels (fla's, 48 and 6 configs)


@pytest.mark.parametrize("fixture", [BUNDLED, CAPTURED])
def test_analyze_and_scan_views_never_fold_at_100(folds, fixture):
    from vgprscope.analysis.analyze.view import SCAN, table_text

    records = fixture_records(fixture)
    assert_one_line_a_row(table_text(records, compile_only(), title="vgprscope analyze", width=100), folds)
    folds.clear()
    assert_one_line_a_row(table_text(records, compile_only(), title="vgprscope scan", width=100, naming=SCAN),
                          folds)


def test_analyze_of_the_committed_set_keeps_its_limiter_column_at_100(folds):
    """Two resources to shed is a footnote, not a folded cell: the table keeps every default column."""
    from vgprscope.analysis.analyze.view import table_text

    text = table_text(committed_records(), compile_only(), title="vgprscope analyze", width=100)
    assert_one_line_a_row(text, folds)
    assert "not shown" not in text and "limiter: next" in text
    assert re.search(r"\bvgpr,lds \[\d+\]", text) and re.search(r"\[\d+\] shed \d+ VGPRs \(-> \d+\) and", text)


@pytest.mark.parametrize("fixture", [BUNDLED, CAPTURED])
def test_compare_views_never_fold_at_100(folds, fixture):
    text = _compare_text(fixture_records(fixture), width=100)
    assert_one_line_a_row(text, folds)
    assert "traffic notation:" not in text  # the formulas' page is the wide view's


def _gate_sources() -> dict[str, list]:
    from vgprscope.gate.baseline import entries_of

    return {"committed baseline": [e for e in load_baseline(ROOT / "vgprscope-baseline.json").entries.values()
                                   if e.usage is not None],
            "bundled": entries_of(fixture_records(BUNDLED)), "captured": entries_of(fixture_records(CAPTURED))}


VERDICTS = ("same", "worse", "better", "changed", "new", "missing", "n/c")


@pytest.mark.parametrize("command", ["check", "diff"])
@pytest.mark.parametrize("source", ["committed baseline", "bundled", "captured"])
def test_check_and_diff_tables_keep_one_line_a_row_at_100(source, command):
    """The gate's table of the committed set, the bundled variants and a capture of autotuned kernels, all
    unchanged and with an entry new and one missing: each row one line (a variant's own knobs such as
    ``block_dk=32`` move to a footnote before a config cell folds), no line over 100 columns, no cut word."""
    from vgprscope.gate.baseline import Baseline
    from vgprscope.gate.report import to_table

    entries = _gate_sources()[source]
    for before, after in ((entries, entries), (entries[1:], entries[:-1])):
        result = judge_entries(Baseline.of(before, "3.9.0"), after, RuleSet())
        text = to_table(result, "machine", "b.json", width=100, command=command)
        lines = text.splitlines()
        rule = next(i for i, ln in enumerate(lines) if set(ln.strip()) == {"─"})
        end = next(i for i, ln in enumerate(lines) if i > rule and ln.startswith(("[", "slot ", "regs:", "vgprscope")))
        kernels = {f"{d.entry.variant} / {d.entry.kernel}" for d in result.entries}
        body = [ln for ln in lines[rule + 1:end] if ln.strip()]
        # each line a row or the title line of a kernel's rows: no cell went on to a second line
        assert all(ln.split()[0] in VERDICTS or ln in kernels for ln in body), "\n".join(body)
        assert sum(ln.split()[0] in VERDICTS for ln in body) == len(result.entries)
        assert max(len(ln) for ln in lines) <= 100 and "…" not in text


def test_a_variants_own_knob_is_a_footnote_only_where_the_config_would_fold():
    from vgprscope.gate.baseline import Baseline
    from vgprscope.gate.report import to_table

    entries = _gate_sources()["committed baseline"]
    result = judge_entries(Baseline.of(entries, "3.9.0"), entries, RuleSet())
    narrow, wide = (to_table(result, "machine", "b.json", width=w) for w in (100, 160))
    assert re.search(r"^same +remat-q / attn_fwd +gfx942 +a +128x64 w4 s1 \[(\d+)\] +242 ", narrow, re.M)
    ref = re.search(r"128x64 w4 s1 \[(\d+)\]", narrow)[1]
    assert f"[{ref}] block_dk=32" in narrow.splitlines()
    assert re.search(r"remat-q / attn_fwd +gfx942 +defaults +128x64 w4 s1 block_dk=32 +242 ", wide)
    # every entry unchanged: no column of dashes
    assert "details" not in narrow.split("\n", 3)[0] and not re.search(r" - *$", narrow, re.M)


def test_a_column_left_out_takes_its_legend_and_the_footnotes_are_numbered_again():
    """A footnote marked only in a column left out goes with it, and the notes left count 1, 2, ... (a number
    was skipped); the column's legend goes too."""
    notes = Footnotes()
    table = new_table()
    table.add_column("name", no_wrap=True)
    table.add_column("long", no_wrap=True)
    table.add_column("why", no_wrap=True)
    table.add_row("a", "x" * 60 + f" {notes.ref('only in the long column')}", f"ok {notes.ref('the row note')}")
    table.add_row("b", "y" * 60, f"ok {notes.ref('another note')}")
    drop_order(table, [table.columns[1]])
    text = render_table(table, footnotes=notes, notes=["long: what the long column says", "name: the name"],
                        width=50)
    assert "not shown at 50 columns: long" in text and "long: what" not in text and "name: the name" in text
    assert "[1] the row note" in text and "[2] another note" in text and "[3]" not in text
    assert "ok [1]" in text and "ok [2]" in text


def test_archs_never_folds_at_100(monkeypatch, folds):
    res = run(monkeypatch, 100, "archs")
    assert_one_line_a_row(res.stdout, folds)
    assert "RX 7900 (RDNA3), wave32" in res.stdout and "NVIDIA A100" not in res.stdout


def test_frontier_of_a_captured_kernel_has_no_dangling_cfg(folds):
    from vgprscope.analysis.frontier.view import tables_text
    from vgprscope.core.records import ArgSpec, AutotunePick, LaunchConfig

    def launch(block: int, i: int) -> LaunchConfig:
        return LaunchConfig(args=(ArgSpec("X", "*fp32", (("hip", "DS"), ("cuda", "D"))),), constexprs=(("BLOCK", block),),
                            options=(("num_stages", 3), ("num_warps", 4)), autotune=AutotunePick(i - 1, 3, 3))

    kfs = [*_frontier("my_tuner", "gfx942", launch(64, 1), 40, "tuned_copy"),
           *_frontier("my_tuner", "gfx942", launch(128, 2), 40, "tuned_copy")]
    text = tables_text(kfs, compile_only(), width=100)
    assert_one_line_a_row(text, folds)
    title = next(ln for ln in text.splitlines() if ln.startswith("frontier: gfx942"))
    assert not title.rstrip(")").endswith("cfg"), title
    assert "my_tuner tuned_copy  BLOCK=64 cfg 1/3" in text.splitlines()
    assert "LLVM pads it up to what the level's budget allows" in " ".join(text.split())


# ---- the words a person reads ------------------------------------------------------------------------

def test_analyze_of_a_capture_names_the_kernel_not_only_its_module():
    from dataclasses import replace

    from vgprscope.analysis.analyze.view import table_text

    records = [r for r in fixture_records(CAPTURED) if r.arch == "gfx942"]
    # a short module and kernel name: the label column's, not a title line's
    one = [replace(r, variant="my_ops", kernel="scale_rows") for r in records if r.kernel == records[0].kernel]
    text = table_text(one, compile_only(), width=160)
    assert re.search(r"^my_ops scale_rows +gfx942 ", text, re.M), text


def test_counts_say_one_thing_in_the_singular():
    from vgprscope.captures.model import _count
    from vgprscope.library.gate import _direction

    assert [_count(1, "kernel"), _count(2, "kernel"), _count(1, "autotuned launch"),
            _count(3, "autotuned launch")] == ["1 kernel", "2 kernels", "1 autotuned launch", "3 autotuned launches"]
    # check --triton with a release older than the baseline's is no upgrade
    assert _direction("3.8.0", "3.9.0") == "a preview of the upgrade"
    assert "older release" in _direction("3.9.0", "3.8.0") and "upgrade" not in _direction("3.9.0", "3.8.0")


def test_help_at_100_columns_gives_the_descriptions_the_width_and_cuts_nothing():
    """typer's layout left the description 32 columns at 100 and cut --set's long word with "…": the names
    and type now share one column and the description takes the rest, folding at spaces."""
    import os
    import subprocess
    import sys

    for cmd in ("analyze", "diff", "check"):
        out = subprocess.run([sys.executable, "-m", "vgprscope", cmd, "--help"], capture_output=True, text=True,
                             env={**os.environ, "COLUMNS": "100", "TERM": "dumb"}, cwd=ROOT).stdout
        assert "…" not in out, out
        rows = [ln for ln in out.splitlines() if ln.startswith("│ --")]
        # where each description starts: the column after the names (two spaces at least before it)
        starts = {re.search(r"\S  +(?=\S)", ln).end() for ln in rows if re.search(r"\S  +(?=\S)", ln)}
        assert rows and 100 - 2 - max(starts) > 50, (cmd, max(starts))
    assert "TRITON_HIP_USE_BLOCK_PINGPONG=1)" in out or "TRITON_HIP_USE_BLOCK_PINGPONG=1)," in out


def test_variants_and_explain_say_what_they_show_not_a_design_note_number(monkeypatch):
    from vgprscope.core.archs import get_arch
    from vgprscope.flashattn.live import seed_estimate

    res = run(monkeypatch, 100, "variants")
    assert "002 D" not in res.stdout and "seed" not in res.stdout.split("\n─")[0]
    est = seed_estimate(AttentionConfig(block_m=128, block_n=128, head_dim=128, num_warps=4), get_arch("gfx942"))
    assert est.name == "tile estimate" and "seed" not in est.summary
    assert est.summary.startswith("tile estimate, the registers a lane needs for the loop's tiles")


# ---- issue 35 item 13: real names at 100 columns, never broken inside a word ----

INDUCTOR_NAME = ("triton_poi_fused__to_copy__unsafe_view_add_arange_cat_cos_div_mul_permute_pow_reciprocal_select_sin_"
                 "slice_sub_unsqueeze_view_1")


@pytest.mark.parametrize("word, sep", [
    (INDUCTOR_NAME, "_"),
    ("/home/user/.cache/torchinductor/ab/cabcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop/"
     "site-packages/my_project/models/attention/rotary_embedding.py:1234", "/"),
])
def test_a_word_longer_than_the_line_breaks_after_its_own_separators(word, sep):
    """An Inductor kernel's name (115 characters) or a spill site's path (diff's lines ran to 145): folded
    after an underscore or a slash to fit 100 columns, every character kept, no line longer."""
    from vgprscope.report.formats import wrap

    lines = wrap(f"  new    0 -> 12   {word} (in a loop)", 100, "      ").splitlines()
    assert all(len(ln) <= 100 for ln in lines), lines
    assert "".join(ln.strip() for ln in lines).replace(" ", "") == f"new0->12{word}(inaloop)"
    broken = [ln for ln in lines if ln.strip() and not ln.rstrip().endswith((")", "12"))]
    assert broken and all(ln.endswith(sep) for ln in broken), lines


def test_inductor_names_at_100_columns_in_analyze(tmp_path):
    """A real torch.compile capture (an H100 run's Inductor kernels) on sm_90: every line within 100 columns,
    each long kernel name folded after an underscore (it was cut inside 'sin')."""
    import gzip

    from tests.captures.test_inductor_capture import FIXTURE

    cap = tmp_path / "cap.json"
    cap.write_bytes(gzip.open(FIXTURE).read())
    res = CliRunner().invoke(app, ["analyze", "--capture", str(cap), "--arch", "sm_90"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 100, [ln for ln in lines if len(ln) > 100]
    starts = [i for i, ln in enumerate(lines) if "triton_poi_fused__to_copy__unsafe_view" in ln]
    assert starts and all(lines[i].endswith("_") and lines[i + 1].startswith("  ") for i in starts), lines
