"""What the register gate needs to know about the bundled attention variants, handed to it as data (docs/design.md:
attention knowledge stays out of the gate).

- ``DEFAULT_CONFIGS``: the gate's default set of config requests, as ``[tool.vgprscope] configs`` tables.
- ``config_request`` / ``requests``: a ``configs`` table checked field by field (head dim, dtype, shape with
  its K/V heads, ...) and turned into the variants' ``ConfigRequest``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import UsageError
from ..core.options import launch_option_names
from .config import DTYPES, ConfigRequest
from .tiles import TILE_FIELDS

# Each variant at its defaults on the reference prefill shape, and one grouped-query decode shape (Llama 3 8B's
# 32 query heads over 8 K/V heads, one query row, 8k keys): the packed decode kernels and their tiles.
DEFAULT_CONFIGS: tuple[Mapping[str, Any], ...] = ({}, {"shape": [1, 32, 1, 8192, 8]})

# ConfigRequest fields a config table may set, with the type each takes (bool is not an int here).
_INT_FIELDS = (*(o.name for o in TILE_FIELDS), *launch_option_names())
_CONFIG_KEYS = (*_INT_FIELDS, "dtype", "causal", "extra", "shape")


def config_request(table: Any, where: str) -> ConfigRequest:
    """One ``configs`` table -> ConfigRequest, every value checked (a typo would otherwise compile the
    variant's default silently)."""
    if not isinstance(table, Mapping):
        raise UsageError(f"{where} must be a table like {{head_dim = 64}}; got {table!r}")
    unknown = [k for k in table if k not in _CONFIG_KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(_CONFIG_KEYS)}")
    for k in _INT_FIELDS:
        if k in table and (isinstance(table[k], bool) or not isinstance(table[k], int) or table[k] < 0):
            raise UsageError(f"{where}: {k} must be a non-negative integer; got {table[k]!r}")
    if "dtype" in table and table["dtype"] not in DTYPES:
        raise UsageError(f"{where}: dtype {table['dtype']!r} is not allowed; allowed: {', '.join(DTYPES)}")
    if "causal" in table and not isinstance(table["causal"], bool):
        raise UsageError(f"{where}: causal must be true or false; got {table['causal']!r}")
    if "extra" in table and not isinstance(table["extra"], Mapping):
        raise UsageError(f"{where}: extra must be a table of variant knobs like {{num_splits = 4}}")
    shape = table.get("shape")
    if shape is not None and not (isinstance(shape, (list, tuple)) and len(shape) in (4, 5)
                                  and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)
                                  and (len(shape) == 4 or shape[1] % shape[4] == 0)):
        raise UsageError(f"{where}: shape must be [batch, heads, seqlen_q, seqlen_k] or [..., kv_heads] of positive "
                         f"integers, kv_heads dividing heads; got {shape!r}")
    values = dict(table)
    if "extra" in values:
        values["extra"] = tuple(sorted(values["extra"].items()))
    if shape is not None:
        values["shape"] = tuple(shape)
    return ConfigRequest(**values)


def requests(tables: Sequence[Mapping[str, Any]], where: str) -> list[ConfigRequest]:
    """The gate's ``configs`` tables as requests (``DEFAULT_CONFIGS`` when there are none)."""
    return [config_request(t, f"{where} configs[{i}]") for i, t in enumerate(tables or DEFAULT_CONFIGS)]
