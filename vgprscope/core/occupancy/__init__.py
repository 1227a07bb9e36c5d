"""Theoretical occupancy from resource usage: pure functions, no torch, no triton.

Every rule is one of ``shared/reference/occupancy.md`` (AMD rules 1-7, NVIDIA rules 1-4), with its primary
source named where it is not obvious; every constant comes from :mod:`vgprscope.core.archs`.

AMD (unit: waves per SIMD, LLVM's "EU"). Where this model deliberately differs from LLVM's ``; Occupancy:``:

* LDS is Triton's dynamic ``shared`` plus the static LDS (LLVM sees only the static part, 0 for Triton);
* LDS is rounded up to the arch's allocation granule before dividing the CU's LDS (hardware-faithful;
  LLVM's ``getOccupancyWithWorkGroupSizes`` says "FIXME: We should take into account the LDS allocation
  granularity" and does not);
* the workgroup is the real launch (Triton: ``num_warps * wave_size`` threads), not LLVM's
  ``amdgpu-flat-work-group-size`` range ``1..num_warps*wave_size``;
* workgroups are resident whole: when the registers leave room for ``r`` waves on each of the CU's SIMDs,
  at most ``floor(r * SIMDs / wavesPerWG)`` workgroups fit (the HIP runtime's
  ``hipOccupancyMaxActiveBlocksPerMultiprocessor`` counts the same way). LLVM's ``min(rule 2, rule 4)``
  does not round to whole workgroups; the two differ only when a workgroup has more waves than the CU has
  SIMDs and the register waves are not a multiple of ``wavesPerWG / SIMDs`` (e.g. 8-wave workgroups with
  room for 3 waves/SIMD: 1 workgroup fits, 2 waves/SIMD, where LLVM says 3);
* a workgroup that cannot be resident at all (more waves per SIMD than the registers allow, or more LDS
  than a workgroup may have) gives 0 ("does not launch") where LLVM clamps to 1.
``Occupancy.note`` names every such difference whenever LLVM's own line is given and differs.

NVIDIA (unit: blocks per SM, with warps per SM beside it): ``cuda_occupancy.h``
(``cudaOccMaxActiveBlocksPerMultiprocessor`` and its ``...RegsLimit`` / ``...SmemLimit`` /
``...WarpsLimit`` helpers), with Triton's opt-in to the large per-block shared memory.

Modules: ``common`` (units, the ladder step, arithmetic), ``amd`` and ``nvidia`` (the rules), ``ladder``
(each level's register counts), ``advice`` (the next step in words).
"""
