"""``analyze --plot`` (a history's chart): without matplotlib it says which extra to install before anything
compiles (issue 35 item 8); a panel's title counts its kernels in words that read (item 16)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from vgprscope.analysis.history.view import panel_title

ROOT = Path(__file__).resolve().parents[3]
BLOCKER = '''
import sys

class _NoMatplotlib:
    def find_spec(self, name, path=None, target=None):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoMatplotlib())
'''


def test_plot_without_matplotlib_is_one_line_before_compiling(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")}  # a cold cache: nothing may compile
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", "--variant", "baseline", "--arch", "gfx942",
                           "--triton", "3.9.0", "--triton", "3.8.0", "--plot", str(tmp_path / "h.png")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "needs matplotlib, which is not installed; install the 'plots' extra: pip install" in lines[0]
    assert "[plots]'" in lines[0] and "vgprscope[plots]" not in lines[0]
    assert not (tmp_path / "cache").exists() and done.stdout == "" and time.monotonic() - t0 < 60


def test_a_panel_title_counts_its_kernels():
    assert panel_title("gfx942", 1, 1) == "gfx942: 1 kernel"
    assert panel_title("sm_90", 3, 3) == "sm_90: 3 kernels"
    assert panel_title("gfx942", 10, 14) == "gfx942: the 10 kernels where the most changed (4 more in the table)"
