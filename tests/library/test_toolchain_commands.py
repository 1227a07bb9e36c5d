"""``--triton`` and ``--set`` on every command that compiles, and ``triton=`` / ``settings=`` on the library's
calls: a command that compares one set takes one toolchain (several are a usage
error naming the commands that take several), each compiles with the release named (the counts of
``analyze --triton X``, which tests/compile/test_toolchains.py checks against a direct compile under X), ``check --triton
X`` previews the upgrade against the committed baseline, ``baseline save --triton X`` saves X's numbers, and
``vgprscope.diff(...)`` returns the diff with ``.to_pandas()`` / ``.to_json()``.

The other release is installed once per test session into $VGPRSCOPE_TOOLCHAIN_DIR (tests/conftest.py), as
tests/compile/test_toolchains.py does.
"""

from __future__ import annotations

import json

import pytest
from capture_helpers import cli, reports

import vgprscope
from vgprscope.analysis.history.core import registers
from vgprscope.compile import toolchains
from vgprscope.compile.engine import triton_version
from vgprscope.core.errors import UsageError

OTHER = "3.8.0"
SMALL = {"block_m": 64, "block_n": 32, "head_dim": 64, "num_warps": 4, "num_stages": 1}
SMALL_FLAGS = [f"--{k.replace('_', '-')}={v}" for k, v in SMALL.items()]
ONE = {"variant": "baseline", "arch": "gfx942"}
ONE_FLAGS = ["--variant", "baseline", "--arch", "gfx942"]


@pytest.fixture(scope="session")
def other() -> toolchains.Toolchain:
    return toolchains.release(OTHER, print)


# ---- one toolchain where one set is compared: refused before anything is installed --------------------------

ONE_SET = {"compare": ["compare"], "frontier": ["frontier"], "explain": ["explain"], "check": ["check"],
           "baseline save": ["baseline", "save"]}


@pytest.mark.parametrize("command", list(ONE_SET))
@pytest.mark.parametrize("tritons", [["3.8.0", "3.9.0"], ["3.4.0..3.9.0"]], ids=["two", "range"])
def test_a_command_that_compares_one_set_takes_one_triton(command, tritons, tmp_path):
    args = [a for t in tritons for a in ("--triton", t)]
    done = cli(*ONE_SET[command], *args, env={"VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "tc")})
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert f"{command} compiles with one Triton" in line and "vgprscope analyze --triton A --triton B" in line
    assert "vgprscope diff --triton A --triton B" in line and "Traceback" not in done.stderr
    assert not (tmp_path / "tc").exists()  # nothing was installed (nor PyPI asked) to find that out


@pytest.mark.parametrize("call", ["compare", "frontier", "explain", "check", "baseline_save"])
def test_the_library_calls_take_one_triton_by_the_same_rule(call, tmp_path, monkeypatch):
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "tc"))
    with pytest.raises(UsageError, match="compiles with one Triton; got 3.8.0, 3.9.0"):
        getattr(vgprscope, call)(triton=["3.8.0", "3.9.0"])
    assert not (tmp_path / "tc").exists()


@pytest.mark.parametrize("command", ["analyze", "compare", "frontier", "explain", "check", "baseline save", "diff"])
def test_a_setting_that_is_not_name_value_is_a_usage_error(command):
    done = cli(*command.split(), "--set", "TRITON_HIP_USE_BLOCK_PINGPONG", *ONE_FLAGS)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "'TRITON_HIP_USE_BLOCK_PINGPONG' is not NAME=VALUE" in line


def test_the_library_takes_settings_as_a_mapping_or_strings():
    from vgprscope.library.selection import settings_of

    assert settings_of({"A": 1}) == settings_of(["A=1"]) == settings_of("A=1") == {"A": "1"}
    with pytest.raises(UsageError, match="'=1' is not NAME=VALUE"):
        settings_of(["=1"])
    with pytest.raises(UsageError, match="settings=3 is not allowed"):
        settings_of(3)


# ---- each command compiles with the release named -------------------------------------------------------------

@pytest.fixture(scope="module")
def under_other(other):
    """The bundled baseline at a small config on gfx942, analysed under the other release."""
    result = vgprscope.analyze(**ONE, **SMALL, triton=OTHER, jobs=2)
    (rec,) = result.records
    assert rec.ok and rec.triton_version == OTHER and rec.toolchain == OTHER
    return rec


