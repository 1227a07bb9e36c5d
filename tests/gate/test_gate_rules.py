"""The gate's core without compiling: rule parsing into ``Rule`` objects, the diff on committed
baseline-like JSON (tests/fixtures/gate_baseline.json vs gate_current.json) with exact expected results,
slots (a changed config compared with the slot's old one), missing entries, strict baseline reading
(schema 2; schema 1 refused), serialised saves and the ``[tool.vgprscope]`` configuration."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgprscope.core.errors import NotComparableError, UsageError
from vgprscope.core.records import AmdUsage, Record
from vgprscope.flashattn import defaults as attention_defaults
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.gate.baseline import Baseline, Entry, entries_of, load_baseline, save_baseline
from vgprscope.gate.config import GateSet, load_gate_config
from vgprscope.gate.diff import Change, State, judge
from vgprscope.gate.metrics import METRICS
from vgprscope.gate.rules import Mode, Rule, RuleSet, default_rule, parse_rule
from vgprscope.library.gate import GateRun, load_config

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures"
SLOT = "block_m=64 block_n=32 head_dim=64 num_warps=4 num_stages=1"  # the fixtures' one request


@pytest.fixture(scope="module")
def base() -> Baseline:
    return load_baseline(FIXTURES / "gate_baseline.json")


@pytest.fixture(scope="module")
def current():
    return list(load_baseline(FIXTURES / "gate_current.json").entries.values())


def outline(result):
    """(key without the slot, change, fails, {metric: (change, fails)} of the changed metrics)."""
    return [(d.key.removesuffix(f"/{SLOT}"), d.change.value, d.fails,
             {m.metric: (m.change.value, m.fails) for m in d.changed_metrics}) for d in result.entries]


# ---- parsing ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, rule", [
    ("vgpr_total:+4", Rule("vgpr_total", Mode.LIMIT, 4)),
    ("vgpr_total:4", Rule("vgpr_total", Mode.LIMIT, 4)),
    ("split-k:vgpr_total:+8", Rule("vgpr_total", Mode.LIMIT, 8, variant="split-k")),
    ("occupancy:-1", Rule("occupancy", Mode.LIMIT, 1)),
    ("occupancy:0", Rule("occupancy", Mode.LIMIT, 0)),
    ("scratch_bytes:+10%", Rule("scratch_bytes", Mode.LIMIT, 10, percent=True)),
    ("lds_bytes:+0.5%", Rule("lds_bytes", Mode.LIMIT, 0.5, percent=True)),
    ("arch_vgpr:exact", Rule("arch_vgpr", Mode.EXACT)),
    (" two-phase : sgpr : OFF ", Rule("sgpr", Mode.OFF, variant="two-phase")),
    ("registers:+4", Rule("registers", Mode.LIMIT, 4)),
])
def test_rules_parse_into_check_objects(text, rule):
    assert parse_rule(text) == rule


@pytest.mark.parametrize("text, message", [
    ("vgpr_total", "rule 'vgpr_total' is not allowed; allowed: [VARIANT:]METRIC:TOLERANCE"),
    ("a:vgpr_total:+1:x", "rule 'a:vgpr_total:+1:x' is not allowed"),
    (":+4", "rule ':+4' is not allowed"),
    ("vgprs:+4", "unknown metric 'vgprs'; valid: registers, vgpr_total, arch_vgpr, agpr, sgpr,"),
    ("occupancy:+1", "occupancy is higher-is-better: write its tolerance as -N (it may drop by N); got +1"),
    ("vgpr_total:-4", "vgpr_total is smaller-is-better: write its tolerance as +N (it may grow by N); got -4"),
    ("vgpr_total:lots", "tolerance 'lots' for vgpr_total is not allowed; allowed: +N, +N%, -N, off, exact"),
    ("vgpr_total:+", "tolerance '+' for vgpr_total is not allowed"),
])
def test_bad_rules_are_one_line_usage_errors(text, message):
    with pytest.raises(UsageError) as info:
        parse_rule(text)
    assert message in str(info.value) and "\n" not in str(info.value)


@given(metric=st.sampled_from(sorted(METRICS)), variant=st.sampled_from([None, "split-k", "baseline"]),
       mode=st.sampled_from(list(Mode)), amount=st.integers(0, 512) | st.sampled_from([0.5, 2.25]),
       percent=st.booleans())
def test_a_rule_prints_as_text_that_parses_back_to_it(metric, variant, mode, amount, percent):
    # cliff is only for counts that cost through occupancy (registers, SGPRs, LDS / shared memory)
    mode = Mode.EXACT if mode is Mode.CLIFF and not (METRICS[metric].step or METRICS[metric].covers) else mode
    rule = Rule(metric, mode, amount if mode is Mode.LIMIT else 0, percent and mode is Mode.LIMIT, variant)
    assert parse_rule(rule.text()) == rule


def test_a_variants_own_rule_beats_a_metric_wide_one_and_the_last_given_wins():
    rules = RuleSet(tuple(map(parse_rule, ["vgpr_total:+4", "split-k:vgpr_total:+8", "vgpr_total:+2",
                                           "split-k:sgpr:off"])))
    assert rules.rule_for("split-k", "vgpr_total") == Rule("vgpr_total", Mode.LIMIT, 8, variant="split-k")
    assert rules.rule_for("baseline", "vgpr_total") == Rule("vgpr_total", Mode.LIMIT, 2)
    assert rules.rule_for("baseline", "sgpr") == Rule("sgpr", Mode.CLIFF)  # the default: within its step
    assert rules.rule_for("split-k", "sgpr") == Rule("sgpr", Mode.OFF, variant="split-k")
    # the parts of vgpr_total are shown, never gated, unless a rule says so
    assert rules.rule_for("baseline", "agpr") == Rule("agpr", Mode.OFF)
    with pytest.raises(UsageError, match="rule 'splitk:vgpr_total:\\+1' names unknown variant 'splitk'; valid: a, b"):
        RuleSet((parse_rule("splitk:vgpr_total:+1"),)).check_variants(["a", "b"])


def test_registers_is_one_rule_for_both_vendors():
    """A `registers` rule applies to AMD's vgpr_total and NVIDIA's regs alike; a variant's own rule wins."""
    rules = RuleSet(tuple(map(parse_rule, ["registers:+8", "split-k:registers:+16", "split-k:regs:+2"])))
    assert rules.rule_for("baseline", "vgpr_total") == Rule("registers", Mode.LIMIT, 8)
    assert rules.rule_for("baseline", "regs") == Rule("registers", Mode.LIMIT, 8)
    assert rules.rule_for("split-k", "vgpr_total") == Rule("registers", Mode.LIMIT, 16, variant="split-k")
    assert rules.rule_for("split-k", "regs") == Rule("regs", Mode.LIMIT, 2, variant="split-k")  # its own metric first
    assert rules.rule_for("baseline", "sgpr") == Rule("sgpr", Mode.CLIFF)  # not a register count it covers
    assert RuleSet((parse_rule("vgpr_total:+8"), parse_rule("registers:+1"))).rule_for("x", "vgpr_total").amount == 8


