"""compare's tables per grid point: each point compares its own rows, and a row two points share (a default the
points do not change, as a knob that only one variant takes) is in both tables. The split reads the points each
record answers (``Record.points``, set by the source that made its task), not the attention package."""

from __future__ import annotations

from dataclasses import replace

from vgprscope.analysis.compare.core import by_point, compare_points
from vgprscope.core.records import LaunchConfig, Record


def _rec(variant: str, slot: str, points: tuple[str, ...] = (), block: int = 64) -> Record:
    config = LaunchConfig(args=(), constexprs=(("BLOCK", block),), options=())
    return Record(variant=variant, kernel="k", arch="gfx942", config=config, status="fail", slot=slot, points=points)


def test_a_record_two_points_share_goes_to_both_and_one_point_takes_every_record():
    shared = _rec("baseline", "num_splits=2", ("num_splits=2", "num_splits=4"))
    two, four = _rec("split-k", "num_splits=2", ("num_splits=2",), 2), _rec("split-k", "num_splits=4", (), 4)
    points = {"num_splits=2": "[num_splits=2]", "num_splits=4": "[num_splits=4]"}
    assert by_point([shared, two, four], points) == {"[num_splits=2]": [shared, two], "[num_splits=4]": [shared, four]}
    assert by_point([shared, two, four], {"defaults": ""}) == {"": [shared, two, four]}
    tables = compare_points([shared, two, four], points)
    assert list(tables) == ["gfx942 [num_splits=2]", "gfx942 [num_splits=4]"]
    assert [ln.variant for ln in tables["gfx942 [num_splits=4]"]] == ["baseline", "split-k"]
    assert list(compare_points([shared, two, four], {"defaults": ""})) == ["gfx942"]


def test_the_bundled_variants_rows_name_every_point_they_answer():
    """A knob only split-k takes leaves baseline's config the same at both points: one row, both slots."""
    from vgprscope.core.archs import get_arch
    from vgprscope.flashattn import loader
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.source import _row, variant_task_items
    from vgprscope.flashattn.variants import load_variants

    found = load_variants(loader.BUNDLED_DIR)
    requests = [ConfigRequest(extra=(("num_splits", 2),)), ConfigRequest(extra=(("num_splits", 4),))]
    items = variant_task_items([found["baseline"], found["split-k"]], [get_arch("gfx942")], requests)
    assert [(v.name, slots) for v, _, _, slots in items] == [
        ("baseline", ("num_splits=2", "num_splits=4")), ("split-k", ("num_splits=2",)), ("split-k", ("num_splits=4",))]
    v, c, _, slots = items[0]
    row = _row(v, c, v.kernels[0], slots)
    assert (row.slot, row.points) == ("num_splits=2", ("num_splits=2", "num_splits=4"))
    assert replace(_rec("baseline", "num_splits=2"), points=row.points) == _rec("baseline", "num_splits=2")  # not compared
