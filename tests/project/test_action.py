"""The repository's GitHub Action (action.yml, composite): its steps as a user's CI runs them, on a user's
repository built here. The install step is pip's; the gate step (.github/action/gate.sh) runs as a shell
script with the variables Actions gives it, and must leave a job summary, annotations, a SARIF file that
validates, and the gate's exit code for the last step."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from capture_helpers import ROOT

from tests.report.test_sarif import HEAVY, KERNEL, baselined_project, validate

ACTION = ROOT / "action.yml"
GATE = ROOT / ".github" / "action" / "gate.sh"
SUMMARY = ROOT / ".github" / "action" / "summary.sh"


def test_the_action_is_composite_and_each_step_uses_its_own_inputs_and_scripts():
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    inputs = set(action["inputs"])
    assert {"triton-version", "archs", "capture", "baseline", "strict", "diff-triton", "sarif", "html"} <= inputs
    text = ACTION.read_text()
    assert set(re.findall(r"inputs\.([a-z-]+)", text)) <= inputs
    for step in action["runs"]["steps"]:
        for script in re.findall(r"github\.action_path \}\}/([^\"]+)\"", step.get("run", "")):
            assert (ROOT / script).is_file(), script
    uses = {s.get("uses", "").split("@")[0] for s in action["runs"]["steps"]}
    assert "github/codeql-action/upload-sarif" in uses and "actions/setup-python" in uses
    # the HTML report: uploaded as the job's artifact, its URL linked from the job summary by summary.sh
    upload = next(s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "${{ steps.gate.outputs.html }}"
    link = next(s for s in action["runs"]["steps"] if "summary.sh" in s.get("run", ""))
    assert link["env"]["VGPRSCOPE_HTML_URL"] == f"${{{{ steps.{upload['id']}.outputs.artifact-url }}}}"


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """A user's repository with a captured kernel and a saved baseline (a git checkout, as Actions has)."""
    return baselined_project(tmp_path_factory.mktemp("action-repo"), '"gfx942"')


def run_gate(root: Path, tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict, Path]:
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           **{f"VGPRSCOPE_{k.upper()}": v for k, v in inputs.items()}}
    done = subprocess.run([shutil.which("bash") or "bash", str(GATE)], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return done, outputs, summary


def test_an_unchanged_repository_passes_with_an_empty_sarif(repository, tmp_path):
    done, outputs, summary = run_gate(repository, tmp_path, sarif="out.sarif")
    assert done.returncode == 0, done.stderr[-2000:]
    assert outputs["exit-code"] == "0" and outputs["sarif"] == "out.sarif"
    log = json.loads((repository / "out.sarif").read_text())
    validate(log)
    assert log["runs"][0]["results"] == []
    assert "vgprscope check" in summary.read_text()


def test_a_regression_fails_with_summary_annotations_and_sarif_results(repository, tmp_path):
    kernel = (repository / "ops.py").read_text()
    (repository / "ops.py").write_text(KERNEL.format(body=HEAVY))
    try:
        done, outputs, summary = run_gate(repository, tmp_path, strict="true")
    finally:
        (repository / "ops.py").write_text(kernel)
    assert done.returncode == 0, done.stderr[-2000:]  # the step succeeds; the action's last step exits 1
    assert outputs["exit-code"] == "1"
    assert "::error" in done.stdout
    log = json.loads((repository / outputs["sarif"]).read_text())
    validate(log)
    errors = [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    assert errors and errors[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "ops.py"
    assert "worse" in summary.read_text()


def test_the_diff_triton_mode_previews_the_projects_own_kernels(repository, tmp_path):
    """With `diff-triton`, the gate step runs `vgprscope diff` in the user's repository: it compiles the
    project's captured kernels on the project's archs ([tool.vgprscope], as `check` does), never the bundled
    variants. The other side here is this environment's own Triton (a Python environment is a side too)."""
    done, outputs, summary = run_gate(repository, tmp_path, diff_triton=sys.executable)
    assert done.returncode == 0, done.stderr[-2000:]
    assert outputs["exit-code"] == "0", done.stdout[-3000:] + done.stderr[-3000:]
    log = done.stdout
    assert "vgprscope diff --triton" in log and "scale" in log
    assert "gfx942" in log and not any(v in log for v in ("attn_fwd", "row-stream", "bundled FlashAttention"))
    assert "on gfx942: none of the 1 kernel x arch entr" in " ".join(log.split())
    assert "scale" in summary.read_text()


def test_the_html_report_is_written_for_the_upload_and_linked_from_the_summary(repository, tmp_path):
    """gate.sh writes the HTML report beside the SARIF (from the compile cache) and names it in its outputs
    for the upload step; summary.sh puts the uploaded artifact's link in the job summary."""
    from browser_helpers import remote_references, validate_html

    done, outputs, summary = run_gate(repository, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    page = repository / outputs["html"]
    assert outputs["html"] == "vgprscope-report.html"
    text = page.read_text()
    validate_html(text)
    assert remote_references(text) == []
    assert 'class="verdict pass"' in text and "vgprscope check passed" in text
    url = "https://github.com/org/repo/actions/runs/1/artifacts/2"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "VGPRSCOPE_HTML": outputs["html"],
           "VGPRSCOPE_HTML_URL": url}
    linked = subprocess.run([shutil.which("bash") or "bash", str(SUMMARY)], cwd=repository, env=env,
                            capture_output=True, text=True, timeout=60)
    assert linked.returncode == 0, linked.stderr
    said = summary.read_text()
    assert "vgprscope check" in said  # the gate's own summary first, then the link under it
    assert f"[HTML report with charts]({url})" in said
