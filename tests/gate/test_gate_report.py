"""The gate's report without compiling: the terminal table of a failing check never cuts a word and keeps
every value at 100 and 160 columns (no `resu`/`lt`, `wors`/`e` or `gfx`/`942` when the gate fails at 100
columns exactly), the slot and a changed config are shown, and the JSON and markdown carry both sides.

Data: the committed baseline (real compiler output) with numbers moved, and a capture-like set of long
module and kernel names with autotune slots, whose configs are long words (``BLOCK_SIZE=2048``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

import vgprscope.flashattn.config  # noqa: F401  (the bundled variants' configs read back as theirs, as the CLI's do)
from vgprscope.core.records import ArgSpec, AutotunePick, LaunchConfig
from vgprscope.gate import report
from vgprscope.gate.baseline import Baseline, Entry, load_baseline
from vgprscope.gate.diff import GateResult, judge
from vgprscope.gate.rules import RuleSet
from vgprscope.report.formats import Footnotes

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"\[\d+\]")


def _grown(e: Entry, n: int = 8) -> Entry:
    u = e.usage
    if hasattr(u, "vgpr_total"):
        u = dataclasses.replace(u, vgpr_total=u.vgpr_total + n, arch_vgpr=u.arch_vgpr + n, sgpr=u.sgpr - 2)
    else:
        u = dataclasses.replace(u, regs=u.regs + n)
    return dataclasses.replace(e, usage=u)


def _launch(block: int, index: int) -> LaunchConfig:
    return LaunchConfig(args=(ArgSpec("X", "*fp32"), ArgSpec("Y", "*bf16"), ArgSpec("n", "i32")),
                        constexprs=(("BLOCK_SIZE", block), ("HAS_WEIGHT", True)),
                        options=(("num_warps", 32), ("num_stages", 3)),
                        autotune=AutotunePick(index, 18, 24, ("4096", "torch.float32")))


@pytest.fixture(scope="module")
def committed() -> Baseline:
    """The committed baseline's compiled entries (ws-regalloc's there say why it cannot target those archs)."""
    base = load_baseline(ROOT / "vgprscope-baseline.json")
    return Baseline.of([e for e in base.entries.values() if e.usage is not None], base.triton_version, base.set)


def bundled_failing(committed) -> GateResult:
    """A third of the committed set grown by 8 registers (and 2 SGPRs fewer on AMD), judged strictly (every
    growth fails: the default rules would pass the ones that keep their occupancy step)."""
    return judge(committed, [_grown(e) if i % 3 == 0 else e for i, e in enumerate(committed.entries.values())],
                   RuleSet(strict=True))


def captured_failing(committed) -> GateResult:
    """Long labels and kernel names, three autotune slots each, some grown, some configs changed, two
    launches gone: failing, with new configs, missing entries and a wide config column."""
    amd, nv = (next(e for e in committed.entries.values() if e.arch == a) for a in ("gfx942", "sm_80"))
    base = []
    for label in ("liger_kernel.ops.cross_entropy", "liger_kernel.ops.fused_linear_jsd", "liger_kernel.ops.rms_norm"):
        for arch, like in (("gfx942", amd), ("sm_90", nv)):
            for i, block in enumerate((1024, 2048, 4096)):
                c = _launch(block, i)
                base.append(Entry(label, label.split(".")[-1] + "_forward_kernel", arch,
                                  f"autotune[4096,torch.float32] cfg {i + 1}", c, c.key(), "ok", like.usage,
                                  like.occupancy))
    now = [_grown(e) if i % 2 else e for i, e in enumerate(base)]
    now = [dataclasses.replace(e, config=_launch(8192, e.config.autotune.index),
                               config_key=_launch(8192, e.config.autotune.index).key()) if i % 5 == 0 else e
           for i, e in enumerate(now)]
    return judge(Baseline.of(base, "3.9.0"), now[:-2])


def _vocabulary(result: GateResult) -> set[str]:
    """Every whole word the table may show: the rows' fields, values, configs and details (full and short),
    the headers and the title."""
    words = set(" ".join(report.HEADERS).split()) | {"variant", "/", "kernel", "✗", "vgprscope", "check", "(every",
                                                     "config:", "->", *report._SHORT_HEADERS.values()}
    notes = Footnotes()
    for d in result.entries:
        for cell in report.cells(d):
            words.update(cell.split())
        words.update(report.short_details(d, notes).split())
        words.update(report._value_cell(d, report.REGISTERS, plain=True, short=False).split())
    shared, _ = report._labels(result)
    words.update(shared.replace(")", " ").split())
    words.update(w + ")" for w in shared.split())
    return words


def _table_lines(text: str) -> list[str]:
    """The table: from its title to the line before the first footnote or legend."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("vgprscope check"))
    end = next(i for i, ln in enumerate(lines) if i > start and (MARKER.match(ln) or ln.startswith("slot ")
                                                                  or ln.startswith("vgprscope check")))
    return [ln for ln in lines[start:end] if set(ln) - {"─", " "}]


