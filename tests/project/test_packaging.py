"""A non-editable install ships the kernels and works from another directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True)
    (whl,) = out.glob("vgprscope-*.whl")
    return whl


def test_wheel_ships_the_kernels_inside_the_namespace(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "vgprscope/kernels/baseline.py" in names
    assert "vgprscope/kernels/_fa_common.py" in names
    assert not any(n.startswith("kernels/") for n in names), "no top-level 'kernels' package (PyPI has one)"
    assert any(n.endswith("entry_points.txt") for n in names)
    # pyproject lists the packages by hand (a mapped kernels/ hides them from the finder): every package of
    # the source tree must be in the wheel
    for init in (ROOT / "vgprscope").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, f"{init.parent.name} is missing from pyproject's packages"
    for f in (ROOT / "kernels").glob("*.py"):
        assert f"vgprscope/kernels/{f.name}" in names
    # the kernels' README is the repository's guide to adding a variant, not part of the installed package
    assert (ROOT / "kernels/README.md").is_file()
    assert [n for n in names if n.startswith("vgprscope/kernels/") and not n.endswith(".py")] == []
    assert "vgprscope/runtime/boot/sitecustomize.py" in names  # package data: capture's hook loader
    assert "vgprscope/runtime/boot/_vgprscope_boot.py" in names  # the runtime's loader where vgprscope is not
    assert "vgprscope/runtime/__main__.py" in names  # a toolchain's compile worker


def test_wheel_holds_no_report_builder_or_third_party_launcher(wheel):
    """The repository's own report builders and the workloads they capture (third-party libraries launched from
    their wheels) are development tooling (tools/reports/), not part of what users install."""
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(n.startswith("tools/") for n in names)
    assert not any("reports" in n.split("/") or "workloads" in n.split("/") for n in names), \
        [n for n in names if "reports" in n or "workloads" in n]
    assert not any(n.endswith(("liger_ops.py", "vllm_fused_moe.py", "cli/report.py")) for n in names)


def test_installed_copy_runs_analyze_from_elsewhere(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site), VGPRSCOPE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TRITON_INTERPRET", None)
    out = subprocess.run(
        [sys.executable, "-m", "vgprscope", "analyze", "--variant", "baseline", "--arch", "sm_80", "--block-m", "64",
         "--block-n", "32", "--head-dim", "64", "--format", "json"],
        cwd=elsewhere, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["rows"][0]["status"] == "ok"
    # the kernels came from the installed copy, not from the checkout
    probe = subprocess.run([sys.executable, "-c", "from vgprscope.flashattn import loader as l; print(l.BUNDLED_DIR)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert Path(probe.stdout.strip()).is_relative_to(site)