def test_analyze_compare_frontier_and_explain_compile_with_the_release_named(other, under_other):
    here = vgprscope.analyze(**ONE, **SMALL, jobs=2).records[0]
    assert here.triton_version == triton_version() != OTHER
    (line,) = vgprscope.compare(strategies="baseline", arch="gfx942", **SMALL, triton=OTHER, jobs=2).lines
    (kernel,) = line.kernels
    assert kernel.triton_version == OTHER and kernel.usage == under_other.usage
    (front,) = vgprscope.frontier(**ONE, **SMALL, triton=OTHER, jobs=2).frontiers
    assert {lv.record.triton_version for lv in (*front.levels, *front.probes)} == {OTHER}
    assert front.uncapped is not None and front.uncapped.record.usage == under_other.usage
    (expl,) = vgprscope.explain(**ONE, **SMALL, triton=OTHER, jobs=2).explanations
    assert expl.ok and expl.allocation is not None
    assert expl.allocation.as_dict() == vgprscope.explain(**ONE, **SMALL, triton=OTHER).explanations[0].allocation.as_dict()
    # the CLI's options are the library's keywords: the same record
    done = cli("analyze", *ONE_FLAGS, *SMALL_FLAGS, "--triton", OTHER, "-f", "json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["rows"]
    assert row["triton_version"] == OTHER and row["usage"] == json.loads(json.dumps(under_other.as_dict()))["usage"]


def test_a_setting_reaches_the_commands_compile(tmp_path):
    """``--set`` alone: the installed Triton with the setting (AMD buffer operations off changes the count)."""
    plain = vgprscope.analyze(**ONE, **SMALL).records[0]
    (line,) = vgprscope.compare(strategies="baseline", arch="gfx942", **SMALL,
                                settings={"AMDGCN_USE_BUFFER_OPS": "0"}).lines
    assert line.kernels[0].toolchain == f"{triton_version()} AMDGCN_USE_BUFFER_OPS=0"
    assert line.kernels[0].usage != plain.usage


# ---- the gate: a baseline saved under a release, and the upgrade previewed -------------------------------------

def test_baseline_save_triton_saves_that_releases_numbers_and_check_previews_the_upgrade(other, under_other,
                                                                                          tmp_path):
    base = tmp_path / "b.json"
    saved = cli("baseline", "save", "--triton", OTHER, *ONE_FLAGS, "--baseline", str(base), "--jobs", "2")
    assert saved.returncode == 0, saved.stderr
    assert f"Triton {OTHER}" in saved.stderr.splitlines()[-1]
    doc = json.loads(base.read_text())
    assert doc["triton_version"] == OTHER and doc["entries"]
    # X's numbers: the library's save under X gives the same entries, and check under X finds them all same
    again = vgprscope.baseline_save(triton=OTHER, **ONE, baseline=tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["entries"] == doc["entries"]
    assert again.triton_version == OTHER and again.written is not None
    same = vgprscope.check(triton=OTHER, **ONE, baseline=base)
    assert same.passed and {d.change.name for d in same.result.entries} == {"SAME"}
    # the installed Triton against X's baseline: a version mismatch, unless it is the point (--triton)
    mismatch = cli("check", *ONE_FLAGS, "--baseline", str(base))
    assert mismatch.returncode == 2 and f"compiled with Triton {OTHER}" in mismatch.stderr
    preview = cli("check", "--triton", triton_version(), *ONE_FLAGS, "--baseline", str(base), "-f", "json")
    assert preview.returncode in (0, 1), preview.stderr
    report = json.loads(preview.stdout)
    assert report["exit_code"] == preview.returncode
    assert any("a preview of the upgrade" in n for n in report["notes"])
    assert {r["key"] for r in report["rows"]} == set(doc["entries"])


def test_vgprscope_diff_returns_the_diff_as_data(other, under_other):
    result = vgprscope.diff(triton=[OTHER, triton_version()], **ONE, **SMALL, jobs=2)
    assert result.compared == 1 and result.before.version == OTHER and result.after.version == triton_version()
    here = vgprscope.analyze(**ONE, **SMALL).records[0]
    frame = result.to_pandas()
    from vgprscope.analysis.diff.view import CSV_FIELDS

    assert list(frame.columns) == list(CSV_FIELDS)
    metric = "vgpr_total"
    (row,) = frame[frame["metric"] == metric].to_dict("records")
    assert (row["value_before"], row["value_after"]) == (registers(under_other), registers(here))
    # the JSON is the CLI's (`vgprscope diff -f json`), the machine line aside
    done = cli("diff", "--triton", OTHER, "--triton", triton_version(), *ONE_FLAGS, *SMALL_FLAGS, "-f", "json")
    assert done.returncode == (0 if result.passed else 1), done.stderr
    ours, theirs = json.loads(result.to_json()), json.loads(done.stdout)
    for doc in (ours, theirs):
        doc.pop("machine")
    assert ours == theirs
    assert result.summary() in repr(result)


def test_report_triton_upgrade_writes_the_steps_the_history_and_the_chart(other, tmp_path):
    """`python -m tools.reports triton-upgrade` (reports/triton-upgrade.md's data): each step's line is what
    `vgprscope diff` says of the same two releases, the history table is `analyze --triton A --triton B -f md`'s."""
    here = triton_version()
    done = reports("triton-upgrade", "--triton", OTHER, "--triton", here, *ONE_FLAGS, "--out", str(tmp_path),
               "--jobs", "2")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "triton-upgrade-history.md").read_text()
    assert (tmp_path / "triton-upgrade.png").stat().st_size > 1000
    assert f"Reproduce: `python -m tools.reports triton-upgrade --triton {OTHER} --triton {here} --variant baseline " \
           "--arch gfx942`" in text
    said = vgprscope.diff(triton=[OTHER, here], **ONE, jobs=2).summary().split(": ", 1)[1]
    assert f"| {OTHER} -> {here} | {said} |" in text
    history = cli("analyze", "--triton", OTHER, "--triton", here, *ONE_FLAGS, "-f", "md")
    assert history.returncode == 0, history.stderr
    table = history.stdout[history.stdout.index("| kernel |"):]
    assert table.strip() in text
