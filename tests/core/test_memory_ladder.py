"""The LDS / shared memory staircase the HTML report draws (a backend's ``ladder(..., memory=True)``) is the occupancy model's own:
at both ends of every step, a kernel using that much memory and almost no registers gets the step's value
from the full rule (``amd_occupancy`` / ``nvidia_occupancy``), and one byte more falls to the next step."""

from __future__ import annotations

import pytest

from vgprscope.backends import backend_of
from vgprscope.core.archs import ARCHS
from vgprscope.core.occupancy.amd import amd_occupancy
from vgprscope.core.occupancy.nvidia import nvidia_occupancy


def _value(arch, memory: int, size: int) -> int:
    if arch.name.startswith("gfx"):
        return amd_occupancy(arch, 1, None, memory, size).value
    return nvidia_occupancy(arch, 1, memory, size).value


@pytest.mark.parametrize("arch_name, size", [("gfx942", 256), ("gfx942", 512), ("gfx90a", 64), ("gfx950", 256),
                                             ("sm_90", 128), ("sm_90", 256), ("sm_80", 128)])
def test_each_step_of_the_memory_ladder_is_the_occupancy_rule(arch_name, size):
    arch = ARCHS[arch_name]
    steps = backend_of(arch).ladder(arch, size, memory=True)
    assert steps[0].lo == 1 and len(steps) >= 3
    for a, b in zip(steps, steps[1:]):
        assert b.lo == a.hi + 1 and b.value < a.value
    for s in steps:
        assert _value(arch, s.lo, size) == s.value, (s, _value(arch, s.lo, size))
        assert _value(arch, s.hi, size) == s.value, (s, _value(arch, s.hi, size))


def test_the_gfx942_lds_steps_are_the_worked_ones():
    """64 KiB of LDS per CU, 512-byte granules, 4-wave workgroups: 8 KiB each -> 8 workgroups -> 8 waves/SIMD;
    8 KiB + 1 B rounds to 8.5 KiB -> 7 workgroups -> 7 waves/SIMD; over 32 KiB: 1 workgroup, 1 wave/SIMD."""
    arch = ARCHS["gfx942"]
    steps = backend_of(arch).ladder(arch, 256, memory=True)
    assert [(s.lo, s.hi, s.value) for s in steps][:2] == [(1, 8192, 8), (8193, 9216, 7)]
    assert (steps[-1].lo, steps[-1].hi, steps[-1].value) == (32769, 65536, 1)
