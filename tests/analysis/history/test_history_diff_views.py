"""What the release history and the diff table say, from records built here for two
toolchains' compiles (no release is installed): the history marks a spill jump, not only a first spill
(Primus-Turbo's grouped GEMM: 4 -> 64 spilled values at 3.8.0); at 100 columns it keeps what tells two
launches of one kernel apart; the diff table's row names the VGPR change and, when occupancy drops, the
limiter that dropped it (aiter's paged attention on gfx950: LDS 65536 -> 133088 B), not only a footnote."""

from __future__ import annotations

import json
import re

from vgprscope.analysis.history import view as history_view
from vgprscope.analysis.history.core import history
from vgprscope.backends import occupancy_of
from vgprscope.core.archs import get_arch
from vgprscope.core.records import AmdUsage, ArgSpec, AutotunePick, LaunchConfig, Record
from vgprscope.gate import report
from vgprscope.gate.baseline import Baseline, Entry
from vgprscope.gate.diff import judge

RELEASES = ("3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0")
LABEL = "primus_turbo"


def amd(vgpr: int, spill: int = 0, lds: int = 0, sgpr: int = 80) -> AmdUsage:
    return AmdUsage(arch_vgpr=vgpr, agpr=0, vgpr_total=vgpr, sgpr=sgpr, vgpr_spill=spill, sgpr_spill=0,
                    scratch_bytes=4 * spill, lds_static=0, lds_dynamic=lds, spill_stores=spill, spill_loads=spill,
                    spill_insts_in_loop=0, llvm_occupancy=None, max_flat_workgroup_size=256, code_bytes=None)


def launch(block_k: int, index: int) -> LaunchConfig:
    return LaunchConfig(args=(ArgSpec("a", "*bf16"), ArgSpec("b", "*bf16"), ArgSpec("m", "i32")),
                        constexprs=(("BLOCK_M", 256), ("BLOCK_N", 256), ("BLOCK_K", block_k)),
                        options=(("num_warps", 8), ("num_stages", 2)),
                        autotune=AutotunePick(index, 2, 8, ("4096",)))


def rec(usage: AmdUsage, config: LaunchConfig, release: str, arch: str = "gfx942", kernel="grouped_gemm_kernel",
        label=LABEL) -> Record:
    occ = occupancy_of(usage, get_arch(arch), config.num_warps)
    slot = f"autotune[4096] cfg {config.autotune.index + 1}"
    return Record(label, kernel, arch, config, "ok", usage, occ, triton_version=release, slot=slot,
                  source="capture", toolchain=release)


def primus_history():
    """Two launches of one kernel (BLOCK_K 64 and 32), six releases: the first spills 4 values through 3.7.1
    and 64 from 3.8.0, the second never spills."""
    sides = []
    for rel in RELEASES:
        jump = rel >= "3.8.0"
        sides.append((rel, [rec(amd(256, 64 if jump else 4), launch(64, 0), rel),
                            rec(amd(244 if rel < "3.6.0" else 248), launch(32, 1), rel)]))
    return history(sides)


class Machine:
    def text(self, width=None):
        return "machine"


def test_the_history_marks_a_spill_jump_not_only_a_first_spill():
    rows = primus_history()
    events = [(e.release, e.kind, e.text) for e in rows[0].events()]
    assert ("3.8.0", "jump", "spills 4 -> 64 at 3.8.0 (x16)") in events
    assert rows[1].events() == ()  # 244 -> 248 VGPRs at the same occupancy, no spill: nothing to mark
    # a spill count that does not at least double is not a jump
    rows = history([(rel, [rec(amd(256, 4 + i), launch(64, 0), rel)]) for i, rel in enumerate(RELEASES)])
    assert rows[0].events() == ()


def _many() -> list:
    """30 kernels of one module, two launches each (BLOCK_K 64 and 32), six releases: 60 rows, more than
    a terminal's table keeps on two lines a row."""
    sides = []
    for rel in RELEASES:
        sides.append((rel, [rec(amd(256, 64 if rel >= "3.8.0" and i == 0 else 4), launch(bk, i), rel,
                                kernel=f"gemm_{k}") for k in range(30) for i, bk in enumerate((64, 32))]))
    return history(sides)


def _rows_of(text: str, kernel: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.split()[:1] == [kernel]]