def cut_words(text: str, result: GateResult, width: int) -> list[str]:
    """Lines over the width, and words in the table that are no whole word of any field (rich folded them)."""
    words = _vocabulary(result)
    bad = [ln for ln in text.splitlines() if len(ln) > width]
    for ln in _table_lines(text):
        bad += [w for w in ln.split() if w not in words and not MARKER.fullmatch(w) and not re.fullmatch(r"[a-z]{1,2}", w)]
    return bad


@pytest.mark.parametrize("width", [100, 160])
@pytest.mark.parametrize("scenario", [bundled_failing, captured_failing])
def test_a_failing_check_never_cuts_a_word_and_keeps_every_value(committed, scenario, width):
    result = scenario(committed)
    assert not result.passed
    text = report.to_table(result, ["compile-only", "Triton 3.9.0"], "vgprscope-baseline.json", width=width)
    assert cut_words(text, result, width) == []
    # every row is there, and every row's slot and config is said: in the table, a legend or its footnote
    rows = [ln for ln in _table_lines(text) if ln.split()[0] in ("worse", "same", "missing", "new", "better")]
    assert len(rows) == len(result.entries)
    shown = set(text.replace("(", " ").replace(")", " ").split())  # the title says the configs' shared words
    for d in result.entries:
        assert set(d.entry.slot.split()) | set(report.config_text(d).split()) <= shown


def test_the_bundled_failing_table_keeps_its_columns_and_names_the_slots_at_100(committed):
    result = bundled_failing(committed)
    text = report.to_table(result, ["compile-only"], "vgprscope-baseline.json", width=100)
    lines = text.splitlines()
    rule = next(i for i, ln in enumerate(lines) if ln and set(ln) == {"─"})
    header = lines[rule - 1].split()  # one line: the long headers give way to short ones, named in a legend
    assert header == ["result", "variant", "/", "kernel", "arch", "slot", "config", "regs", "occ", "details"]
    assert "regs: VGPRs (AMD: arch VGPRs + AGPRs) or registers per thread (NVIDIA); occ: occupancy" in \
        " ".join(text.split())
    # prefill and decode entries of one kernel, on one arch and with one config label, are told apart by
    # their slot: here a short id, named by a legend line under the table
    assert re.findall(r"^slot ([a-z]+): (.+)$", text, re.M) == [("a", "defaults"), ("b", "shape=1x32x1x8192x8")]
    rows = [ln.split() for ln in _table_lines(text) if "row-stream" in ln and "gfx942" in ln]
    assert MARKER.fullmatch(rows[0][-1]) and f"{rows[0][-1]} vgpr_total 88 -> 96" in text
    rows[0][-1] = "[n]"
    assert rows == [["worse", "row-stream", "/", "attn_fwd_rows", "gfx942", "b", "16x64", "w4", "s1", "96", "(+8", "✗)",
                     "5", "[n]"],
                    ["same", "row-stream", "/", "attn_fwd_rows", "gfx942", "a", "16x64", "w4", "s1", "88", "5", "-"]]


