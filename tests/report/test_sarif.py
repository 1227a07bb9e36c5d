"""SARIF 2.1.0 for code scanning: check's regressions and explain's spill sites, each validated against the
OASIS schema (tests/fixtures/sarif) and located in the user's own file and line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from capture_helpers import cli

SCHEMA = json.loads((Path(__file__).parents[1] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def scale(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    tl.store(out + offs, {body}, mask=mask)
'''

RUN = '''import sys
from pathlib import Path

import torch
sys.path.insert(0, str(Path(__file__).parent))
from ops import scale  # noqa: E402

x = torch.randn(4096)
out = torch.empty_like(x)
scale[(4,)](x, out, x.numel(), BLOCK=1024)
print("ok")
'''

HEAVY = "tl.sin(v) * tl.cos(v * 3.0) + tl.exp(v) * tl.log(tl.abs(v) + 1.0) + tl.sqrt(tl.abs(v) + 2.0)"


def schema_validator():
    """jsonschema (the test extra): where it is absent (a GPU machine with torch alone) the tests that validate
    against the schema are skipped, saying why; the module's other tests run."""
    return pytest.importorskip("jsonschema", reason="validating SARIF against its schema needs jsonschema "
                                                    "(pip install '.[test]')")


def validate(log: dict) -> None:
    schema_validator().Draft4Validator(SCHEMA).validate(log)


def baselined_project(root: Path, archs: str) -> Path:
    """A user's project: one kernel in ops.py, captured under the interpreter, its baseline saved."""
    (root / "pyproject.toml").write_text(f'[tool.vgprscope]\ncapture = "cap.json"\narchs = [{archs}]\n')
    (root / "ops.py").write_text(KERNEL.format(body="v * 2.0"))
    (root / "run.py").write_text(RUN)
    done = cli("capture", "-o", str(root / "cap.json"), "--", sys.executable, str(root / "run.py"),
               env={"TRITON_INTERPRET": "1"}, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    assert cli("baseline", "save", cwd=root).returncode == 0
    return root


@pytest.fixture(scope="module")
def regressed(tmp_path_factory):
    """A project whose kernel got heavier after its baseline was saved: `check --format sarif` output."""
    root = baselined_project(tmp_path_factory.mktemp("sarif"), '"gfx942", "sm_90"')
    (root / "ops.py").write_text(KERNEL.format(body=HEAVY))
    done = cli("check", "--format", "sarif", "-o", str(root / "regs.sarif"), cwd=root)
    return root, done


def test_check_writes_a_valid_sarif_log_with_a_result_per_regression(regressed):
    root, done = regressed
    assert done.returncode == 1, done.stderr[-2000:]
    log = json.loads((root / "regs.sarif").read_text())
    validate(log)
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "vgprscope"
    results = run["results"]
    assert results and all(r["level"] in ("error", "warning") for r in results)
    errors = [r for r in results if r["level"] == "error"]
    assert errors, results
    rule_ids = {r["ruleId"] for r in results}
    assert rule_ids <= {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    assert {"vgprscope.vgpr_total", "vgprscope.regs"} & rule_ids
    for r in results:
        (loc,) = r["locations"]
        phys = loc["physicalLocation"]
        assert phys["artifactLocation"]["uri"] == "ops.py"  # relative to the repository root
        assert phys["region"]["startLine"] == 6  # def scale(
        assert " -> " in r["message"]["text"] and "scale" in r["message"]["text"]


def test_one_result_per_entry_and_rule_and_none_for_what_no_rule_gates(regressed):
    """One edit gave an alert per metric on the kernel's line (occupancy, vgpr_total, regs, and arch_vgpr, which
    the table calls 'not gated'): one result per entry and rule now, none for a metric no rule gates."""
    root, _ = regressed
    results = json.loads((root / "regs.sarif").read_text())["runs"][0]["results"]
    keys = [(r["partialFingerprints"]["vgprscopeKey/v1"].rsplit("/", 1)[0], r["ruleId"]) for r in results]
    assert len(keys) == len(set(keys)), keys
    assert not [r for r in results if r["ruleId"] == "vgprscope.arch_vgpr"], results
    assert all("within the rule arch_vgpr:off" not in r["message"]["text"] for r in results)
    per_entry: dict[str, int] = {}
    for key, _ in keys:
        per_entry[key] = per_entry.get(key, 0) + 1
    assert max(per_entry.values()) <= 2, keys  # sm_90: regs crossing its step, and the occupancy it cost


def test_check_sarif_of_an_unchanged_project_has_no_result(regressed):
    root, _ = regressed
    kernel = (root / "ops.py").read_text()
    try:
        (root / "ops.py").write_text(KERNEL.format(body="v * 2.0"))
        done = cli("check", "--format", "sarif", cwd=root)
    finally:
        (root / "ops.py").write_text(kernel)
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(done.stdout)
    validate(log)
    assert log["runs"][0]["results"] == []


def test_the_schema_check_can_fail():
    with pytest.raises(schema_validator().ValidationError):
        validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]})  # a driver needs a name


def test_explain_sarif_has_a_result_per_spill_site_at_its_source_line():
    """The seeds' 128x128 tile with 8 wavefronts spills on gfx942: each site is a result in the bundled kernel's
    own file (run from the repository root, paths are relative to it), a warning inside the K/V loop."""
    from capture_helpers import ROOT

    done = cli("explain", "--variant", "baseline", "--arch", "gfx942", "--block-m", "128", "--block-n", "128",
               "--num-warps", "8", "--format", "sarif", cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(done.stdout)
    validate(log)
    results = log["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} == {"vgprscope.spill"}
    assert {r["level"] for r in results} == {"warning", "note"}  # sites inside the loop and outside
    located = [r["locations"][0]["physicalLocation"] for r in results if "locations" in r]
    assert located and all(p["artifactLocation"]["uri"].startswith("kernels/") for p in located)
    assert all(p["region"]["startLine"] > 1 for p in located)


def test_a_spill_site_is_never_located_in_an_installed_package_under_the_repository(tmp_path):
    """CI's virtual environment sits inside the checkout (.venv-ci): Triton's own standard.py there is not the
    user's source; the site falls to the next frame of its chain, in the user's file."""
    from vgprscope.report.sarif import _site_location

    (tmp_path / ".venv-ci" / "lib" / "site-packages").mkdir(parents=True)
    (tmp_path / ".venv-ci" / "lib" / "site-packages" / "standard.py").write_text("")
    (tmp_path / "ops.py").write_text("")
    assert _site_location(("standard.py:12",), None, tmp_path) is None
    where = _site_location(("standard.py:12", "ops.py:7"), str(tmp_path / "ops.py"), tmp_path)
    assert (where.uri, where.line) == ("ops.py", 7)
