"""frontier on a variant that declares a register-split knob (ws-regalloc: VARIANT['frontier_knob'] names
producer_regs): one GPU-free sm_90 compile per split, each partition's setmaxnreg registers by Triton's
AllocateWarpGroups rule, the kernel-wide count, spills and stack per split, and the summary naming the
spill-free splits; in the table (100 columns, no folded cell), markdown, JSON and to_pandas."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

import vgprscope
from vgprscope.analysis.frontier.summary import summary
from vgprscope.core.errors import UsageError

SPLITS = "producer_regs=24,104,168"
# the split of one consumer partition of 8 warps (sm_90's default is two ping-ponging partitions of 4): the
# config whose frontier these tests work out by hand
ONE_PARTITION = {"num_warps": 8, "num_stages": 2}
REGISTER_FILE = 65536  # per SM (sm_90)
CONSUMER_WARPS = 8
PRODUCER_GROUP_WARPS = 4  # the producer's 1 warp padded to a warp group


def consumers(producer_regs: int, maxnreg: int = 168) -> int:
    """The default partition's registers by Triton's rule: maxnreg plus what the producer's warp group gives
    up, over the consumers' warps, rounded down to 8."""
    return (maxnreg * CONSUMER_WARPS * 32 + (maxnreg - producer_regs) * PRODUCER_GROUP_WARPS * 32) \
        // (CONSUMER_WARPS * 32) // 8 * 8


@pytest.fixture(scope="module")
def result():
    return vgprscope.frontier(variant="ws-regalloc", arch="sm_90", knob=[SPLITS, "pingpong=0"], jobs=1,
                              **ONE_PARTITION)


