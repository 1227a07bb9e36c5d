"""Parsers on committed compiler outputs (tests/fixtures, made by scripts/make_fixtures.py).

Expected values were read off the fixture files by hand: the `.amdgpu_metadata` keys, the `; NumVgprs:` /
`; Occupancy:` comments, `grep -c` of the spill-annotated memory instructions, and the ptxas / cuobjdump
lines. They are exact: a parser change that moves any of them must explain itself.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from vgprscope.analysis.frontier.core import LOOP_FIELDS
from vgprscope.core.parse.amdgcn import AmdgcnParseError, kernel_info, parse_amdgcn, spill_instructions
from vgprscope.core.parse.nvidia import NvidiaParseError, nvidia_usage, parse_cuobjdump_resources, parse_ptxas_log

FIX = Path(__file__).parents[1] / "fixtures"


def amdgcn(name: str) -> tuple[str, dict]:
    meta = json.loads((FIX / f"{name}.json").read_text())
    return gzip.decompress((FIX / f"{name}.amdgcn.gz").read_bytes()).decode(), meta


AMD_EXPECTED = {
    "gfx942_agpr": dict(arch_vgpr=256, agpr=18, vgpr_total=274, sgpr=61, vgpr_spill=0, sgpr_spill=0,
                        scratch_bytes=0, lds_static=0, lds_dynamic=32768, spill_stores=0, spill_loads=0,
                        spill_insts_in_loop=0, llvm_occupancy=1, max_flat_workgroup_size=256, code_bytes=14880,
                        vgpr_alloc=274),
    "gfx90a_spills": dict(arch_vgpr=256, agpr=256, vgpr_total=512, sgpr=104, vgpr_spill=838, sgpr_spill=66,
                          scratch_bytes=1936, lds_static=0, lds_dynamic=65536, spill_stores=838, spill_loads=913,
                          spill_insts_in_loop=1399, llvm_occupancy=1, max_flat_workgroup_size=256,
                          code_bytes=62396,
                          vgpr_alloc=512),
    "gfx950_plain": dict(arch_vgpr=234, agpr=0, vgpr_total=234, sgpr=103, vgpr_spill=0, sgpr_spill=0,
                         scratch_bytes=0, lds_static=0, lds_dynamic=32768, spill_stores=0, spill_loads=0,
                         spill_insts_in_loop=0, llvm_occupancy=2, max_flat_workgroup_size=256, code_bytes=13032,
                         vgpr_alloc=234),
    "gfx1100_wave32": dict(arch_vgpr=256, agpr=0, vgpr_total=256, sgpr=73, vgpr_spill=1537, sgpr_spill=0,
                           scratch_bytes=2204, lds_static=0, lds_dynamic=32768, spill_stores=730, spill_loads=698,
                           spill_insts_in_loop=641, llvm_occupancy=5, max_flat_workgroup_size=128,
                           code_bytes=54140,
                           vgpr_alloc=256),
}


@pytest.mark.parametrize("name", sorted(AMD_EXPECTED))
def test_amdgcn_fixture_exact(name):
    text, meta = amdgcn(name)
    usage = parse_amdgcn(text, meta["shared"], kernel=meta["name"])
    # the hot loop's fields are the backend's (parse.loops, tests/gate/test_loop_gate.py): unset by this parser
    assert asdict(usage) == AMD_EXPECTED[name] | dict.fromkeys(LOOP_FIELDS)


def test_unified_file_rule_holds_in_fixtures():
    # occupancy.md rule 1: .vgpr_count = alignTo(arch_vgpr, 4) + agpr when AGPRs are used
    for name in AMD_EXPECTED:
        u = parse_amdgcn(*amdgcn(name)[:1], 0)
        if u.agpr:
            assert u.vgpr_total == -(-u.arch_vgpr // 4) * 4 + u.agpr
        else:
            assert u.vgpr_total == u.arch_vgpr


def test_clause_annotations_count_each_instruction():
    text = (
        "k:\n; %bb.0:\n"
        "\ts_clause 0x1                            ; 8-byte Folded Spill\n"
        "\tscratch_store_b32 off, v1, off offset:4\n"
        "\tscratch_store_b32 off, v2, off offset:8\n"
        ".LBB0_1:                                ; =>This Inner Loop Header: Depth=1\n"
        "\tscratch_load_b32 v1, off, off offset:4 ; 4-byte Folded Reload\n"
        "\tv_add_f32 v1, v1, v1\n"
        "; %bb.2:\n"
        "\tbuffer_store_dword v3, off, s[0:3], 0 offset:12 ; 4-byte Folded Spill\n"
        "\ts_endpgm\n"
    )
    assert spill_instructions(text) == (3, 1, 1)


def test_kernel_info_reads_integer_comments():
    body = "; Kernel info:\n; codeLenInByte = 624\n; NumVgprs: 9\n; Occupancy: 8\n\t.text\n"
    assert kernel_info(body) == {"codeLenInByte": 624, "NumVgprs": 9, "Occupancy": 8}


def test_amdgcn_errors_are_clear():
    with pytest.raises(AmdgcnParseError, match="no .amdgpu_metadata"):
        parse_amdgcn("garbage", 0)
    text, _ = amdgcn("gfx942_agpr")
    with pytest.raises(AmdgcnParseError, match="'nope' is not in the AMDGCN metadata; it has: attn_fwd"):
        parse_amdgcn(text, 0, kernel="nope")


NV_EXPECTED = {
    "sm80_spills": dict(regs=255, stack_bytes=240, spill_store_bytes=376, spill_load_bytes=324, shared_static=0,
                        shared_dynamic=65536, local_bytes=0),
    "sm90_plain": dict(regs=229, stack_bytes=0, spill_store_bytes=0, spill_load_bytes=0, shared_static=1024,
                       shared_dynamic=49152, local_bytes=0),
}


@pytest.mark.parametrize("name", sorted(NV_EXPECTED))
def test_nvidia_fixture_exact(name):
    meta = json.loads((FIX / f"{name}.json").read_text())
    usage = nvidia_usage((FIX / f"{name}.ptxas.log").read_text(), (FIX / f"{name}.cuobjdump.txt").read_text(),
                         meta["shared"], kernel=meta["name"], ptxas_version=meta["ptxas_version"])
    d = asdict(usage)
    assert d.pop("ptxas_version") == meta["ptxas_version"]
    # a compile's figures are all this compile's ptxas's: no stored-cubin sources to name
    assert (d.pop("counts_from"), d.pop("spills_from")) == (None, None)
    assert d == NV_EXPECTED[name] | dict.fromkeys(LOOP_FIELDS)


def test_ptxas_log_picks_the_named_entry():
    log = (
        "ptxas info    : Compiling entry function 'a' for 'sm_80'\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 40 registers, 380 bytes cmem[0]\n"
        "ptxas info    : Compiling entry function 'b' for 'sm_80'\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 96 registers, 1024 bytes smem, 380 bytes cmem[0]\n"
    )
    assert parse_ptxas_log(log, "b") == {"kernel": "b", "sm": "sm_80", "regs": 96, "stack_bytes": 0,
                                         "spill_store_bytes": 0, "spill_load_bytes": 0, "smem": 1024}
    assert parse_ptxas_log(log)["regs"] == 40
    with pytest.raises(NvidiaParseError, match="it has: a, b"):
        parse_ptxas_log(log, "c")


def test_cuobjdump_two_functions():
    text = ("Resource usage:\n Function merge:\n  REG:32 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:400\n"
            " Function partial:\n  REG:168 STACK:16 SHARED:0 LOCAL:0 CONSTANT[0]:500\n")
    assert parse_cuobjdump_resources(text, "partial") == {"REG": 168, "STACK": 16, "SHARED": 0, "LOCAL": 0,
                                                          "CONSTANT[0]": 500}
    with pytest.raises(NvidiaParseError, match="several functions"):
        parse_cuobjdump_resources(text)


def test_register_disagreement_is_an_error():
    log = ("ptxas info : Compiling entry function 'k' for 'sm_80'\n    0 bytes stack frame, 0 bytes spill stores, "
           "0 bytes spill loads\nptxas info : Used 40 registers\n")
    with pytest.raises(NvidiaParseError, match="ptxas says 40 registers but the cubin says 41"):
        nvidia_usage(log, " Function k:\n  REG:41 STACK:0 SHARED:0 LOCAL:0\n")
