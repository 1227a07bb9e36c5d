"""Config grids: option parsing, the cartesian product, the size guard, sorting; one small fresh grid."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vgprscope.analysis.order import sort_records
from vgprscope.core.errors import UsageError
from vgprscope.core.records import AmdUsage, Record
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.library.grid import (
    DEFAULT_MAX_COMPILES,
    GridSize,
    GridTooLargeError,
    check_size,
    parse_knob_axes,
    point_label,
    varying_axes,
)
from vgprscope.library.grid import grid_requests as requests_of


def grid_requests(knob=None, **given):
    """The CLI's option strings by their fields' names -> requests (``library.grid``'s one parser)."""
    return requests_of(given, knob=knob)


def test_values_are_comma_separated_or_repeated_and_multiply():
    reqs = grid_requests(block_m=["64,128"], num_warps=["4", "8"], waves_per_eu=["0,2,3"])
    assert len(reqs) == 12
    assert [(r.block_m, r.num_warps, r.waves_per_eu) for r in reqs[:4]] == [(64, 4, 0), (64, 4, 2), (64, 4, 3),
                                                                          (64, 8, 0)]
    assert {r.head_dim for r in reqs} == {128} and {r.dtype for r in reqs} == {"fp16"}
    assert varying_axes(reqs) == ["block_m", "num_warps", "waves_per_eu"]
    assert point_label(reqs[1], varying_axes(reqs)) == "[block_m=64 num_warps=4 waves_per_eu=2]"
    # one value each: one request, nothing varies
    [one] = grid_requests(block_m=["64"], dtype=["bf16"])
    assert (one.block_m, one.dtype) == (64, "bf16") and varying_axes([one]) == []
    # duplicates collapse; knobs take lists too
    assert len(grid_requests(block_m=["64,64", "64"])) == 1
    assert parse_knob_axes(["num_splits=2,4", "block_dk=32"]) == {"num_splits": [2, 4], "block_dk": [32]}
    knobbed = grid_requests(knob=["num_splits=2,4"])
    assert [r.extra for r in knobbed] == [(("num_splits", 2),), (("num_splits", 4),)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(block_m=["64,x"]), "--block-m 'x' is not a whole number"),
    (dict(num_warps=["0"]), "--num-warps 0 is below the smallest allowed value, 1"),
    (dict(num_warps=["4,3"]), "--num-warps 3 is not allowed; allowed: powers of two (Triton's rule for num_warps), such as 2 or 4"),
    (dict(block_m=["100"]), "--block-m 100 is not allowed; allowed: powers of two (tile sizes feed tl.arange), such as 64 or 128"),
    (dict(dtype=[""]), "--dtype '' has an empty value"),
    (dict(waves_per_eu=["-1"]), "--waves-per-eu -1 is below the smallest allowed value, 0"),
    (dict(dtype=["fp16,fp8"]), "--dtype 'fp8' is not allowed; allowed: fp16, bf16"),
    (dict(knob=["num_splits="]), "knob 'num_splits=' is not NAME=VALUE"),
])
def test_bad_values_are_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        grid_requests(**kwargs)


def test_the_size_guard_refuses_with_the_measured_rate_unless_confirmed():
    measured = lambda: GridSize(12_000, 1.5, 2)  # noqa: E731
    with pytest.raises(GridTooLargeError) as exc:
        check_size(12_000, None, False, measured)
    assert str(exc.value) == (
        "the grid is 12,000 compiles, over the limit of 10,000; it would take about 5.0 h at the rate measured "
        "here on 2 of them (1.50 s per compile); pass --yes to run it, or --max-compiles N to allow up to N, "
        "or narrow the grid")
    check_size(12_000, None, True, measured)  # --yes
    check_size(12_000, 20_000, False, measured)  # --max-compiles above the grid
    check_size(DEFAULT_MAX_COMPILES, None, False, measured)  # at the limit is allowed
    with pytest.raises(GridTooLargeError, match="over the limit of 10"):
        check_size(11, 10, True, measured)  # an explicit --max-compiles holds even with --yes


def _rec(variant, arch, bm, vgprs, spills, occ_value=None):
    from vgprscope.backends import occupancy_of
    from vgprscope.core.archs import get_arch

    cfg = AttentionConfig(block_m=bm, block_n=64, head_dim=128)
    u = AmdUsage(arch_vgpr=vgprs, agpr=0, vgpr_total=vgprs, sgpr=40, vgpr_spill=spills, sgpr_spill=0,
                 scratch_bytes=0, lds_static=0, lds_dynamic=0, spill_stores=0, spill_loads=0, spill_insts_in_loop=0,
                 llvm_occupancy=None, max_flat_workgroup_size=None, code_bytes=None)
    return Record(variant, "k", arch, cfg, "ok", usage=u, occupancy=occupancy_of(u, get_arch(arch), 4))


def test_sort_orders_each_variant_and_arch_group_best_first():
    recs = [_rec("a", "gfx942", 64, 200, 3), _rec("a", "gfx942", 128, 100, 0), _rec("a", "gfx942", 32, 150, 9),
            _rec("b", "gfx942", 64, 90, 0), _rec("b", "gfx942", 128, 60, 0)]
    by_vgprs = sort_records(recs, "vgprs")
    assert [(r.variant, r.usage.vgpr_total) for r in by_vgprs] == [("a", 100), ("a", 150), ("a", 200), ("b", 60),
                                                                   ("b", 90)]
    # occupancy: more is better, so it sorts descending
    assert [r.usage.vgpr_total for r in sort_records(recs, "occupancy")][:3] == [100, 150, 200]
    assert [r.usage.vgpr_spill for r in sort_records(recs, "spills")][:3] == [0, 3, 9]
    with pytest.raises(UsageError, match="cannot sort by 'colour'; sort by one of: "):
        sort_records(recs, "colour")


def _run(*args):
    from vgprscope.cli.app import _register, app

    _register()
    return CliRunner().invoke(app, list(args))


def test_a_grid_in_analyze_and_compare_with_a_note_for_the_combination_a_variant_refuses():
    # 512: a power of two (Triton could take it; 48 is a usage error) that the variant refuses: a note
    grid = ["--arch", "gfx942", "--block-m", "32,512", "--block-n", "32", "--head-dim", "64", "--num-warps", "4",
            "--num-stages", "1"]
    res = _run("analyze", "--variant", "baseline", *grid, "-f", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [(r["config"]["block_m"], r["status"]) for r in doc["rows"]] == [(32, "ok")]
    assert [(r["config"]["block_m"], r["reason"]) for r in doc["refused"]] == [
        (512, "block_m 512 is not allowed; allowed: powers of two from 16 to 256")]
    cmp = _run("compare", "--strategies", "baseline", *grid, "-f", "json")
    assert cmp.exit_code == 0, cmp.output
    assert list(json.loads(cmp.stdout)["archs"]) == ["gfx942 [block_m=32]"]
    assert "not compiled: baseline on gfx942: block_m 512 is not allowed" in _run("compare", "--strategies",
                                                                                  "baseline", *grid).stdout
    bad = _run("analyze", "--variant", "baseline", *grid, "--sort", "colour")
    assert bad.exit_code == 2 and "cannot sort by 'colour'" in bad.stderr
    over = _run("analyze", "--variant", "baseline", *grid, "--max-compiles", "1")
    assert over.exit_code == 2 and "the grid is 2 compiles, over the limit of 1" in over.stderr
