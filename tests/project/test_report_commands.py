"""``python -m tools.reports ...``: the committed reports are built by the repository's development command
(tools/reports/, outside the wheel; vgprscope itself has no `report` command), each report's header names the
command that reproduces it, and the commands a report names reproduce its sections. (The history report under
another release: tests/library/test_toolchain_commands.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from capture_helpers import ROOT, cli, reports

REPORTS = ROOT / "reports"


def test_report_explain_writes_the_report_and_each_section_is_its_named_command(tmp_path):
    done = reports("explain", "--arch", "sm_90", "--out", str(tmp_path), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "explain-sm_90.md").read_text()
    assert "Produced by `python -m tools.reports explain --arch sm_90`" in text
    sections = text.split("\n## At ")[1:]
    assert len(sections) == 2
    for section in sections:
        (command,) = re.findall(r"`(vgprscope explain [^`]+)`", section)
        alone = cli(*command.split()[1:], "--jobs", "2")
        assert alone.returncode == 0, alone.stderr
        # the section is the command's output, from its first kernel on (its title, machine line and
        # reproduce line aside)
        body = alone.stdout[alone.stdout.index("\n### "):]
        assert body.strip() in section, command


@pytest.mark.parametrize("name, command", [
    ("compare-gfx942.md", "python -m tools.reports compare --arch gfx942"),
    ("explain-gfx942.md", "python -m tools.reports explain --arch gfx942"),
    ("third-party-liger-kernel.md", "python -m tools.reports third-party"),
    ("ecosystem-h200.md", "python -m tools.reports ecosystem tests/fixtures/ecosystem"),
    ("bench-h200.md", "python -m tools.reports bench --preset hopper-prefill --preset decode"),
    ("scan-h100-triton36-inductor-block.md", "python -m tools.reports scan-cache h100-triton36-inductor-block --triton "
                                             "3.6.0 --arch gfx942"),
])
def test_each_committed_report_names_the_command_that_reproduces_it(name, command):
    head = "\n".join((REPORTS / name).read_text().splitlines()[:8])
    assert f"`{command}" in head


def test_vgprscope_has_no_report_command():
    """The report builders are not part of the installed tool: `vgprscope report` is an unknown command."""
    done = cli("report", "explain", "--arch", "sm_90")
    assert done.returncode == 2 and "No such command 'report'" in done.stderr
    listed = re.findall(r"^│ (\w+) ", cli("--help").stdout, re.M)
    assert "analyze" in listed and "report" not in listed


def test_no_report_names_a_script_that_is_gone():
    """Every script of scripts/ or .ci/ a report or the README names exists (one kept in git's history is
    named with its commit: `git show SHA:scripts/...`)."""
    named = set()
    for f in [*REPORTS.glob("*.md"), ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        named |= {(f.name, m) for m in re.findall(r"(?<![0-9a-f]:)(?:scripts|\.ci)/[\w/]+\.(?:py|sh)", f.read_text())}
    missing = sorted((f, m) for f, m in named if not (ROOT / m).exists())
    assert missing == []


def test_scripts_holds_development_tooling_only():
    """What users run to build reports is a command; the probes whose results are in reports/ are gone; the GPU
    machine's shell scripts sit beside CI's."""
    left = sorted(p.name for p in (ROOT / "scripts").iterdir() if p.suffix in (".py", ".sh"))
    assert left == ["_speed.py", "bench_capture_overhead.py", "bench_grid_speed.py", "bench_pytest_plugin.py",
                    "bench_scan.py",
                    "bench_tool_speed.py", "bench_toolchain_speed.py", "compare_cubins.py", "gluon_proof.py",
                    "gpu_fla_ops.py", "gpu_inductor_block.py", "gpu_loop_counts.py", "inductor_spill_search.py", "make_fixtures.py",
                    "make_scan_fixture.py", "measure_tolerances.py", "place_tests.py", "profile_ci_tests.py",
                    "validate_occupancy_gpu.py"]
    assert sorted(p.name for p in (ROOT / ".ci").glob("gpu_*.sh")) == [
        "gpu_capture.sh", "gpu_capture_fla.sh", "gpu_capture_inductor.sh", "gpu_ecosystem.sh", "gpu_env.sh",
        "gpu_loop_counts.sh", "gpu_prefill.sh", "gpu_run.sh", "gpu_ws_regalloc.sh"]


@pytest.mark.parametrize("args, needle", [
    (["compare", "--frontier-settings", "nightly"], "--frontier-settings 'nightly': allowed: production, seeds"),
    (["triton-upgrade", "--variant", "baseline"], "needs the releases: --triton 3.4.0..3.9.0"),
    (["compare", "--arch", ""], "empty name"),
    (["scan-cache"], "needs the cache directory: python -m tools.reports scan-cache DIR"),
])
def test_bad_report_options_are_one_line(args, needle, tmp_path):
    done = reports(*args, "--out", str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert needle in line


def test_report_bench_without_a_gpu_is_one_line(tmp_path):
    done = reports("bench", "--out", str(tmp_path), env={"CUDA_VISIBLE_DEVICES": "", "TRITON_INTERPRET": "1"})
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "GPU" in line and "Traceback" not in done.stderr
    assert not list(Path(tmp_path).iterdir())


def test_a_setting_is_a_default_so_a_strategy_defined_by_a_smaller_tile_takes_its_own():
    """The compare report's settings are default configurations: small-tiles (BLOCK_M <= 64 by definition)
    is compiled at its cap, where `compare --block-m 128` (a request) refuses it on its row."""
    from tools.reports.compare import compare_setting, own_options

    production = dict(block_m=128, block_n=64, head_dim=128, num_warps=4, num_stages=1)
    assert own_options(production) == {"small-tiles": production | {"block_m": 64}}
    assert own_options(production | {"block_m": 64}) == {}
    lines, commands = compare_setting("gfx942", production | {"head_dim": 64}, False, 2)
    small = next(ln for ln in lines if ln.variant == "small-tiles")
    assert small.ok and small.config.startswith("64x64 ")
    assert [ln.variant for ln in lines][:2] == ["baseline", "small-tiles"]  # the variants' order, not call order
    assert any("--strategies small-tiles " in c and "--block-m 64 " in c for c in commands)
