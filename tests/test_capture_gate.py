"""The gate on captured kernels: `[tool.vgprscope] capture = FILE` for baseline save and check."""

from __future__ import annotations

import json
import sys

from capture_helpers import USER_KERNELS, cli


def test_gate_saves_and_checks_a_capture(tmp_path):
    assert cli("capture", "-o", str(tmp_path / "cap.json"), "--", sys.executable, str(USER_KERNELS / "run_ops.py"),
               env={"TRITON_INTERPRET": "1"}).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.vgprscope]\ncapture = "cap.json"\narchs = ["gfx942", "sm_90"]\n'
                                             '[tool.vgprscope.rules]\n"my_ops:vgpr_total" = "+0"\n')
    done = cli("baseline", "save", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    base = json.loads((tmp_path / "vgprscope-baseline.json").read_text())
    # 3 specialisations (two autotune configs and a plain launch) on 2 archs, none of the bundled variants
    assert len(base["entries"]) == 6 and {e["variant"] for e in base["entries"].values()} == {"my_ops"}
    assert base["set"] == {"variants": [], "archs": ["gfx942", "sm_90"], "configs": [], "capture": "cap.json"}
    done = cli("check", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # a baseline that had 4 fewer VGPRs for one kernel: the gate fails on it
    key = next(k for k, e in base["entries"].items() if e["arch"] == "gfx942" and e["kernel"] == "add")
    base["entries"][key]["usage"]["vgpr_total"] -= 4
    (tmp_path / "vgprscope-baseline.json").write_text(json.dumps(base))
    done = cli("check", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
