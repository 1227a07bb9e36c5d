"""The gate's core without compiling: rule parsing into ``Rule`` objects, the diff on committed
baseline-like JSON (tests/fixtures/gate_baseline.json vs gate_current.json) with exact expected results,
baseline file validation and the ``[tool.vgprscope]`` configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgprscope.baseline import (
    METRICS, Baseline, Change, Mode, Rule, RuleSet, State, compare, load_baseline, parse_rule, save_baseline,
)
from vgprscope.errors import NotComparableError, UsageError
from vgprscope.gateconfig import GateSet, load_gate_config
from vgprscope.variants import ConfigRequest

FIXTURES = Path(__file__).parent / "fixtures"
KEY = "00d0fa8b91ef4ae3"  # the config hash of 64x32 d64 fp16 w4 s1 in both fixture files


@pytest.fixture(scope="module")
def base() -> Baseline:
    return load_baseline(FIXTURES / "gate_baseline.json")


@pytest.fixture(scope="module")
def current():
    return list(load_baseline(FIXTURES / "gate_current.json").entries.values())


def outline(result):
    """(key without the config hash, change, fails, {metric: (change, fails)} of the changed metrics)."""
    return [(d.key.removesuffix(f"/{KEY}"), d.change.value, d.fails,
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
])
def test_rules_parse_into_check_objects(text, rule):
    assert parse_rule(text) == rule


@pytest.mark.parametrize("text, message", [
    ("vgpr_total", "rule 'vgpr_total' is not allowed; allowed: [VARIANT:]METRIC:TOLERANCE"),
    ("a:vgpr_total:+1:x", "rule 'a:vgpr_total:+1:x' is not allowed"),
    (":+4", "rule ':+4' is not allowed"),
    ("vgprs:+4", "unknown metric 'vgprs'; valid: vgpr_total, arch_vgpr, agpr, sgpr,"),
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
    rule = Rule(metric, mode, amount if mode is Mode.LIMIT else 0, percent and mode is Mode.LIMIT, variant)
    assert parse_rule(rule.text()) == rule


def test_a_variants_own_rule_beats_a_metric_wide_one_and_the_last_given_wins():
    rules = RuleSet(tuple(map(parse_rule, ["vgpr_total:+4", "split-k:vgpr_total:+8", "vgpr_total:+2",
                                           "split-k:sgpr:off"])))
    assert rules.rule_for("split-k", "vgpr_total") == Rule("vgpr_total", Mode.LIMIT, 8, variant="split-k")
    assert rules.rule_for("baseline", "vgpr_total") == Rule("vgpr_total", Mode.LIMIT, 2)
    assert rules.rule_for("baseline", "sgpr") == Rule("sgpr", Mode.LIMIT, 0)
    assert rules.rule_for("split-k", "sgpr") == Rule("sgpr", Mode.OFF, variant="split-k")
    # the parts of vgpr_total are shown, never gated, unless a rule says so
    assert rules.rule_for("baseline", "agpr") == Rule("agpr", Mode.OFF)
    with pytest.raises(UsageError, match="rule 'splitk:vgpr_total:\\+1' names unknown variant 'splitk'; valid: a, b"):
        RuleSet((parse_rule("splitk:vgpr_total:+1"),)).check_variants(["a", "b"])


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
    result = compare(base, current)
    assert outline(result) == [
        ("baseline/attn_fwd/gfx942", "+", True, {"vgpr_total": ("+", True), "arch_vgpr": ("=", False),
                                                  "sgpr": ("-", False)}),
        ("split-k/attn_fwd_split/gfx942", "+", True, {
            "vgpr_total": ("+", True), "arch_vgpr": ("=", False), "vgpr_spill": ("+", True),
            "scratch_bytes": ("+", True), "spill_insts": ("+", True), "occupancy": ("+", True)}),
        ("remat-q/attn_fwd/sm_80", "+", True, {}),
        ("two-phase/attn_fwd/sm_80", "x", False, {}),
        ("baseline/attn_fwd/gfx90a", "x", False, {}),
        ("baseline/attn_fwd/sm_80", "-", False, {"regs": ("-", False)}),
        ("split-k/merge/gfx942", "=", False, {}),
    ]
    assert result.exit_code == 1
    assert [d.state for d in result.entries][3:5] == [State.NEW, State.MISSING]
    status = result.entries[2].status
    assert (status.baseline, status.current, status.change) == (
        "ok", "OutOfResources: out of resource: shared memory", Change.WORSE)
    occ = next(m for m in result.entries[1].metrics if m.metric == "occupancy")
    assert (occ.baseline, occ.current, occ.delta) == (4, 3, -1)


def test_tolerances_let_exactly_the_allowed_growth_pass(base, current):
    rules = RuleSet(tuple(map(parse_rule, [
        "vgpr_total:+4", "split-k:vgpr_total:+24", "split-k:vgpr_spill:off", "split-k:spill_insts:off",
        "split-k:scratch_bytes:+16", "split-k:occupancy:-1", "remat-q:regs:+100"])))
    result = compare(base, current, rules)
    assert [(k, c, f) for k, c, f, _ in outline(result)] == [
        ("remat-q/attn_fwd/sm_80", "+", True),  # a compile that broke is not a metric a tolerance covers
        ("two-phase/attn_fwd/sm_80", "x", False),
        ("baseline/attn_fwd/gfx90a", "x", False),
        ("baseline/attn_fwd/gfx942", "-", False),  # +4 VGPRs within +4; the SGPRs went down
        ("baseline/attn_fwd/sm_80", "-", False),
        ("split-k/attn_fwd_split/gfx942", "=", False),
        ("split-k/merge/gfx942", "=", False),
    ]
    one_less = RuleSet(tuple(map(parse_rule, ["split-k:vgpr_total:+23"])))
    split = next(d for d in compare(base, current, one_less).entries if d.key.startswith("split-k/attn_fwd_split"))
    assert {m.metric for m in split.metrics if m.fails} == {"vgpr_total", "vgpr_spill", "scratch_bytes",
                                                            "spill_insts", "occupancy"}


@pytest.mark.parametrize("tolerance, fails", [("+22%", True), ("+23%", False), ("+23", True), ("+24", False)])
def test_percent_and_absolute_tolerances_at_the_edge(base, current, tolerance, fails):
    result = compare(base, current, RuleSet((parse_rule(f"split-k:vgpr_total:{tolerance}"),)))
    split = next(d for d in result.entries if d.key.startswith("split-k/attn_fwd_split"))
    vgpr = next(m for m in split.metrics if m.metric == "vgpr_total")
    assert (vgpr.baseline, vgpr.current, vgpr.fails) == (108, 132, fails)


def test_fail_on_change_fails_improvements_new_and_missing(base, current):
    result = compare(base, current, fail_on_change=True)
    assert [(k, c, f) for k, c, f, _ in outline(result)] == [
        ("baseline/attn_fwd/gfx942", "+", True), ("split-k/attn_fwd_split/gfx942", "+", True),
        ("remat-q/attn_fwd/sm_80", "+", True), ("two-phase/attn_fwd/sm_80", "x", True),
        ("baseline/attn_fwd/gfx90a", "x", True), ("baseline/attn_fwd/sm_80", "-", True),
        ("split-k/merge/gfx942", "=", False),
    ]


def test_exact_rule_fails_an_improvement(base, current):
    result = compare(base, current, RuleSet((parse_rule("baseline:regs:exact"),)))
    sm80 = next(d for d in result.entries if d.key.startswith("baseline/attn_fwd/sm_80"))
    assert (sm80.change, sm80.fails) == (Change.BETTER, True)


def test_entries_out_of_scope_are_not_missing(base, current):
    result = compare(base, current, in_scope=lambda e: e.arch != "gfx90a")
    assert not result.of_state(State.MISSING)


def test_an_unchanged_set_passes(base):
    result = compare(base, list(base.entries.values()))
    assert result.exit_code == 0 and {d.change for d in result.entries} == {Change.SAME}


# ---- baseline files ---------------------------------------------------------------------------------

def test_save_round_trips_and_is_byte_stable(base, tmp_path):
    out, again = tmp_path / "b.json", tmp_path / "again.json"
    save_baseline(out, base)
    assert load_baseline(out) == base
    save_baseline(again, load_baseline(out))
    assert again.read_text() == out.read_text()  # re-saving the same numbers leaves git nothing to show
    assert '"shape": [4, 32, 4096, 4096]' in out.read_text() and '"limiters": ["vgpr"]' in out.read_text()


def test_a_metric_the_table_does_not_know_yet_is_gated_as_a_count():
    from vgprscope.baseline import default_rule

    rule = default_rule("future_metric")
    assert rule == Rule("future_metric", Mode.LIMIT, 0) and rule.judge(3, 4) == (Change.WORSE, True)


def _broken(tmp_path, text: str) -> Path:
    p = tmp_path / "broken.json"
    p.write_text(text)
    return p


def _edited(edit) -> str:
    doc = json.loads((FIXTURES / "gate_baseline.json").read_text())
    edit(doc)
    return json.dumps(doc)


@pytest.mark.parametrize("text, message", [
    ((FIXTURES / "gate_baseline.json").read_text()[:2000], "is not valid JSON (truncated or corrupt)"),
    ("", "is not valid JSON (truncated or corrupt)"),
    ("[1, 2]", "is not a vgprscope baseline (no \"schema\": \"vgprscope-baseline\")"),
    (_edited(lambda d: d.update(schema_version=2)), "has schema version 2; this vgprscope reads version 1"),
    (_edited(lambda d: d.pop("triton_version")), "is corrupt: it lacks \"entries\" or \"triton_version\""),
    (_edited(lambda d: d["entries"][f"split-k/merge/gfx942/{KEY}"].pop("usage")),
     f"is corrupt: entry 'split-k/merge/gfx942/{KEY}' lacks 'usage'"),
    (_edited(lambda d: d["entries"][f"split-k/merge/gfx942/{KEY}"].update(arch="gfx90a")),
     f"is corrupt: entry 'split-k/merge/gfx942/{KEY}' is stored under a key that does not match its fields"),
    (_edited(lambda d: d["entries"][f"split-k/merge/gfx942/{KEY}"]["usage"].update(vgpr_total="24")),
     "has a metric that is not an integer"),
])
def test_unusable_baselines_are_not_comparable(tmp_path, text, message):
    with pytest.raises(NotComparableError) as info:
        load_baseline(_broken(tmp_path, text))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_no_baseline_says_how_to_make_one(tmp_path):
    with pytest.raises(NotComparableError, match="create it with `vgprscope baseline save`"):
        load_baseline(tmp_path / "none.json")


def test_interrupted_save_keeps_the_old_baseline(base, tmp_path, monkeypatch):
    import vgprscope.fsutil as fsutil

    out = tmp_path / "b.json"
    save_baseline(out, base)
    before = out.read_text()

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        save_baseline(out, Baseline.of([], "9.9.9"))
    assert out.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["b.json"]


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

[tool.vgprscope.rules]
vgpr_total = "+4"
"split-k:vgpr_total" = 8
occupancy = "-1"
""")
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    cfg = load_gate_config(cwd=sub)  # found by walking up, paths relative to the pyproject
    assert cfg.baseline == tmp_path / "ci" / "regs.json"
    assert cfg.set == GateSet(variants=("baseline", "split-k"), archs=("gfx942", "sm_90"), kernel_dir=tmp_path / "kernels",
                              configs=(ConfigRequest(), ConfigRequest(head_dim=64, block_m=64, causal=True,
                                                                      extra=(("num_splits", 4),), shape=(1, 8, 1024, 2048))))
    assert cfg.rules.rules == (Rule("vgpr_total", Mode.LIMIT, 4), Rule("vgpr_total", Mode.LIMIT, 8, variant="split-k"),
                               Rule("occupancy", Mode.LIMIT, 1))
    over = cfg.with_overrides(archs=["gfx90a,sm_80"], rules=["vgpr_total:+2"])
    assert over.set.archs == ("gfx90a", "sm_80") and over.rules.rules[-1] == Rule("vgpr_total", Mode.LIMIT, 2)
    assert over.set.describe() == {"variants": ["baseline", "split-k"], "archs": ["gfx90a", "sm_80"], "configs": [
        {}, {"block_m": 64, "head_dim": 64, "causal": True, "extra": {"num_splits": 4}, "shape": [1, 8, 1024, 2048]}]}


