"""The torch.compile page of the site (docs/tasks/torch-compile.md): its CI recipe runs, as written, on the committed capture of a
torch.compile'd block (the capture a GPU run would have committed) and on the Inductor cache directory the
same run left on the H100, GPU-free and without torch in the commands' path."""

from __future__ import annotations

import gzip
import re
import shlex
import shutil
import tarfile
from pathlib import Path

import pytest
from fixture_paths import unpack
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "tasks" / "torch-compile.md").read_text()
COMMANDS = [line for block in re.findall(r"^```console\n(.*?)^```$", SECTION, re.M | re.S)
            for line in block.splitlines() if line.startswith("vgprscope ")]
_register()


def test_the_section_has_the_ci_recipe():
    verbs = [shlex.split(c)[1] for c in COMMANDS]
    assert verbs == ["baseline", "check", "diff", "scan"]
    assert "vgprscope capture -o model-capture.json -- python train.py" in SECTION  # the GPU step, once


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """What a repository holds after the GPU step: the capture; and a copy of Inductor's cache directory."""
    where = tmp_path_factory.mktemp("model")
    fixtures = ROOT / "tests" / "fixtures"
    (where / "model-capture.json").write_bytes(gzip.open(fixtures / "inductor_block_h100_capture.json.gz").read())
    with tarfile.open(fixtures / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, where / "h100")
    shutil.move(where / "h100" / "inductor", where / "torchinductor_alice")
    return where


def test_the_recipe_runs_in_order(project, monkeypatch):
    """Each command in order: the baseline saved, the gate passing on it, the upgrade previewed (exit 1: the
    block's kernels regress from 3.6.0 to 3.9.0 on sm_90, which is what the preview is for), the cache
    scanned."""
    monkeypatch.chdir(project)
    outputs = {}
    for line in COMMANDS:
        argv = shlex.split(line)[1:]
        res = CliRunner().invoke(app, argv)
        expected = (0, 1) if argv[0] == "diff" else (0,)
        assert res.exit_code in expected, f"{line}\n{res.output}"
        outputs[argv[0]] = res.output
    assert "24 entries" in outputs["baseline"]
    assert "check passed: 0 worse, 0 better, 24 same" in outputs["check"]
    assert "3.6.0 -> 3.9.0 on sm_90" in outputs["diff"]
    assert "cfg XBLOCK=1024,num_warps=4,num_stages=1" in outputs["diff"]
    assert "7 kernels, 12 configs, 0 unread" in outputs["scan"]
    assert "triton_per_fused__fused_rms_norm_0" in outputs["scan"]