def test_registers_rule_on_the_fixture_lets_amd_and_nvidia_growth_through(base, current):
    # baseline/attn_fwd: gfx942 vgpr_total 108 -> 112; split-k: 108 -> 132
    result = judge(base, current, RuleSet((parse_rule("registers:+4"),)))
    gfx942 = next(d for d in result.entries if d.key.startswith("baseline/attn_fwd/gfx942/"))
    vgpr = next(m for m in gfx942.metrics if m.metric == "vgpr_total")
    assert (vgpr.change, vgpr.fails, vgpr.rule.metric) == (Change.SAME, False, "registers")
    split = next(d for d in result.entries if d.key.startswith("split-k/attn_fwd_split/"))
    assert next(m for m in split.metrics if m.metric == "vgpr_total").fails


@pytest.mark.parametrize("rule, base, cur, verdict", [
    ("vgpr_total:0", 128, 128, ("=", False)),
    ("vgpr_total:0", 128, 129, ("+", True)),
    ("vgpr_total:0", 128, 120, ("-", False)),
    ("vgpr_total:+4", 128, 132, ("=", False)),
    ("vgpr_total:+4", 128, 133, ("+", True)),
    ("scratch_bytes:+10%", 0, 4, ("+", True)),  # a percentage of a zero baseline allows nothing
    ("scratch_bytes:+10%", 100, 110, ("=", False)),
    ("occupancy:0", 4, 3, ("+", True)),
    ("occupancy:0", 3, 4, ("-", False)),
    ("occupancy:-1", 4, 3, ("=", False)),
    ("occupancy:-1", 4, 2, ("+", True)),
    ("sgpr:off", 50, 90, ("=", False)),
    ("sgpr:exact", 50, 48, ("-", True)),
])
def test_judging_one_metric(rule, base, cur, verdict):
    change, fails = parse_rule(rule).judge(base, cur)
    assert (change.value, fails) == verdict


