"""Every field read back from the compile cache is checked as fresh compiler output would be: its type, its
range (a register count within what the arch holds, a share within 0-100, any count within a compiler's 32-bit
field), and the loop fields' agreement with each other. A damaged entry is compiled again and the entry healed:
never a verdict (``check`` saying ``worse``), never a traceback, never "over the maximum" for every run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.compile.test_loop_cache import KERNEL, _entry  # type: ignore[import-not-found]  # noqa: F401 (KERNEL: the kernel_dir fixture's)
from tests.gate.test_loop_gate import _amd_raw, _nvidia_raw  # type: ignore[import-not-found]
from vgprscope.backends.cuda import CUDA
from vgprscope.backends.hip import HIP
from vgprscope.compile.cache import CompileCache
from vgprscope.compile.results import valid_result
from vgprscope.core.archs import get_arch
from vgprscope.core.records import usage_to_dict


def _results() -> dict[str, dict[str, Any]]:
    """A whole result of each vendor, as ``result_of`` writes it."""
    return {"gfx942": {"seconds": 1.5, "num_warps": 4, "usage": usage_to_dict(HIP.parse(_amd_raw()))},
            "sm_90": {"seconds": 0.5, "num_warps": 8, "usage": usage_to_dict(CUDA.parse(_nvidia_raw(False)))}}


# the sweep's damaged entries (issue 35, items 2 and 3), and their kin
DAMAGE = {
    "loop_spill_bytes 10**30": lambda r: r["usage"].update(loop_spill_bytes=10**30),
    "loop_spill_bytes_sum 10**30": lambda r: r["usage"].update(loop_spill_bytes_sum=10**30),
    "loop_spill_bytes_max null": lambda r: r["usage"].update(loop_spill_bytes_max=None),
    "loop_matrix_share 250": lambda r: r["usage"].update(loop_matrix_share=250),
    "loop_matrix_share -1": lambda r: r["usage"].update(loop_matrix_share=-1),
    "loop_lines 5": lambda r: r["usage"].update(loop_lines=5),
    "loop_scratch_insts null": lambda r: r["usage"].update(loop_scratch_insts=None),
    "loop_spill_bytes over its sum": lambda r: r["usage"].update(loop_spill_bytes=r["usage"]["loop_spill_bytes_sum"] + 1),
    "both a usage and an error": lambda r: r.update(error="injected"),
    "neither usage nor error": lambda r: r.pop("usage"),
    "an empty error": lambda r: (r.pop("usage"), r.update(error=" ")),
    "a register count of 10**30": lambda r: r["usage"].update(
        {"vgpr_total" if r["usage"]["vendor"] == "amd" else "regs": 10**30}),
    "a register count over the arch's": lambda r: r["usage"].update(
        {"vgpr_total" if r["usage"]["vendor"] == "amd" else "regs": 513}),
    "a memory count that is text": lambda r: r["usage"].update(
        {"lds_dynamic" if r["usage"]["vendor"] == "amd" else "shared_dynamic": "big"}),
    "a count that is true": lambda r: r["usage"].update(
        {"sgpr" if r["usage"]["vendor"] == "amd" else "stack_bytes": True}),
    "a float count": lambda r: r["usage"].update(
        {"scratch_bytes" if r["usage"]["vendor"] == "amd" else "local_bytes": 1.5}),
    "a missing count": lambda r: r["usage"].pop("vgpr_total" if r["usage"]["vendor"] == "amd" else "regs"),
    "another vendor's usage": lambda r: r["usage"].update(vendor="nvidia" if r["usage"]["vendor"] == "amd" else "amd"),
    "num_warps 0": lambda r: r.update(num_warps=0),
    "negative seconds": lambda r: r.update(seconds=-1.0),
    "a note that is a number": lambda r: r.update(note=5),
    "a field no result has": lambda r: r.update(verdict="worse"),
    "loops unread with a share": lambda r: (r.update(loops_unread=True), r["usage"].update(loop_matrix_share=12)),
    "loops unread false": lambda r: r.update(loops_unread=False),
}


@pytest.mark.parametrize("arch", ["gfx942", "sm_90"])
def test_a_whole_result_is_valid(arch):
    assert valid_result(_results()[arch], get_arch(arch))


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("arch", ["gfx942", "sm_90"])
def test_a_damaged_result_is_invalid(arch, damage):
    result = json.loads(json.dumps(_results()[arch]))
    DAMAGE[damage](result)
    assert not valid_result(result, get_arch(arch))


@pytest.mark.parametrize("damage", ["loop_spill_bytes 10**30", "loop_matrix_share 250", "loop_lines 5",
                                    "loop_scratch_insts null", "both a usage and an error",
                                    "a register count of 10**30", "a memory count that is text"])
def test_a_damaged_entry_is_compiled_again_and_healed(kernel_dir, tmp_path, damage):
    """A real compile's entry, damaged on disk: the next run compiles it again (not served), gives the fresh
    numbers, and writes the entry back whole (the run after is served from it)."""
    from tests.compile.test_compile_identity import _compile  # type: ignore[import-not-found]

    cache = CompileCache(tmp_path / "cache")
    fresh = _compile(kernel_dir, cache, "gfx942")
    assert fresh.ok and not fresh.cached
    path, _ = _entry(cache.directory)
    entry = json.loads(path.read_text())
    DAMAGE[damage](entry["result"])
    path.write_text(json.dumps(entry))
    again = _compile(kernel_dir, cache, "gfx942")
    assert again.ok and not again.cached and again.usage == fresh.usage
    healed = _compile(kernel_dir, cache, "gfx942")
    assert healed.cached and healed.usage == fresh.usage
