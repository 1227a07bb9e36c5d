"""The core reads a config back whatever its kind (records.Config): a bundled variant's attention config is
read as ``AttentionConfig`` once ``vgprscope.flashattn.config`` is imported, and as a ``DataConfig`` by a core
that never imported the attention package, with the same key either way, so the committed baseline loads and
compares in both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from vgprscope.core.records import DataConfig, LaunchConfig, config_from_dict
from vgprscope.flashattn.config import AttentionConfig

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "vgprscope-baseline.json"


def test_every_committed_config_keys_the_same_as_data_and_as_its_class():
    entries = list(json.loads(BASELINE.read_text())["entries"].values())
    # 9 variants x 3 archs x 2 slots (ws-regalloc: its reason on each), and ws-regalloc on sm_90, its own arch
    assert len(entries) == 80
    for e in entries:
        data = DataConfig.from_dict(e["config"])
        assert data.key() == e["config_key"] == config_from_dict(e["config"]).key()
        assert isinstance(config_from_dict(e["config"]), AttentionConfig)
        assert data.as_dict() == e["config"]
        # the launch options read the same through the protocol
        cfg = config_from_dict(e["config"])
        for name in ("num_warps", "num_stages", "waves_per_eu", "maxnreg"):
            assert getattr(data, name) == getattr(cfg, name), name
        assert data.with_options(num_warps=8).key() == cfg.with_options(num_warps=8).key()
        assert data.flat() == cfg.flat()


def test_a_launch_config_reads_back_as_itself():
    c = LaunchConfig(args=(), constexprs=(("BLOCK", 64),), options=(("num_warps", 8),))
    assert config_from_dict(c.as_dict()) == c
    assert config_from_dict({"kind": "someone-elses", "x": 1}) == DataConfig.from_dict({"kind": "someone-elses",
                                                                                         "x": 1})


def test_the_core_loads_and_compares_the_baseline_without_the_attention_package():
    code = f"""
import sys
from vgprscope.gate.baseline import load_baseline
from vgprscope.gate.diff import judge
base = load_baseline({str(BASELINE)!r})
kinds = {{type(e.config).__name__ for e in base.entries.values()}}
result = judge(base, list(base.entries.values()))
loaded = sorted(m for m in sys.modules if m.startswith("vgprscope.flashattn."))
print(kinds, result.passed, len(result.entries), loaded)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["{'DataConfig'}", "True", "80", "[]"]