# ---- the diff on committed JSON ---------------------------------------------------------------------

def test_default_rules_on_the_fixture(base, current):
    result = judge(base, current)
    assert outline(result) == [
        ("remat-q/attn_fwd/sm_80", "+", True, {}),
        ("split-k/attn_fwd_split/gfx942", "+", True, {
            "vgpr_total": ("+", True), "arch_vgpr": ("=", False), "vgpr_spill": ("+", True),
            "scratch_bytes": ("+", True), "spill_insts": ("+", True), "occupancy": ("+", True)}),
        ("baseline/attn_fwd/gfx90a", "x", True, {}),  # missing: a failure unless accepted
        ("two-phase/attn_fwd/sm_80", "x", False, {}),  # new
        # 108 -> 112 VGPRs keeps 4 waves/SIMD on gfx942 (up to 128): changed, not a failure
        ("baseline/attn_fwd/gfx942", "~", False, {"vgpr_total": ("~", False), "arch_vgpr": ("=", False),
                                                  "sgpr": ("-", False)}),
        ("baseline/attn_fwd/sm_80", "-", False, {"regs": ("-", False)}),
        ("split-k/merge/gfx942", "=", False, {}),
    ]
    assert not result.passed and len(result.failures) == 3
    assert [d.state for d in result.entries][2:4] == [State.MISSING, State.NEW]
    status = result.entries[0].status
    assert (status.baseline, status.current, status.change) == (
        "ok", "OutOfResources: out of resource: shared memory", Change.WORSE)
    occ = next(m for m in result.entries[1].metrics if m.metric == "occupancy")
    assert (occ.baseline, occ.current, occ.delta) == (4, 3, -1)
    # --strict: tolerance 0 on every count, the growth within the step fails as it did by default before
    strict = judge(base, current, RuleSet(strict=True))
    assert outline(strict)[0] == ("baseline/attn_fwd/gfx942", "+", True, {
        "vgpr_total": ("+", True), "arch_vgpr": ("=", False), "sgpr": ("-", False)})
    assert len(strict.failures) == 4


def test_tolerances_let_exactly_the_allowed_growth_pass(base, current):
    rules = RuleSet(tuple(map(parse_rule, [
        "vgpr_total:+4", "split-k:vgpr_total:+24", "split-k:vgpr_spill:off", "split-k:spill_insts:off",
        "split-k:scratch_bytes:+16", "split-k:occupancy:-1", "remat-q:regs:+100"])))
    result = judge(base, current, rules, accept_missing=lambda e: True)
    assert [(k, c, f) for k, c, f, _ in outline(result)] == [
        ("remat-q/attn_fwd/sm_80", "+", True),  # a compile that broke is not a metric a tolerance covers
        ("two-phase/attn_fwd/sm_80", "x", False),
        ("baseline/attn_fwd/gfx90a", "x", False),  # missing, accepted
        ("baseline/attn_fwd/sm_80", "-", False),
        # +4 VGPRs within +4 while the SGPRs went down: not "better", a gated metric got worse
        ("baseline/attn_fwd/gfx942", "=", False),
        ("split-k/attn_fwd_split/gfx942", "=", False),
        ("split-k/merge/gfx942", "=", False),
    ]
    one_less = RuleSet(tuple(map(parse_rule, ["split-k:vgpr_total:+23"])))
    split = next(d for d in judge(base, current, one_less).entries if d.key.startswith("split-k/attn_fwd_split"))
    assert {m.metric for m in split.metrics if m.fails} == {"vgpr_total", "vgpr_spill", "scratch_bytes",
                                                            "spill_insts", "occupancy"}


def _amd(vgpr: int, sgpr: int, **kw) -> AmdUsage:
    return AmdUsage(arch_vgpr=vgpr, agpr=0, vgpr_total=vgpr, sgpr=sgpr, vgpr_spill=0, sgpr_spill=0, scratch_bytes=0,
                    lds_static=0, lds_dynamic=0, spill_stores=0, spill_loads=0, spill_insts_in_loop=0,
                    llvm_occupancy=None, max_flat_workgroup_size=256, code_bytes=None, **kw)


OCC = {"unit": "waves/SIMD", "value": 2, "max_value": 8}
CFG = AttentionConfig(block_m=128, block_n=64, head_dim=128)


