"""The commands that compile nothing have library calls, and the CLI prints what they return: the occupancy
calculator (``library.occupancy.occupancy``), the toolchain store (``library.toolchain_store``), the archs and
the variants (``library.info``); each is exported by ``vgprscope``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app
from vgprscope.core.errors import UsageError
from vgprscope.library.occupancy import occupancy

_register()


def test_occupancy_is_a_call_whose_answer_the_command_prints():
    result = occupancy("gfx942", vgprs=128, lds=32768, workgroup=256, ladder=True)
    assert result.cannot_launch is None and result.calculation.occupancy is not None
    doc = result.as_dict()
    assert (doc["arch"], doc["vendor"], doc["unit"]) == ("gfx942", "amd", "waves/SIMD")
    assert doc["ladder"][0]["lo"] <= 128 and doc["ladder"]
    cli = CliRunner().invoke(app, ["occupancy", "--arch", "gfx942", "--vgprs", "128", "--lds", "32768",
                                   "--workgroup", "256", "--ladder", "--format", "json"])
    assert cli.exit_code == 0 and json.loads(cli.stdout) == doc


def test_a_count_of_the_other_vendor_and_a_kernel_that_cannot_launch():
    with pytest.raises(UsageError, match=r"--regs applies to NVIDIA archs only; gfx942 is AMD: use --vgprs"):
        occupancy("gfx942", regs=64)
    over = occupancy("sm_80", regs=64, shared=300_000, threads=128)
    assert over.cannot_launch and over.calculation.occupancy is not None
    assert over.calculation.occupancy.value == 0


def test_the_toolchain_store_is_a_call_whose_listing_the_command_prints(tmp_path, monkeypatch):
    from vgprscope.compile.toolchains import ToolchainError
    from vgprscope.library.toolchain_store import installed_toolchains, remove_toolchain

    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "store"))
    found = installed_toolchains()
    assert found.entries == () and found.directory == tmp_path / "store" and not found.broken
    empty = CliRunner().invoke(app, ["toolchains"])
    assert empty.exit_code == 0 and f"no Triton toolchain installed yet in {tmp_path / 'store'}" in empty.stderr
    with pytest.raises(ToolchainError, match="Triton 3.1.0 is not installed as a toolchain; installed: none"):
        remove_toolchain("3.1.0")


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "json"])
def test_archs_is_a_call_whose_answer_the_command_prints(fmt, monkeypatch):
    import vgprscope

    monkeypatch.setenv("COLUMNS", "160")  # the table fits the terminal: the same width for the call and the command

    found = vgprscope.archs()
    assert {"gfx942", "sm_90"} <= {a.name for a in found.archs}
    assert [a["name"] for a in found.as_dict()] == [r["arch"] for r in found.rows()] == [a.name for a in found.archs]
    cli = CliRunner().invoke(app, ["archs", "--format", fmt])
    assert cli.exit_code == 0 and cli.stdout == found.render(fmt) + ("" if found.render(fmt).endswith("\n") else "\n")
    if fmt == "json":
        assert json.loads(cli.stdout) == json.loads(found.to_json()) and len(found.as_dict()) == len(found.archs)


def test_variants_is_a_call_of_the_bundled_or_a_kernel_directorys_variants(tmp_path):
    import vgprscope

    bundled = vgprscope.variants()
    names = [v.name for v in bundled.variants]
    assert "baseline" in names and [d["name"] for d in bundled.as_dict()] == names
    cli = CliRunner().invoke(app, ["variants", "--format", "json"])
    assert cli.exit_code == 0 and json.loads(cli.stdout) == bundled.as_dict()
    md = CliRunner().invoke(app, ["variants", "--format", "md"])
    assert md.stdout == bundled.render("md")
    with pytest.raises(UsageError, match="unknown format 'html'; formats: table, md, csv, json"):
        bundled.render("html")
    (tmp_path / "kd").mkdir()
    with pytest.raises(UsageError, match="no variant"):
        vgprscope.variants(tmp_path / "kd")


def test_the_library_calls_are_exported_as_plain_functions_that_no_subpackage_shadows():
    """``vgprscope.<call>`` for every name of ``__all__``: a function of the library (or ``attention``), resolved on
    first use; no module of the package's top level has the name, so importing one never replaces a call."""
    import inspect
    from pathlib import Path

    import vgprscope

    top = Path(vgprscope.__file__).parent
    calls = [n for n in vgprscope.__all__ if n != "__version__"]
    assert {"archs", "variants", "occupancy", "installed_toolchains", "remove_toolchain"} <= set(calls)
    for name in calls:
        assert not (top / name).exists() and not (top / f"{name}.py").exists(), name
        assert inspect.isfunction(getattr(vgprscope, name)), name
