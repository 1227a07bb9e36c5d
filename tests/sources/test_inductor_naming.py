"""An Inductor row names its kernel so a person can find it: a max-autotune template's tile (BLOCK_M x BLOCK_N x
BLOCK_K, which its generated source fixes in the body, not in the launch), the generated module's file and the
kernel's line, and what the graph fuses in it; the notes on how every row was compiled are said once per table;
the machine line names the Triton that compiled the rows.

tests/fixtures/inductor_max_autotune_mm_capture.json.gz: max-autotune's matmul candidates (six ``triton_mm``
modules) and the chosen template of a Llama-style block on an H100; inductor_block_h100_cache.tar.xz: the
default-mode block's Inductor cache, graph module included."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import pytest
from capture_helpers import ROOT, cli
from fixture_paths import unpack

from vgprscope.captures.model import load_capture
from vgprscope.core.records import LaunchConfig
from vgprscope.sources.capture import launch_config
from vgprscope.sources.inductor import fused_ops, inductor_capture, inductor_slot, launch_tile, template_tile

FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def autotuned(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mm") / "cap.json"
    path.write_bytes(gzip.open(FIXTURES / "inductor_max_autotune_mm_capture.json.gz").read())
    return path


@pytest.fixture(scope="module")
def block_cache(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("block")
    with tarfile.open(FIXTURES / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, directory)
    return directory / "inductor"


def test_a_templates_tile_is_read_from_its_body_and_shown_in_its_config(autotuned):
    launches = load_capture(autotuned).launches
    shown = sorted((x.kernel.qualname, launch_config(x).short()) for x in launches)
    assert shown == [
        ("triton_mm", "bf16 128x128x128 w8 s4"), ("triton_mm", "bf16 128x128x32 w4 s3"),
        ("triton_mm", "bf16 128x128x32 w8 s2"), ("triton_mm", "bf16 128x128x64 w4 s3"),
        ("triton_mm", "bf16 128x128x64 w8 s5"), ("triton_mm", "bf16 64x128x128 w4 s4"),
        ("triton_tem_fused__fused_rms_norm__unsafe_view_add_mm_t_view_7", "bf16 128x128x64 w4 s3")]
    tiles = {launch_tile(x) for x in launches}
    assert (("BLOCK_M", 64), ("BLOCK_N", 128), ("BLOCK_K", 128)) in tiles
    # the slot is the config, tile included: two candidates with one warp count are two slots
    mm = [x for x in launches if x.kernel.qualname == "triton_mm" and x.options.get("num_warps") == 4]
    assert len({inductor_slot(x.args, x.options, launch_tile(x)) for x in mm}) == len(mm) == 3
    assert inductor_slot((), {"num_warps": 4, "num_stages": 3}, (("BLOCK_M", 64), ("BLOCK_N", 32))) == \
        "cfg BLOCK_M=64,BLOCK_N=32,num_warps=4,num_stages=3"


def test_the_tile_is_part_of_the_config_only_where_there_is_one():
    """A config without a tile keys as it always did (baselines saved before keep their keys)."""
    plain = LaunchConfig(args=(), constexprs=(("XBLOCK", 1024),), options=(("num_warps", 4),))
    tiled = LaunchConfig(args=(), constexprs=(), options=(("num_warps", 4),), tile=(("BLOCK_M", 128),))
    assert "tile" not in plain.as_dict() and tiled.as_dict()["tile"] == {"BLOCK_M": 128}
    assert LaunchConfig.from_dict(tiled.as_dict()) == tiled and LaunchConfig.from_dict(plain.as_dict()) == plain
    assert template_tile("def k(x, XBLOCK: tl.constexpr):\n    xoffset = 0\n") == ()
    assert template_tile("def k(a):\n    BLOCK_K : tl.constexpr = 32\n    BLOCK_M : tl.constexpr = 64\n") == \
        (("BLOCK_M", 64), ("BLOCK_K", 32))


def test_scan_names_each_generated_kernel_by_its_module_line_and_what_it_fuses(block_cache):
    """The graph module names each kernel's module and the ATen operations fused in it; a scanned row carries
    them, with the kernel's def line."""
    fuses = fused_ops(block_cache)
    assert fuses["cvte4brwdkbcggybqmhczmf2xtiw63unqnwjdjdf7u4x4qv3dy4b.py"] == \
        "aten._unsafe_view, aten.silu, aten.mul"
    assert len(fuses) == 7
    cache = inductor_capture(block_cache)
    silu = next(x for x in cache.capture.launches if x.kernel.qualname == "triton_poi_fused__unsafe_view_mul_silu_5")
    assert (silu.producer["line"], silu.producer["fuses"]) == (18, "aten._unsafe_view, aten.silu, aten.mul")
    assert "tile" not in silu.producer  # a pointwise kernel takes its block as an argument


def test_the_tables_tell_every_candidate_apart_and_fit_100_columns(autotuned):
    """Six ``triton_mm`` candidates: each its own title line naming its module, its tile in the config."""
    done = cli("analyze", "--capture", str(autotuned), "--arch", "sm_90", "--jobs", "2", env={"COLUMNS": "100"})
    lines = done.stdout.splitlines()
    titles = [ln for ln in lines if ln.startswith("inductor triton_mm  (")]
    assert len(titles) == len(set(titles)) == 6, done.stdout
    assert all(t.endswith("…py)") for t in titles)
    assert all(len(ln) <= 100 for ln in lines)
    assert any(ln.startswith("sm_90  64x128x128 w4 s4 ") for ln in lines)


def test_a_checks_snapshot_note_is_said_once(autotuned, tmp_path):
    base = tmp_path / "base.json"
    done = cli("baseline", "save", "--capture", str(autotuned), "--arch", "sm_90", "--baseline", str(base),
               "--jobs", "2")
    assert done.returncode == 0, done.stderr
    done = cli("check", "--capture", str(autotuned), "--arch", "sm_90", "--baseline", str(base), "--jobs", "2",
               env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    said = done.stdout.replace("\n  ", " ")
    assert said.count("compiled from the capture's snapshot") == 1, done.stdout
    assert all(len(ln) <= 100 for ln in done.stdout.splitlines())


def test_the_machine_line_names_the_triton_that_compiled_the_rows():
    from vgprscope.report.machine import compile_only

    m = compile_only()
    assert m.for_rows([m.triton]) is m and m.for_rows([]) is m
    other = m.for_rows(["3.6.0"])
    assert other.line().split(" | ")[1] == f"Triton 3.6.0 (the rows'; {m.triton} installed)"