def entry(variant="v", kernel="k", arch="gfx942", slot="defaults", config=CFG, usage=None, status="ok",
          occupancy=OCC) -> Entry:
    usage = usage if usage is not None or status != "ok" else _amd(128, 60)
    return Entry(variant, kernel, arch, slot, config, config.key(), status, usage, occupancy)


def test_worse_within_tolerance_beside_an_improvement_is_not_better():
    """The verdict follows the metric the rule names: under `--rule vgpr_total:+100` a +54 VGPR kernel whose
    SGPRs fell is not "better"."""
    b = Baseline.of([entry(usage=_amd(200, 60))], "3.9.0")
    now = [entry(usage=_amd(254, 50))]
    d = judge(b, now, RuleSet((parse_rule("vgpr_total:+100"),))).entries[0]
    assert (d.change, d.fails) == (Change.SAME, False)
    # an ungated metric that grew does not keep a real improvement from being "better"
    d = judge(b, [entry(usage=dataclasses.replace(_amd(200, 50), arch_vgpr=210))]).entries[0]
    assert d.change is Change.BETTER
    # the same growth with nothing else: same; an improvement alone: better
    assert judge(b, [entry(usage=_amd(254, 60))], RuleSet((parse_rule("vgpr_total:+100"),))).entries[0].change \
        is Change.SAME
    assert judge(b, [entry(usage=_amd(190, 60))]).entries[0].change is Change.BETTER


def test_fail_on_change_fails_improvements_new_and_missing(base, current):
    result = judge(base, current, fail_on_change=True)
    assert [(k, c, f) for k, c, f, _ in outline(result)] == [
        ("remat-q/attn_fwd/sm_80", "+", True), ("split-k/attn_fwd_split/gfx942", "+", True),
        ("two-phase/attn_fwd/sm_80", "x", True), ("baseline/attn_fwd/gfx90a", "x", True),
        ("baseline/attn_fwd/gfx942", "~", True),  # a growth within the step: changed, and any change fails
        ("baseline/attn_fwd/sm_80", "-", True), ("split-k/merge/gfx942", "=", False),
    ]


def test_exact_rule_fails_an_improvement(base, current):
    result = judge(base, current, RuleSet((parse_rule("baseline:regs:exact"),)))
    sm80 = next(d for d in result.entries if d.key.startswith("baseline/attn_fwd/sm_80"))
    assert (sm80.change, sm80.fails) == (Change.BETTER, True)


def test_entries_out_of_scope_are_not_missing(base, current):
    result = judge(base, current, in_scope=lambda e: e.arch != "gfx90a")
    assert not result.of_state(State.MISSING)


def test_an_unchanged_set_passes(base):
    result = judge(base, list(base.entries.values()))
    assert result.passed and {d.change for d in result.entries} == {Change.SAME}


# ---- slots, missing entries, nothing to compare ---------------------------------------------------

def test_a_slot_whose_config_changed_is_compared_with_its_old_config():
    """A slot whose config grew is one entry compared with its old config (not "1 new, 1 missing"), and
    fails when it crosses an occupancy step."""
    grown = dataclasses.replace(CFG, block_m=256)
    b = Baseline.of([entry(usage=_amd(128, 60))], "3.9.0")
    result = judge(b, [entry(config=grown, usage=_amd(264, 60))])  # 2 -> 1 wave/SIMD on gfx942
    (d,) = result.entries
    assert (d.state, d.change, d.fails, d.config_changed) == (State.COMPARED, Change.WORSE, True, True)
    assert (d.baseline.config, d.current.config) == (CFG, grown) and not result.of_state(State.NEW)
    same = judge(b, [entry(config=grown, usage=_amd(128, 60))])
    assert same.passed and same.entries[0].config_changed and same.config_changes == same.entries
    assert not judge(b, [entry(config=grown, usage=_amd(128, 60))], fail_on_change=True).passed


def test_a_baseline_entry_the_run_does_not_produce_fails_unless_accepted():
    b = Baseline.of([entry(kernel="k"), entry(kernel="gone")], "3.9.0")
    result = judge(b, [entry(kernel="k")])
    missing = result.of_state(State.MISSING)
    assert [d.key for d in missing] == ["v/gone/gfx942/defaults"] and missing[0].fails and not result.passed
    accepted = judge(b, [entry(kernel="k")], accept_missing=lambda e: e.kernel == "gone")
    assert accepted.passed and accepted.of_state(State.MISSING)[0].accepted
    # a renamed kernel: its old name missing (a failure), its new one new
    renamed = judge(b, [entry(kernel="k"), entry(kernel="gone_v2")])
    assert [(d.state, d.fails) for d in renamed.entries] == [(State.MISSING, True), (State.NEW, False),
                                                             (State.COMPARED, False)]


