"""Seed 001's estimate of the state a bundled variant keeps live across its K/V loop, and what explain says
of it.

Each variant declares its loop state in ``VARIANT['live_state']`` (kernels/*.py): tile -> [rows, columns,
bytes per element], each a number or a formula (``vgprscope.flashattn.expr``) over ``BLOCK_M``, ``BLOCK_N``,
``Dp`` (the head dim padded to a power of two, at least 16, as the kernels tile it), ``e`` (bytes per element
of q, k, v: 2 for fp16 and bf16) and the variant's own knobs (``block_dk``). A tile is spread over the
program's threads (num_warps x the arch's wave size) and packed into 32-bit registers, rounded up: a thread
holds whole registers (seed 001 rounds m_i, l_i's 0.5 register up to 1 the same way). Pointers, masks and the
K/V operands are left out, as in the seed: the compiler's count is the truth, this is the model to hold it
against.

``estimate`` is explain's hook (``explain.explain_tasks(..., estimate=...)``): the estimate of a bundled
variant's task, with the words explain uses for these kernels.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from .config import AttentionConfig

if TYPE_CHECKING:
    from ..analysis.explain.core import Estimate
    from ..core.archs import Arch
    from .variants import Variant

ELEMENT_BYTES = {"fp16": 2, "bf16": 2}
# The bundled kernels' names (in their TTGIR) of the tensors seed 001's tiles are: loop-carried or live-in
TENSOR_TILES = {"acc": "acc", "q": "q", "m_i": "m_l", "l_i": "m_l", "m_new": "m_l", "l_new": "m_l"}
# What explain says the allocation holds beyond the loop's sum, for these kernels
REMAINDER = "temporaries (the score tile, K/V operands), addresses, pipeline buffers"

def _tile_regs(rows: float, cols: float, bytes_per: float, threads: int) -> int:
    """A rows x cols tile spread over the threads, packed into 32-bit registers, rounded up."""
    return math.ceil(rows * cols * bytes_per / 4 / threads)


def _variant(variant: Variant | str) -> Variant:
    if isinstance(variant, str):
        from .variants import get_variant

        return get_variant(variant)
    return variant


def live_state(config: AttentionConfig, arch: Arch | str, variant: Variant | str = "baseline") -> dict[str, int]:
    """Seed 001's estimate for the main loop of ``variant`` (a bundled variant's name, or a Variant): 32-bit
    registers per thread of each declared tile, their total and the thread count."""
    from ..core.archs import get_arch
    from ..kernels._launch import next_pow2_dim

    v = _variant(variant)
    if v.live_state is None:
        raise UsageError(f"variant {v.name} declares no live_state (VARIANT['live_state']) to estimate")
    a = get_arch(arch) if isinstance(arch, str) else arch
    threads = config.num_warps * a.wave_size
    values = {"BLOCK_M": config.block_m, "BLOCK_N": config.block_n, "Dp": next_pow2_dim(config.head_dim),
              "e": ELEMENT_BYTES[config.dtype]}
    # the variant's knobs: as the config sets them, else the variant's own defaults
    defaults = dict(v.defaults)
    values |= {k: config.get(k, defaults.get(k)) for k in v.knobs}
    state = {tile: _tile_regs(*(x.eval(values) for x in dims), threads) for tile, dims in v.live_state}
    return state | {"total": sum(state.values()), "threads": threads}


def seed_estimate(config: AttentionConfig, arch: Arch | str, variant: Variant | str = "baseline") -> Estimate:
    """Seed 001's estimate as explain shows it: the values, the tensors they are of, the summary line and
    the remainder in the bundled kernels' words."""
    from ..analysis.explain.core import Estimate

    state = live_state(config, arch, variant)
    tiles = " + ".join(f"{k} {v}" for k, v in state.items() if k not in ("total", "threads"))
    summary = (f"tile estimate, the registers a lane needs for the loop's tiles counted from their shapes "
               f"({state['threads']} threads share each tile): {tiles} = {state['total']} "
               "(s, the score tile, is a temporary inside the loop)")
    return Estimate(name="tile estimate", values=tuple(state.items()), tensors=tuple(TENSOR_TILES.items()),
                    summary=summary, remainder=REMAINDER)


def estimate(task: Any) -> Estimate | None:
    """explain's hook: seed 001's estimate of a bundled variant's task (one whose variant declares its live
    state and whose config is an attention config); None for any other task."""
    variant = task.variant
    if variant is None or getattr(variant, "live_state", None) is None or not isinstance(task.config,
                                                                                          AttentionConfig):
        return None
    return seed_estimate(task.config, task.arch, variant)