def test_the_history_keeps_two_launches_of_one_kernel_apart_at_100_columns():
    """At 100 columns the config column was the first left out: two launches of one kernel read
    `gfx942` and `gfx942`."""
    for rows, kernel in ((_many(), "gemm_7"), (primus_history(), "grouped_gemm_kernel")):
        text = history_view.to_table(rows, Machine(), width=100)
        assert max(len(ln) for ln in text.splitlines()) <= 100
        assert "config" in text.split("─")[0] and "left out" not in text
        first, second = _rows_of(text, kernel)
        assert "BLOCK_K=64" in first and "BLOCK_K=32" in second, text
        # no word is cut across lines: every kernel name is whole
        assert all(w in {kernel, "gfx942"} or not w.startswith("_") for ln in text.splitlines() for w in ln.split())
    # the words every launch shares are said once, above the table
    assert "(every config: bf16 BLOCK_M=256 BLOCK_N=256 w8 s2)" in " ".join(text.split())
    assert re.search(r"256 \+64 S", text) and "spills 4 -> 64 at 3.8.0 (x16)" in text


def _entry(usage: AmdUsage, arch: str = "gfx950") -> Entry:
    cfg = launch(64, 0)
    return Entry.from_record(rec(usage, cfg, "x", arch=arch, kernel="paged_attention_decode", label="aiter.pa"))


def _column(text: str, header: str, following: str | None) -> str:
    """The words of one column of a rendered table's rows, in order (cells may take several lines)."""
    lines = text.splitlines()
    rule = next(i for i, ln in enumerate(lines) if ln and set(ln) == {"─"})
    # a long header may give way to its short form (regs, occ), named in the legend
    header = header if header in lines[rule - 1] else report._SHORT_HEADERS.get(header, header)
    if following and following not in lines[rule - 1]:
        following = report._SHORT_HEADERS.get(following, following)
    a = lines[rule - 1].index(header)
    b = lines[rule - 1].index(following) if following else None
    rows = lines[rule + 1:next(i for i, ln in enumerate(lines) if ln.startswith("[1]"))]
    # a kernel's title line above its rows is no row
    rows = [ln for ln in rows if ln.startswith(" ") or ln.split()[:1] in ([], ["worse"], ["same"], ["changed"],
                                                                          ["better"], ["new"], ["missing"])]
    return " ".join(" ".join(w for ln in rows for w in ln[a:b].split()).split())


def test_the_diff_row_names_the_limiter_that_dropped_occupancy():
    before, after = _entry(amd(120, lds=65536)), _entry(amd(128, lds=133088))
    result = judge(Baseline.of([before], "3.7.1"), [after])
    (d,) = result.entries
    assert d.fails
    for width in (100, 160):
        text = report.to_table(result, ["machine"], "sides: before 3.7.1, after 3.8.0", width=width, command="diff")
        assert _column(text, "occupancy", "details").endswith("by LDS 65536 -> 133088 B"), text
        vgprs = _column(text, "VGPRs / regs", "occupancy")  # the VGPR change, in the row too
        assert vgprs in ("120 -> 128 (+8)", "128 (+8)"), text
        assert max(len(ln) for ln in text.splitlines()) <= width
    md = report.to_markdown(result, "machine", "sides")
    assert "| 4 -> 2 (-2 ✗) by LDS 65536 -> 133088 B |" in md
    assert json.loads(report.to_json(result, {}, "sides"))["rows"][0]["occupancy_dropped_by"] == ["lds_bytes"]
    # a drop the registers made names the VGPRs
    regs = judge(Baseline.of([_entry(amd(128), "gfx942")], "a"), [_entry(amd(136), "gfx942")])
    text = report.to_table(regs, ["machine"], "sides", width=100, command="diff")
    assert _column(text, "occupancy", "details").endswith("by VGPRs 128 -> 136"), text
    # an occupancy that holds names nothing
    same = judge(Baseline.of([_entry(amd(120), "gfx942")], "a"), [_entry(amd(124), "gfx942")])
    assert same.entries[0].dropped_by == () and " by " not in report.to_table(same, ["m"], "s", width=100)


def test_the_diff_row_names_a_spill_jump_where_its_details_are_a_footnote():
    """Primus-Turbo 3.7.1 -> 3.8.0: the VGPRs stay 256, the spills go 4 -> 64; the row said `256` and `[1]`."""
    label = "primus_turbo.triton.grouped_gemm"  # long names: the details give way to a footnote marker
    before = [Entry.from_record(rec(amd(256, 4), launch(64, 0), "3.7.1", kernel=k, label=label))
              for k in ("grouped_gemm_kernel", "grouped_gemm_variable_k_kernel")]
    after = [Entry.from_record(rec(amd(256, 64), launch(64, 0), "3.8.0", kernel=k, label=label))
             for k in ("grouped_gemm_kernel", "grouped_gemm_variable_k_kernel")]
    result = judge(Baseline.of(before, "3.7.1"), after)
    text = report.to_table(result, ["machine"], "sides: before 3.7.1, after 3.8.0", width=100, command="diff")
    assert max(len(ln) for ln in text.splitlines()) <= 100
    assert _column(text, "details", None) == "spills 4 -> 64 [1] spills 4 -> 64 [1]", text