def test_a_run_that_compares_nothing_is_refused():
    b = Baseline.of([entry(arch="gfx942")], "3.9.0")
    with pytest.raises(NotComparableError, match="the run produced no entry to compare"):
        judge(b, [])
    with pytest.raises(NotComparableError, match="none of the baseline's 1 entries is in the part of the set"):
        judge(b, [entry(arch="sm_80", usage=_amd(1, 1))], in_scope=lambda e: e.arch == "sm_80")


def _record(slot: str, block_m: int, variant="v") -> Record:
    return Record(variant=variant, kernel="k", arch="gfx942", config=dataclasses.replace(CFG, block_m=block_m),
                  status="ok", usage=_amd(128, 60), slot=slot)


def test_entries_of_a_run_are_keyed_by_slot_and_colliding_slots_stay_apart():
    one, other = _record("defaults", 128), _record("defaults", 64)
    assert [e.key for e in entries_of([one])] == ["v/k/gfx942/defaults"]
    assert entries_of([one, one]) == entries_of([one])  # the same compile listed twice
    apart = entries_of([one, other])  # two configs claim one slot: neither hides the other
    assert [e.key for e in apart] == [f"v/k/gfx942/defaults ~{one.config.key()}",
                                      f"v/k/gfx942/defaults ~{other.config.key()}"]
    assert entries_of([_record("", 128)])[0].slot == f"config {CFG.key()}"  # a source without slots


# ---- baseline files ---------------------------------------------------------------------------------

