"""A vendor's words are one row of the words table (``report.vendor_words``); its backend holds numbers and
rules only, answering a protocol of a few members: targets, parsing, occupancy and metrics."""

from __future__ import annotations

import ast
from dataclasses import fields
from enum import Enum
from pathlib import Path

import pytest

from vgprscope.backends import BACKENDS, Backend, backend_of
from vgprscope.core.archs import ARCHS, Vendor, get_arch
from vgprscope.core.records import AmdUsage, NvidiaUsage
from vgprscope.report import usage_text
from vgprscope.report.vendor_words import VENDOR_WORDS, VendorWords, words_of

BACKENDS_DIR = Path(__file__).resolve().parents[2] / "vgprscope" / "backends"
PROTOCOL = {
    "name", "vendor", "facts", "metrics",  # data
    "target", "arch_for_target", "device_arch",  # the arch table and targets
    "parse", "disassemble", "spill_instructions", "loop_mixes",  # compiler outputs
    "launch_limit_reason", "occupancy", "ladder", "levels", "calculate",  # launch, occupancy, frontier
    "metric_values", "figures",  # a usage's numbers
}
AMD = AmdUsage(arch_vgpr=130, agpr=4, vgpr_total=136, sgpr=52, vgpr_spill=0, sgpr_spill=2, scratch_bytes=16,
               lds_static=0, lds_dynamic=8192, spill_stores=1, spill_loads=2, spill_insts_in_loop=0,
               llvm_occupancy=3, max_flat_workgroup_size=256, code_bytes=None)
NV_UNKNOWN = NvidiaUsage(regs=168, stack_bytes=24, spill_store_bytes=None, spill_load_bytes=None, shared_static=0,
                         shared_dynamic=40000, local_bytes=24)


def protocol_members() -> set[str]:
    body = {n for n in vars(Backend) if not n.startswith("_")}
    return body | set(Backend.__annotations__)


def test_the_backend_protocol_is_targets_parsing_occupancy_and_metrics():
    assert protocol_members() == PROTOCOL
    assert len(protocol_members()) <= 18


def test_every_backend_answers_the_protocol_and_nothing_more():
    for b in BACKENDS:
        own = {n for n in vars(type(b)) if not n.startswith("_")}
        assert own == PROTOCOL, (b.name, own ^ PROTOCOL)


def test_no_backend_defines_words():
    """A backend's only string attribute is its Triton name; no member of it is a word or a text of the
    words table; no backend module writes one of the table's words or templates."""
    word_fields = {f.name for f in fields(VendorWords)}
    assert not protocol_members() & word_fields
    assert not any(n.endswith(("_text", "_words", "_word", "_header", "price")) for n in protocol_members())
    for b in BACKENDS:
        strings = {n for n, v in vars(type(b)).items()
                   if isinstance(v, str) and not isinstance(v, Enum) and not n.startswith("_")}
        assert strings == {"name"}, b.name
    distinctive = {getattr(w, f) for w in VENDOR_WORDS.values()
                   for f in ("unit", "unit_short", "ladder_words", "memory_header", "register_split",
                             "registers_parts", "spills_cell", "spills_full", "calculator_line")} - {""}
    distinctive |= {t for w in VENDOR_WORDS.values() for t in (*w.spills_level, *w.spills_next, *w.spills_price)}
    for path in sorted(BACKENDS_DIR.glob("*.py")):
        constants = {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)}
        assert not constants & distinctive, (path.name, constants & distinctive)


def test_the_words_table_has_a_row_for_every_vendor():
    assert set(VENDOR_WORDS) == set(Vendor)
    assert {b.vendor for b in BACKENDS} == set(Vendor)
    for vendor, w in VENDOR_WORDS.items():
        assert words_of(vendor) is w
        plain = [f.name for f in fields(VendorWords) if isinstance(getattr(w, f.name), str)]
        # only a vendor whose registers have no two parts leaves their words empty, and one whose compiler
        # counts no spill instructions the frontier's column of them
        optional = ("register_split", "registers_parts", "spill_insts_header")
        assert all(getattr(w, n) for n in plain if n not in optional), vendor
        assert bool(w.register_split) == bool(w.registers_parts)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_a_rows_unit_is_the_one_its_occupancy_rule_writes(arch):
    a = ARCHS[arch]
    b = backend_of(a)
    calc = b.calculate(a, {b.facts.calculator_options[0]: 64}, False)
    assert calc.occupancy is not None and calc.occupancy.unit == words_of(a.vendor).unit


def test_cells_fill_the_rows_templates_with_the_backends_figures():
    # SGPRs alone spilled: the second figure names the split; nothing in a loop
    assert usage_text.spills_text(AMD) == "2 (0 in loop)"
    assert usage_text.spills_full_text(AMD) == "v0 s2 (1st/2ld)"
    assert usage_text.spills_level_text(AMD) == "0+2s"
    assert usage_text.spills_next_text(AMD) == "2 (0 loop)"
    assert usage_text.spill_price(AMD) == "2 spills (0 VGPR + 2 SGPR), 3 spill instructions, 0 in the loop"
    # spill bytes unknown (a stored cubin no ptxas here rebuilds)
    assert (usage_text.registers_text(NV_UNKNOWN), usage_text.spills_text(NV_UNKNOWN)) == ("168", "?")
    assert usage_text.spills_full_text(NV_UNKNOWN) == "unknown"
    assert (usage_text.spills_level_text(NV_UNKNOWN), usage_text.spills_next_text(NV_UNKNOWN)) == ("?", "? B")
    assert usage_text.spill_price(NV_UNKNOWN) == "spills unknown"


def test_the_calculator_line_is_the_rows():
    # gfx942: 128 VGPRs give 4 of 8 waves per SIMD, 4 SIMDs a CU; sm_80: 128 registers x 128 threads, 4 blocks
    # of 4 warps of 64 warp slots
    amd, nv = get_arch("gfx942"), get_arch("sm_80")
    calc = backend_of(amd).calculate(amd, {"--vgprs": 128}, False)
    assert usage_text.calculator_line(amd, calc) == "4 / 8 waves/SIMD (50 %), 16 waves/CU"
    calc = backend_of(nv).calculate(nv, {"--regs": 128}, False)
    assert usage_text.calculator_line(nv, calc) == "4 blocks/SM, 16 / 64 warps/SM (25 %)"
