"""The words the views print for each vendor: one row per vendor (``VendorWords``), ``VENDOR_WORDS`` by vendor.

The backends keep a vendor's numbers and rules (``vgprscope.backends``); what a table, a summary or a calculator
line calls those numbers is here. A row holds plain words (units, column headers, the nouns a summary uses)
and templates the cells of ``report.usage_text`` fill with a usage's figures (``Backend.figures``):
positional ``{0}`` / ``{1}`` are the usage's two spill figures (``UsageFigures.spilled``, in order); named
fields are ``total`` (their sum), ``stores`` / ``loads`` / ``insts`` (the spill instructions the compiler
marks), ``in_loop`` (of those, in a loop), ``loop`` (``, N in loop`` where N > 0) and ``spills`` / ``insts_words``
(the counts as words: ``3 spills``, ``1 spill instruction``). The vendor's own name is its ``Vendor``
member's name (``AMD``, ``NVIDIA``).

Adding a vendor: one row here (every field filled), keyed by its ``Vendor`` in ``VENDOR_WORDS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..core.archs import AmdArch, Arch, NvidiaArch, Vendor
from ..core.occupancy.common import AMD_UNIT, NVIDIA_UNIT

KIB = 1024


@dataclass(frozen=True)
class VendorWords:
    """What the views call one vendor's numbers."""

    unit: str  # the occupancy unit, as its occupancy rule writes ``Occupancy.unit`` ("waves/SIMD")
    unit_short: str  # the same in a compact cell ("w/SIMD")
    lane_word: str  # what per-lane counts are per (a loop's bytes per trip): "lane", "thread"
    register_word: str  # registers as the frontier's summary says them ("VGPRs", "registers")
    ladder_words: str  # the registers a ladder row counts ("VGPRs+AGPRs per wave")
    register_header: str  # the compare table's registers column
    memory_header: str  # the compare table's LDS / shared memory column
    memory_axis: str  # a chart's axis of the LDS / shared memory a workgroup / block uses
    register_split: str  # the header of a column of a usage's register parts ("arch VGPR+AGPR"); "": none
    spill_artifact: str  # what the spill sites are read from, as a note names it when missing ("AMDGCN")
    # the registers with their two parts, where the second is not 0: "{0} ({1}v+{2}a)" (total, parts); "": none
    registers_parts: str
    spills_cell: str  # a compact table's spills cell, where something spilled
    spills_full: str  # the --wide / markdown spills cell, where something spilled
    # the frontier's spills cell, where something spilled: when the second figure is 0, and when it is not
    spills_level: tuple[str, str]
    spills_next: tuple[str, str]  # compare's next-level spills: spill figures known, unknown
    # a level's price, where something spilled: when the second figure is 0, and when it is not
    spills_price: tuple[str, str]
    # ``vgprscope occupancy``'s "occupancy" row: the calculator's JSON fields and ``percent``
    calculator_line: str
    # the frontier's level table: its columns' headers (spill_insts_header "": no such column) and its legend,
    # with the knob's column and without it ({unit}: the occupancy unit)
    knob_header: str
    spills_header: str
    spill_insts_header: str
    scratch_header: str
    frontier_legend: tuple[str, str]
    # the arch table's rows (``vgprscope archs``): every constant a person reads, and the compact cells
    arch_row: Callable[[Any], dict[str, Any]]
    arch_cells: Callable[[Any], dict[str, str]]


def _compiles(a: Arch, no: str) -> str:
    return "yes" if a.triton_target else no


def _amd_arch_row(a: AmdArch) -> dict[str, Any]:
    return {
        "arch": a.name, "vendor": a.vendor.value, "description": a.description,
        "wave": a.wave_size, "max occupancy": f"{a.max_waves_per_simd} waves/SIMD x {a.simds_per_cu} SIMDs",
        "registers": f"{a.vgprs_per_simd_lane} VGPR/lane/SIMD" + (" (shared with AGPRs)" if a.unified_agprs else ""),
        "per wave/thread": f"{a.max_arch_vgprs} VGPR" + (f" + {a.max_agprs} AGPR" if a.max_agprs else ""),
        "alloc granule": f"{a.vgpr_granule} VGPR",
        "LDS/shared per CU/SM": f"{a.lds_per_cu // KIB} KiB",
        "per workgroup/block": f"{a.lds_per_workgroup // KIB} KiB",
        "LDS/shared granule": f"{a.lds_granule} B",
        "max workgroups/blocks": a.max_workgroups_per_cu,
        "compiles": _compiles(a, "no (calculator only)"),
    }


def _amd_arch_cells(a: AmdArch) -> dict[str, str]:
    return {"occ": f"{a.max_waves_per_simd}/SIMD x{a.simds_per_cu}",
            "regs": f"{a.vgprs_per_simd_lane}" + ("+AGPR" if a.unified_agprs else ""),
            "per_wave": f"{a.max_arch_vgprs}v" + (f"+{a.max_agprs}a" if a.max_agprs else ""),
            "granule": str(a.vgpr_granule), "lds": f"{a.lds_per_cu // KIB}/{a.lds_per_workgroup // KIB}",
            "compiles": _compiles(a, "no [1]")}