def test_defaults_without_a_section(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    cfg = load_gate_config(cwd=tmp_path)
    assert cfg.baseline == tmp_path / "vgprscope-baseline.json"
    assert cfg.set == GateSet() and cfg.set.archs == ("gfx90a", "gfx942", "sm_80") and not cfg.rules.rules
    # each variant's defaults, and one grouped-query decode shape (32 query heads over 8 K/V heads)
    assert cfg.set.describe() == {"variants": ["all"], "archs": ["gfx90a", "gfx942", "sm_80"],
                                  "configs": [{}, {"shape": [1, 32, 1, 8192, 8]}]}


@pytest.mark.parametrize("body, message", [
    ("variant = ['x']", "unknown key 'variant'; allowed: baseline, variants, archs, kernel_dir, configs, rules"),
    ("archs = 'gfx942'", "archs must be a non-empty list of names; got 'gfx942'"),
    ("archs = ['gfx999']", "unknown arch 'gfx999'; valid: gfx90a"),
    ("configs = [{head_dim = '64'}]", "configs[0]: head_dim must be a non-negative integer; got '64'"),
    ("configs = [{blockm = 64}]", "configs[0]: unknown key 'blockm'; allowed: block_m"),
    ("configs = [{dtype = 'fp8'}]", "configs[0]: dtype 'fp8' is not allowed; allowed: fp16, bf16"),
    ("configs = []", "configs must be a non-empty list of tables"),
    ("rules = {vgprs = '+4'}", "unknown metric 'vgprs'"),
    ("rules = {'a:b:vgpr_total' = '+4'}", "rule key 'a:b:vgpr_total' is not allowed; allowed: METRIC or \"VARIANT:METRIC\""),
    ("rules = {vgpr_total = true}", "tolerance for vgpr_total must be a string like \"+4\" or a number; got True"),
    ("baseline = 3", "baseline must be a path string; got 3"),
    ("[broken", "is not valid TOML"),
])
def test_bad_configuration_is_a_one_line_usage_error(tmp_path, body, message):
    path = tmp_path / "vgprscope.toml"
    path.write_text(body + "\n")
    with pytest.raises(UsageError) as info:
        load_gate_config(path)
    assert message in str(info.value) and "\n" not in str(info.value)