def test_save_round_trips_and_is_byte_stable(base, tmp_path):
    out, again = tmp_path / "b.json", tmp_path / "again.json"
    save_baseline(out, base)
    assert load_baseline(out) == base
    save_baseline(again, load_baseline(out))
    assert again.read_text() == out.read_text()  # re-saving the same numbers leaves git nothing to show
    assert '"shape": [4, 32, 4096, 4096]' in out.read_text() and '"limiters": ["vgpr"]' in out.read_text()
    assert json.loads(out.read_text())["schema_version"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.json", "b.json"]  # no temp or lock file left


def test_a_metric_the_table_does_not_know_yet_is_gated_as_a_count():
    rule = default_rule("future_metric")
    assert rule == Rule("future_metric", Mode.LIMIT, 0) and rule.judge(3, 4) == (Change.WORSE, True)


def _broken(tmp_path, text: str) -> Path:
    p = tmp_path / "broken.json"
    p.write_text(text)
    return p


KEY = f"split-k/merge/gfx942/{SLOT}"


def _edited(edit) -> str:
    doc = json.loads((FIXTURES / "gate_baseline.json").read_text())
    edit(doc)
    return json.dumps(doc)


def _duplicated() -> str:
    """The fixture with one entry written twice (a merge that kept both sides), the second one edited."""
    text = (FIXTURES / "gate_baseline.json").read_text()
    doc = json.loads(text)
    copy = json.dumps({**doc["entries"][KEY], "usage": {**doc["entries"][KEY]["usage"], "vgpr_total": 1}})
    return text.replace('"entries": {', f'"entries": {{\n  {json.dumps(KEY)}: {copy},', 1)


@pytest.mark.parametrize("text, message", [
    ((FIXTURES / "gate_baseline.json").read_text()[:2000], "is not valid JSON (truncated or corrupt)"),
    ("", "is not valid JSON (truncated or corrupt)"),
    ("[1, 2]", "is not a vgprscope baseline (no \"schema\": \"vgprscope-baseline\")"),
    (_edited(lambda d: d.update(schema_version=3)), "has schema version 3; this vgprscope reads version 2"),
    (_edited(lambda d: d.update(schema_version=True)), "has schema version True; this vgprscope reads version 2"),
    (_edited(lambda d: d.pop("triton_version")), "is corrupt: it lacks \"entries\" or \"triton_version\""),
    (_edited(lambda d: d.update(entries={})), "has no entries: it gates nothing"),
    (_edited(lambda d: d["entries"][KEY].pop("usage")), f"is corrupt: entry '{KEY}' lacks 'usage'"),
    (_edited(lambda d: d["entries"][KEY].update(arch="gfx90a")),
     f"is corrupt: entry '{KEY}' is stored under a key that does not match its fields"),
    (_edited(lambda d: d["entries"][KEY].update(slot="defaults")), "is stored under a key that does not match"),
    (_edited(lambda d: d["entries"][KEY]["usage"].update(vgpr_total="24")),
     "has usage.vgpr_total \"24\", not a non-negative integer"),
    # `true` is an int in Python: refused, never gated as 1 or printed as "True -> 264"
    (_edited(lambda d: d["entries"][KEY]["usage"].update(vgpr_total=True)),
     "has usage.vgpr_total true, not a non-negative integer"),
    (_edited(lambda d: d["entries"][KEY]["usage"].update(sgpr=20.0)), "has usage.sgpr 20.0, not a non-negative"),
    (_edited(lambda d: d["entries"][KEY]["usage"].update(sgpr=-1)), "has usage.sgpr -1, not a non-negative"),
    (_edited(lambda d: d["entries"][KEY]["usage"].pop("sgpr")), f"entry '{KEY}' lacks 'usage.sgpr'"),
    (_edited(lambda d: d["entries"][KEY]["usage"].update(vendor="intel")), "has usage vendor 'intel'; allowed: amd"),
    (_edited(lambda d: d["entries"][KEY]["occupancy"].update(value=False)), "has occupancy.value false, not a"),
    # an `ok` entry must have a usage and an occupancy to be gated
    (_edited(lambda d: d["entries"][KEY].update(usage=None)), f"entry '{KEY}' is \"ok\" but has no usage"),
    (_edited(lambda d: d["entries"][KEY].update(occupancy=None)), "is \"ok\" but has no occupancy"),
    (_edited(lambda d: d["entries"][KEY].update(config_key="0" * 16)), "has config_key 0000000000000000 but its "
                                                                       "config hashes to"),
    (_edited(lambda d: d["entries"][KEY].update(status=1)), "has status 1, not a non-empty string"),
    # a key given twice (a merge that kept both sides) is refused, not the last copy kept
    (_duplicated(), f"is corrupt: key '{KEY}' appears twice"),
    ('{"schema": "vgprscope-baseline", "schema": "x"}', "is corrupt: key 'schema' appears twice"),
])
def test_unusable_baselines_are_not_comparable(tmp_path, text, message):
    with pytest.raises(NotComparableError) as info:
        load_baseline(_broken(tmp_path, text))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_baseline_that_is_not_utf8_is_one_line(tmp_path):
    p = tmp_path / "b.json"
    p.write_bytes(b'{"schema": "\xff"}')
    with pytest.raises(NotComparableError, match="is not UTF-8 text"):
        load_baseline(p)


def test_no_baseline_says_how_to_make_one(tmp_path):
    with pytest.raises(NotComparableError, match="create it with `vgprscope baseline save`"):
        load_baseline(tmp_path / "none.json")


def test_interrupted_save_keeps_the_old_baseline(base, tmp_path, monkeypatch):
    import vgprscope.core.fsutil as fsutil

    out = tmp_path / "b.json"
    save_baseline(out, base)
    before = out.read_text()

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        save_baseline(out, Baseline.of([], "9.9.9"))
    assert out.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["b.json"]


def test_saves_of_one_file_wait_for_each_other_and_merge_what_is_there_then(base, tmp_path):
    """Two `baseline save` runs at once both land: a save takes the lock, then reads the file
    as it is at that moment: here another save (holding the lock) replaces the gfx942 entries meanwhile."""
    import fcntl

    path = tmp_path / "b.json"
    save_baseline(path, base)
    bumped = {k: dataclasses.replace(e, usage=dataclasses.replace(e.usage, sgpr=e.usage.sgpr + 1))
              for k, e in base.entries.items() if e.arch == "gfx942"}
    mine = Baseline.of([dataclasses.replace(e, usage=dataclasses.replace(e.usage, regs=e.usage.regs + 2))
                        for e in base.entries.values() if e.arch == "sm_80"], base.triton_version)
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another save holds the file
    done = threading.Event()
    thread = threading.Thread(target=lambda: (save_baseline(path, mine, replaces=lambda e: e.arch == "sm_80"),
                                              done.set()))
    thread.start()
    time.sleep(0.5)
    assert not done.is_set()  # it waits
    other = Baseline.of([*bumped.values(), *(e for e in base.entries.values() if e.arch != "gfx942")],
                        base.triton_version)
    path.write_text(other.to_json())  # the other save's update lands while this one waits
    os.unlink(lock)
    os.close(fd)
    thread.join(10)
    assert done.is_set()
    final = load_baseline(path)
    for k, e in final.entries.items():  # both updates are there
        if e.arch == "gfx942":
            assert e.usage.sgpr == base.entries[k].usage.sgpr + 1
        elif e.arch == "sm_80":
            assert e.usage.regs == base.entries[k].usage.regs + 2
    assert set(final.entries) == set(base.entries) and not lock.exists()


# ---- schema 1: refused, one line ------------------------------------------------------------------

def test_a_schema_1_baseline_is_refused_with_one_line_that_says_to_re_save(tmp_path):
    """A baseline keyed by config hash (schema 1: no slots) is not read: one line naming the file and the
    command that writes the current schema."""
    v1_path = tmp_path / "v1.json"
    v1_path.write_bytes(gzip.decompress((FIXTURES / "gate_committed_v1.json.gz").read_bytes()))
    assert json.loads(v1_path.read_text())["schema_version"] == 1
    with pytest.raises(NotComparableError) as info:
        load_baseline(v1_path)
    (line,) = str(info.value).splitlines()
    assert str(v1_path) in line and "schema version 1" in line
    assert line.endswith("re-save with `vgprscope baseline save`")


def test_a_partial_save_over_a_schema_1_baseline_is_refused_and_leaves_it(tmp_path):
    path = tmp_path / "v1.json"
    text = gzip.decompress((FIXTURES / "gate_committed_v1.json.gz").read_bytes()).decode()
    path.write_text(text)
    with pytest.raises(NotComparableError, match="re-save with `vgprscope baseline save`"):
        save_baseline(path, load_baseline(ROOT / "vgprscope-baseline.json"), replaces=lambda e: e.arch == "gfx942")
    assert path.read_text() == text


# ---- benchmark json -----------------------------------------------------------------------------------

def test_benchmark_series_names_are_unique_on_the_committed_baseline():
    """One series per entry and metric, each name unique (the slot is in it, so prefill and decode entries
    of one kernel differ): 832 on the committed baseline, spill_insts_in_loop of the 48 AMD entries and the hot
    loop's spill bytes, the worst loop's and the sum over every loop of the 74 compiled ones included
    (ws-regalloc's six refusals have no metric; its two sm_90 entries eight each)."""
    from vgprscope.gate.report import to_benchmark_json

    items = json.loads(to_benchmark_json(list(load_baseline(ROOT / "vgprscope-baseline.json").entries.values())))
    names = [i["name"] for i in items]
    assert len(names) == 832 and len(set(names)) == 832
    assert "row-stream/attn_fwd_rows gfx942 [shape=1x32x1x8192x8] vgpr_total" in names


# ---- configuration ----------------------------------------------------------------------------------

def test_pyproject_section_sets_the_set_the_path_and_the_rules(tmp_path):
    (tmp_path / "pyproject.toml").write_text("""
[project]
name = "x"

[tool.vgprscope]
baseline = "ci/regs.json"
variants = ["baseline", "split-k"]
archs = ["gfx942", "sm90"]
kernel_dir = "kernels"
configs = [{}, {head_dim = 64, block_m = 64, causal = true, extra = {num_splits = 4}, shape = [1, 8, 1024, 2048]}]
allow_missing = ["old/*"]

[tool.vgprscope.rules]
vgpr_total = "+4"
"split-k:vgpr_total" = 8
occupancy = "-1"
registers = "+2"
""")
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    cfg = load_config(cwd=sub)  # found by walking up, paths relative to the pyproject
    assert cfg.baseline == tmp_path / "ci" / "regs.json"
    tables = ({}, {"head_dim": 64, "block_m": 64, "causal": True, "extra": {"num_splits": 4}, "shape": [1, 8, 1024, 2048]})
    assert cfg.set == GateSet(variants=("baseline", "split-k"), archs=("gfx942", "sm_90"), configs=tables,
                              sources=(("kernel_dir", tmp_path / "kernels"),))
    assert cfg.rules.rules == (Rule("vgpr_total", Mode.LIMIT, 4), Rule("vgpr_total", Mode.LIMIT, 8, variant="split-k"),
                               Rule("occupancy", Mode.LIMIT, 1), Rule("registers", Mode.LIMIT, 2))
    assert cfg.allow_missing == ("old/*",) and cfg.accepts_missing(entry(variant="old")) and not cfg.accepts_missing(entry())
    over = cfg.with_overrides(archs=["gfx90a,sm_80"], rules=["vgpr_total:+2"], allow_missing=True)
    assert over.set.archs == ("gfx90a", "sm_80") and over.rules.rules[-1] == Rule("vgpr_total", Mode.LIMIT, 2)
    assert over.accepts_missing(entry())
    assert GateRun.from_config(over).described() == {"variants": ["baseline", "split-k"], "archs": ["gfx90a", "sm_80"], "configs": [
        {}, {"head_dim": 64, "block_m": 64, "causal": True, "extra": {"num_splits": 4}, "shape": [1, 8, 1024, 2048]}]}
    requests = attention_defaults.requests(cfg.set.configs, cfg.where)
    assert requests[1].extra == (("num_splits", 4),) and requests[1].shape == (1, 8, 1024, 2048)


def test_defaults_without_a_section(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    cfg = load_gate_config(cwd=tmp_path)
    assert cfg.baseline == tmp_path / "vgprscope-baseline.json"
    assert cfg.set == GateSet() and cfg.set.archs == ("gfx90a", "gfx942", "sm_80") and not cfg.rules.rules
    assert cfg.allow_missing == ()
    # no configs: the variants' own default set (each variant's defaults, and one grouped-query decode shape)
    assert cfg.set.configs == () and attention_defaults.DEFAULT_CONFIGS == ({}, {"shape": [1, 32, 1, 8192, 8]})
    from vgprscope.flashattn.config import ConfigRequest

    assert attention_defaults.requests(cfg.set.configs, cfg.where) == [ConfigRequest(),
                                                                   ConfigRequest(shape=(1, 32, 1, 8192, 8))]


@pytest.mark.parametrize("body, message", [
    ("variant = ['x']", "unknown key 'variant'; allowed: baseline, variants, archs, kernel_dir, capture, configs, rules"),
    ("archs = 'gfx942'", "archs must be a non-empty list of names; got 'gfx942'"),
    ("archs = ['gfx999']", "unknown arch 'gfx999'; valid: gfx90a"),
    ("configs = []", "configs must be a non-empty list of tables"),
    ("configs = [3]", "configs must be a non-empty list of tables"),
    ("rules = {vgprs = '+4'}", "unknown metric 'vgprs'"),
    ("rules = {'a:b:vgpr_total' = '+4'}", "rule key 'a:b:vgpr_total' is not allowed; allowed: METRIC or \"VARIANT:METRIC\""),
    ("rules = {vgpr_total = true}", "tolerance for vgpr_total must be a string like \"+4\" or a number; got True"),
    ("baseline = 3", "baseline must be a path string; got 3"),
    ("allow_missing = 'yes'", "allow_missing must be true, false or a list of entry patterns"),
    ("[broken", "is not valid TOML"),
])
def test_bad_configuration_is_a_one_line_usage_error(tmp_path, body, message):
    path = tmp_path / "vgprscope.toml"
    path.write_text(body + "\n")
    with pytest.raises(UsageError) as info:
        load_config(path)  # the library's: the sources' keys are its registry's
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("table, message", [
    ({"head_dim": "64"}, "configs[0]: head_dim must be a non-negative integer; got '64'"),
    ({"blockm": 64}, "configs[0]: unknown key 'blockm'; allowed: block_m"),
    ({"dtype": "fp8"}, "configs[0]: dtype 'fp8' is not allowed; allowed: fp16, bf16"),
    ({"shape": [1, 32, 1, 8192, 5]}, "kv_heads dividing heads"),
])
def test_bad_config_tables_are_one_line_usage_errors(table, message):
    with pytest.raises(UsageError) as info:
        attention_defaults.requests([table], "vgprscope.toml")
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("data, message", [
    (b"[tool.vgprscope]\nbaseline = \"\xff\xfe\"\n", "is not UTF-8 text (TOML must be): byte 29 (0xff)"),
    (b"\xff\xfe[tool]\n", "is not UTF-8 text"),
    (b"tool = 3\n", "tool must be a table ([tool.vgprscope] ...); got 3"),
    (b"[tool]\nvgprscope = \"x\"\n", "tool.vgprscope must be a table ([tool.vgprscope] with keys"),
    (b"[tool.vgprscope\n", "is not valid TOML"),
])
def test_a_malformed_pyproject_is_a_one_line_usage_error(tmp_path, data, message):
    """A malformed or non-UTF-8 pyproject.toml is one UsageError line, not a traceback."""
    (tmp_path / "pyproject.toml").write_bytes(data)
    with pytest.raises(UsageError) as info:
        load_gate_config(cwd=tmp_path)
    assert message in str(info.value) and "\n" not in str(info.value)

