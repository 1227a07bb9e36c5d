"""frontier --capture: a user's own captured kernels (not written to vgprscope's protocol) across the
occupancy levels, the option set in each level's compile."""

from __future__ import annotations

import json
import sys

from capture_helpers import USER_KERNELS, cli


def test_captured_kernels_have_a_frontier(tmp_path):
    cap = tmp_path / "cap.json"
    done = cli("capture", "-o", str(cap), "--", sys.executable, str(USER_KERNELS / "run_ops.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    res = cli("frontier", "--capture", str(cap), "--arch", "gfx942", "-f", "json")
    assert res.returncode == 0, res.stderr
    kernels = json.loads(res.stdout)["kernels"]
    assert kernels and all(k["knob"] == "waves_per_eu" for k in kernels)
    for k in kernels:
        assert [lv["level"] for lv in k["levels"]] == [1, 2, 3, 4, 5, 6, 7, 8]
        for lv in k["levels"]:
            assert lv["status"] == "ok", lv["status"]
            # the level's own compile: its config carries the option, its occupancy uses it
            assert dict(lv["record"]["config"]["options"])["waves_per_eu"] == lv["setting"]
        assert k["spill_free_occupancy"] is not None and k["summary"].startswith("spill-free to ")