def test_each_split_is_a_row_with_its_partitions_spills_and_stack(result):
    (kf,) = result.frontiers
    assert (kf.split, kf.knob, kf.arch) == (True, "producer_regs", "sm_90")
    assert [lv.plan.setting for lv in kf.levels] == [24, 104, 168]
    # the kernel-wide count: the 64K file over 12 warps (8 consumers + the producer's warp group), rounded to 8
    assert [lv.allocation for lv in kf.levels] == [REGISTER_FILE // (12 * 32) // 8 * 8] * 3 == [168] * 3
    assert [{p.name: p.given_registers for p in lv.partitions} for lv in kf.levels] == [
        {"default": consumers(r), "partition0": r} for r in (24, 104, 168)] == [
        {"default": 240, "partition0": 24}, {"default": 200, "partition0": 104}, {"default": 168, "partition0": 168}]
    f = [lv.figures() for lv in kf.levels]
    assert [(x["spill_store_bytes"], x["spill_load_bytes"], x["scratch_bytes"]) for x in f] == [
        (0, 0, 0), (0, 0, 0), (144, 144, 128)]
    assert [lv.spill_free for lv in kf.levels] == [True, True, False]
    assert kf.spill_free_settings == (24, 104)
    assert summary(kf).startswith("spill-free at producer_regs 24-104 (default partition 240-200 registers); "
                                 "168: 144 B of spill stores, 144 B of spill loads")


def test_table_at_100_columns_keeps_each_split_on_one_line(result, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = result.table()
    assert all(len(line) <= 100 for line in text.splitlines())
    rows = [ln.split() for ln in text.splitlines() if re.match(r"\s+\d+\s+\d+\s+\d+\s+168\s", ln)]
    assert rows == [["24", "240", "24", "168", "0", "0", "yes", "1", "ok"],
                    ["104", "200", "104", "168", "0", "0", "yes", "1", "ok"],
                    ["168", "168", "168", "168", "144+144", "128", "no", "1", "ok"]]
    assert "spill-free at producer_regs 24-104" in " ".join(text.split())
    # the split's columns, not the occupancy levels' (maxnreg, level, budget)
    header = next(ln.split() for ln in text.splitlines() if ln.lstrip().startswith("producer_regs "))
    assert header == ["producer_regs", "default", "workers", "regs", "spill", "st+ld", "B", "stack", "B",
                      "spill-free", "occupancy", "status"]


def test_markdown_json_and_pandas_carry_the_split(result):
    md = result.markdown()
    assert "| producer_regs | default | workers | regs |" in md
    assert "| 168 | 168 | 168 | 168 | 144/144 | 128 | no | 1 | ok |" in md
    doc = json.loads(result.to_json())
    (k,) = doc["kernels"]
    assert (k["split"], k["knob"], k["spill_free_settings"]) == (True, "producer_regs", [24, 104])
    assert [lv["partitions"][0]["given_registers"] for lv in k["levels"]] == [240, 200, 168]
    df = result.to_pandas()
    assert list(df["setting"]) == [24, 104, 168]
    assert list(df["default_registers"]) == [240, 200, 168]
    assert list(df["worker_registers"]) == ["24", "104", "168"]
    assert list(df["spills"]) == [0, 0, 288]


def test_the_cli_prints_the_split_frontier():
    from vgprscope.cli.app import _register, app

    _register()
    out = CliRunner().invoke(app, ["frontier", "--variant", "ws-regalloc", "--arch", "sm_90", "-k", SPLITS,
                                   "-k", "pingpong=0", "--num-warps", "8", "--num-stages", "2", "--jobs", "1"])
    assert out.exit_code == 0, out.output
    assert "spill-free at producer_regs 24-104" in " ".join(out.output.split())


def test_the_declared_splits_are_ones_the_kernel_accepts():
    """Without -k the frontier compiles the declared values: each must pass the kernel's own check."""
    from vgprscope.flashattn.variants import get_variant

    v = get_variant("ws-regalloc")
    name, values = v.frontier_knob
    assert name == "producer_regs" and name in v.knobs
    assert values == (24, 56, 88, 120, 152, 184, 216, 248)
    defaults = {"block_m": 128, "block_n": 128, "head_dim": 128, "dtype": "fp16", "causal": False, "num_warps": 8,
                "num_stages": 2, "shape": [1, 1, 128, 128]}
    assert [v.module().check_config(defaults | {"extra": {name: x}}) for x in values] == [None] * len(values)
    assert v.module().check_config(defaults | {"extra": {name: 20}}) is not None


def test_a_bad_frontier_knob_declaration_is_refused(tmp_path):
    from vgprscope.flashattn import loader
    from vgprscope.flashattn.variants import load_variants

    src = (loader.BUNDLED_DIR / "ws_regalloc.py").read_text()
    for f in loader.BUNDLED_DIR.glob("_*.py"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "ws_regalloc.py").write_text(src.replace('"frontier_knob": {"name": "producer_regs"',
                                                         '"frontier_knob": {"name": "nope"'))
    with pytest.raises(UsageError, match=r"VARIANT\['frontier_knob'\].*allowed: \{'name': one of"):
        load_variants(tmp_path)
    (tmp_path / "ws_regalloc.py").write_text(src.replace("\"range\": [24, 248, 32]", "\"range\": [24, 248, 0]"))
    load_variants.cache_clear()
    with pytest.raises(UsageError, match=r"VARIANT\['frontier_knob'\].*'range': \[first, last, step\]"):
        load_variants(tmp_path)


def test_an_arch_it_cannot_target_is_one_row_saying_why():
    """Every split is refused alike where the variant cannot compile: one row with the reason, not one per split."""
    (kf,) = vgprscope.frontier(variant="ws-regalloc", arch="sm_80", knob=SPLITS, jobs=1).frontiers
    assert kf.split and len(kf.levels) == 1 and not kf.levels[0].ok
    assert "sm_90" in kf.levels[0].record.status
    assert summary(kf) == "no setting compiled"


def test_the_split_frontier_under_another_triton_is_named_by_it(release36):
    """Under 3.6 (the GPU machine's; 8 + 12 B at 104, 8 + 8 B in the hand sweep of reports/ws-regalloc-h100.md before
    the softmax folded its scale into the exponent) the split
    spills earlier than under 3.9, and the table's title says which Triton compiled it."""
    result = vgprscope.frontier(variant="ws-regalloc", arch="sm_90", knob=["producer_regs=24,104", "pingpong=0"],
                                triton="3.6.0", jobs=1, **ONE_PARTITION)
    (kf,) = result.frontiers
    assert [(lv.plan.setting, lv.record.toolchain, lv.spills) for lv in kf.levels] == [
        (24, "3.6.0", 0), (104, "3.6.0", 20)]
    assert kf.spill_free_settings == (24,)
    assert "128x128 d128 fp16 w8 s2 pingpong=0 (Triton 3.6.0): spill-free at producer_regs 24 " in " ".join(
        result.table().split())
