"""Every command reads the project's ``[tool.vgprscope]`` as ``check`` does: ``analyze``, ``explain``,
``frontier``, ``compare`` and ``diff`` compile its captured kernels on its archs (an option on the command line
wins), ``scan`` retargets to its archs; where nothing names other kernels, the bundled variants are compiled
and the header says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.analysis.scan.test_scan import cache  # noqa: F401  (a Triton cache this module's scan test reads)
from tests.captures.test_capture_without_torch import Project, build_project

SMALL = ["--block-m", "64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4", "--num-stages", "1"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    return build_project(tmp_path_factory)


def run(project: Project, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vgprscope", *args], cwd=cwd or project.root,
                          env=project.env(True, project.cache), capture_output=True, text=True, timeout=900)


def _kernels(doc: dict, key: str = "rows") -> set[tuple[str, str]]:
    return {(r.get("variant") or r.get("label"), r["arch"]) for r in doc[key]}


def test_analyze_and_explain_show_the_projects_kernels_on_its_archs(project):
    done = run(project, "analyze", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert _kernels(json.loads(done.stdout)) == {("myops.matmul", "gfx942"), ("myops.rows", "gfx942")}
    done = run(project, "explain", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert {k["kernel"] for k in json.loads(done.stdout)["kernels"]} == {"matmul_kernel", "row_kernel"}
    table = run(project, "analyze")
    assert "myops.matmul" in table.stdout and "bundled" not in table.stdout and "attn_fwd" not in table.stdout


def test_the_command_line_wins_over_the_project(project):
    done = run(project, "analyze", "--format", "json", "--arch", "sm_90")
    assert done.returncode == 0, done.stderr
    assert {arch for _, arch in _kernels(json.loads(done.stdout))} == {"sm_90"}
    done = run(project, "analyze", "--format", "json", "--variant", "baseline", *SMALL)
    assert done.returncode == 0, done.stderr
    assert _kernels(json.loads(done.stdout)) == {("baseline", "gfx942")}  # the variant named, on the project's archs


def test_diff_compares_the_projects_kernels(project):
    done = run(project, "diff", "--set", "TRITON_DEFAULT_FP_FUSION=0", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert {(r["variant"], r["arch"]) for r in doc["rows"]} == {("myops.matmul", "gfx942"), ("myops.rows", "gfx942")}


def test_outside_a_project_the_header_says_the_bundled_variants_are_shown(project, tmp_path):
    done = run(project, "analyze", "--arch", "gfx942", *SMALL, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    header = " ".join(done.stdout.split("vgprscope analyze")[0].split())
    assert header.endswith("kernels: the bundled FlashAttention variants, as no pyproject.toml with "
                           "[tool.vgprscope] is here (--capture, --kernel-dir or --variant choose others)")
    named = run(project, "analyze", "--arch", "gfx942", "--variant", "baseline", *SMALL, cwd=tmp_path)
    assert "bundled FlashAttention variants" not in named.stdout  # asked for by name: nothing to say
    (tmp_path / "pyproject.toml").write_text('[tool.vgprscope]\narchs = ["gfx942"]\n')
    done = run(project, "analyze", "--format", "json", *SMALL, cwd=tmp_path)
    assert "pyproject.toml [tool.vgprscope] names no capture, kernel_dir or variants" in \
        " ".join(json.loads(done.stdout)["machine"]["notes"])
    assert os.path.exists(tmp_path / "pyproject.toml")


def test_scan_retargets_to_the_projects_archs(cache, tmp_path):  # noqa: F811
    """In a project, `scan` recompiles a cache's kernels for its archs, as --arch would; --arch wins."""
    from capture_helpers import cli

    directory, _ = cache
    (tmp_path / "pyproject.toml").write_text('[tool.vgprscope]\narchs = ["gfx950"]\n')
    done = cli("scan", str(directory), "--format", "json", "--jobs", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    recompiled = {r["arch"] for r in json.loads(done.stdout)["rows"] if (r.get("extras") or {}).get("cache") == "recompiled"}
    assert recompiled == {"gfx950"}
    done = cli("scan", str(directory), "--format", "json", "--jobs", "2", "--arch", "sm_90", cwd=tmp_path)
    assert {r["arch"] for r in json.loads(done.stdout)["rows"] if (r.get("extras") or {}).get("cache") == "recompiled"} == {"sm_90"}
