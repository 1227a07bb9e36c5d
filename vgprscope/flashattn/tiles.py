"""The bundled variants' tile fields, declared as the launch options are (``vgprscope.core.options``): the
grid varies them, the CLI and the library take them by these names; and the element types their kernels take."""

from __future__ import annotations

from ..core.options import LAUNCH_OPTIONS, Option

DTYPES = ("fp16", "bf16")

TILE_FIELDS: tuple[Option, ...] = (
    # tile sizes feed tl.arange, whose length must be a power of two
    Option("block_m", "BLOCK_M, a power of two", power_of_two="tile sizes feed tl.arange", default_help="the variant's"),
    Option("block_n", "BLOCK_N, a power of two", power_of_two="tile sizes feed tl.arange", default_help="the variant's"),
    Option("head_dim", "Head dim, 16-256", default_help="128; bench: the preset's", short="-d"),
)


def grid_fields() -> tuple[Option, ...]:
    """The integer fields of a request a grid varies: the tiles, then the launch options (the library takes them
    as keyword arguments, ``block_m=[64, 128]``; the CLI as ``--block-m 64,128``)."""
    return (*TILE_FIELDS, *LAUNCH_OPTIONS)


def field_named(name: str) -> Option:
    return next(o for o in grid_fields() if o.name == name)