def test_captured_table_moves_what_does_not_fit_into_footnotes_and_a_slot_legend(committed):
    result = captured_failing(committed)
    text = report.to_table(result, ["compile-only"], "vgprscope-baseline.json", width=100)
    legend = [ln for ln in text.splitlines() if ln.startswith("slot ")]
    assert legend == ["slot a: autotune[4096,torch.float32] cfg 1", "slot b: autotune[4096,torch.float32] cfg 2",
                      "slot c: autotune[4096,torch.float32] cfg 3"]
    assert "config changed: bf16/fp32 BLOCK_SIZE=4096 w32 s3 cfg 3/18 -> bf16/fp32 BLOCK_SIZE=8192 w32 s3" in \
        " ".join(text.split())
    wide = report.to_table(result, ["compile-only"], "b", wide=True, width=100)
    assert "BLOCK_SIZE=4096 w32 s3 cfg 3/18 -> bf16/fp32 BLOCK_SIZE=8192 w32 s3 cfg 3/18" in wide  # one line a row


def _slot_letters(text: str) -> dict[str, str]:
    """slot -> its letter, from the legend under a table."""
    return {slot: letter for letter, slot in re.findall(r"^slot ([a-z]+): (.+)$", text, re.M)}


def test_a_slot_keeps_its_letter_whatever_fails_and_in_any_order(committed):
    """The letters come from the slots' own names: the same slot is the same letter when another run fails
    elsewhere (failures are listed first), with the entries in another order, and with a slot more or less
    elsewhere in the table than "cfg 10" (after "cfg 9", by number)."""
    result = captured_failing(committed)
    first = _slot_letters(report.to_table(result, ["compile-only"], "b", width=100))
    assert first == {"autotune[4096,torch.float32] cfg 1": "a", "autotune[4096,torch.float32] cfg 2": "b",
                     "autotune[4096,torch.float32] cfg 3": "c"}
    base = Baseline.of([d.baseline for d in result.entries if d.baseline is not None], "3.9.0")
    others = [_grown(d.baseline, 64) if d.baseline.slot.endswith("cfg 1") else d.baseline
              for d in result.entries if d.baseline is not None]
    flipped = judge(base, list(reversed(others)), RuleSet(strict=True))
    assert flipped.failures and {d.entry.slot for d in flipped.failures} != {d.entry.slot for d in result.failures}
    assert _slot_letters(report.to_table(flipped, ["compile-only"], "b", width=100)) == first
    assert report.natural_key("cfg 9") < report.natural_key("cfg 10")


def test_a_changed_config_in_json_markdown_and_summary(committed):
    result = captured_failing(committed)
    changed = [d for d in result.entries if d.config_changed]
    assert changed and report.summary(result).endswith(f"{len(changed)} changed configs")
    doc = json.loads(report.to_json(result, {}, "b", exit_code=1))
    rows = [r for r in doc["rows"] if r["config_changed"]]
    assert len(rows) == len(changed) and doc["exit_code"] == 1 and doc["passed"] is False
    assert all(r["baseline_config"]["constexprs"]["BLOCK_SIZE"] != r["config"]["constexprs"]["BLOCK_SIZE"] for r in rows)
    assert all(r["baseline_config_key"] != r["config_key"] for r in rows)
    md = report.to_markdown(result, "compile-only", "b")
    assert "| autotune[4096,torch.float32] cfg 1 | bf16/fp32 BLOCK_SIZE=1024 w32 s3 cfg 1/18 -> " in md
    assert doc["counts"]["missing"] == 2 and doc["counts"]["failed"] == len(result.failures)


def test_diffs_legend_speaks_of_its_two_sides_not_of_checks_baseline_and_options():
    """diff takes no --allow-missing and has no baseline file: its legend says what missing and new mean there."""
    from vgprscope.gate.report import LEGEND, legend_for

    diff = legend_for("diff")
    assert "--allow-missing" not in diff and "baseline" not in diff
    assert "first side" in diff and legend_for("check") == LEGEND and "--allow-missing" in LEGEND