def _nvidia_arch_row(a: NvidiaArch) -> dict[str, Any]:
    return {
        "arch": a.name, "vendor": a.vendor.value, "description": a.description,
        "wave": a.wave_size, "max occupancy": f"{a.max_warps_per_sm} warps/SM",
        "registers": f"{a.regs_per_sm} per SM ({a.reg_subpartitions} sub-partitions)",
        "per wave/thread": f"{a.max_regs_per_thread} regs",
        "alloc granule": f"{a.reg_alloc_unit} regs/warp",
        "LDS/shared per CU/SM": f"{a.shared_per_sm // KIB} KiB",
        "per workgroup/block": f"{a.max_shared_per_block // KIB} KiB (opt-in)",
        "LDS/shared granule": f"{a.shared_granule} B (+{a.shared_reserved_per_block} B reserved/block)",
        "max workgroups/blocks": a.max_blocks_per_sm,
        "compiles": _compiles(a, "no (calculator only)"),
    }


def _nvidia_arch_cells(a: NvidiaArch) -> dict[str, str]:
    return {"occ": f"{a.max_warps_per_sm} warps/SM", "regs": f"{a.regs_per_sm}/SM",
            "per_wave": str(a.max_regs_per_thread), "granule": f"{a.reg_alloc_unit}/warp",
            "lds": f"{a.shared_per_sm // KIB}/{a.max_shared_per_block // KIB}",
            "compiles": _compiles(a, "no [1]")}


_AMD_LEGEND = ("; -: the uncapped compile, as analyze does it; alloc: the VGPRs allocated (the descriptor's; LLVM "
               "pads it up to what the level's budget allows, so it may be far above what the kernel uses, the '-' "
               "row's); spills: VGPR (+SGPR) values; occupancy: the {unit} reached, with what else limits it")

AMD_WORDS = VendorWords(
    unit=AMD_UNIT, unit_short="w/SIMD", lane_word="lane", register_word="VGPRs",
    ladder_words="VGPRs+AGPRs per wave", register_header="VGPRs", memory_header="LDS B",
    memory_axis="LDS bytes per workgroup",
    register_split="arch VGPR+AGPR", spill_artifact="AMDGCN",
    registers_parts="{0} ({1}v+{2}a)",  # the unified total occupancy sees, its arch VGPRs and AGPRs
    # registers spilled (VGPRs + SGPRs) and the spill instructions in a loop
    spills_cell="{total} ({in_loop} in loop)",
    spills_full="v{0} s{1} ({stores}st/{loads}ld{loop})",
    spills_level=("{0}", "{0}+{1}s"),
    spills_next=("{total} ({in_loop} loop)", "?"),
    spills_price=("{spills}, {insts_words}, {in_loop} in the loop",
                  "{spills} ({0} VGPR + {1} SGPR), {insts_words}, {in_loop} in the loop"),
    calculator_line="{waves_per_simd} / {max_waves_per_simd} waves/SIMD ({percent:g} %), {waves_per_cu} waves/CU",
    knob_header="wpe", spills_header="spills", spill_insts_header="spill insts (loop)", scratch_header="scratch B",
    frontier_legend=("wpe: the waves_per_eu hint compiled (-: none); level: the {unit} its VGPR budget allows"
                     + _AMD_LEGEND,
                     "level: the {unit} its VGPR budget allows, compiled as waves_per_eu = level" + _AMD_LEGEND),
    arch_row=_amd_arch_row, arch_cells=_amd_arch_cells,
)

NVIDIA_WORDS = VendorWords(
    unit=NVIDIA_UNIT, unit_short="blk/SM", lane_word="thread", register_word="registers",
    ladder_words="registers per thread", register_header="regs", memory_header="smem B",
    memory_axis="shared memory bytes per block",
    register_split="", spill_artifact="cubin",
    registers_parts="",
    spills_cell="{0}+{1} B",  # spill store + load bytes
    spills_full="{0}B st / {1}B ld",
    spills_level=("{0}+{1}", "{0}+{1}"),
    spills_next=("{0}+{1} B", "? B"),
    spills_price=("{0} B of spill stores, {1} B of spill loads", "{0} B of spill stores, {1} B of spill loads"),
    calculator_line="{blocks_per_sm} blocks/SM, {warps_per_sm} / {max_warps_per_sm} warps/SM ({percent:g} %)",
    knob_header="maxnreg", spills_header="spill st+ld B", spill_insts_header="", scratch_header="stack B",
    frontier_legend=("maxnreg: the register cap compiled (* a bisection step; -: none, the uncapped compile as "
                     "analyze does it); level: the {unit} that budget allows; spill st+ld B: spill store + load "
                     "bytes per thread; occupancy: the {unit} reached, with what else limits it",) * 2,
    arch_row=_nvidia_arch_row, arch_cells=_nvidia_arch_cells,
)

# every vendor's row
VENDOR_WORDS: Mapping[Vendor, VendorWords] = MappingProxyType({Vendor.AMD: AMD_WORDS, Vendor.NVIDIA: NVIDIA_WORDS})


def words_of(vendor: Vendor) -> VendorWords:
    """The row of ``vendor`` (a backend's or an arch's ``vendor``)."""
    return VENDOR_WORDS[vendor]


def words_of_unit(unit: str) -> VendorWords:
    """The row of the vendor whose occupancy rule counts in ``unit`` (a record's ``Occupancy.unit``)."""
    return next(w for w in VENDOR_WORDS.values() if w.unit == unit)
