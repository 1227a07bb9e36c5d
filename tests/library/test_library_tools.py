"""The commands that compile nothing have library calls, and the CLI prints what they return: the occupancy
calculator (``library.occupancy.occupancy``) and the toolchain store (``library.toolchains``)."""

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
