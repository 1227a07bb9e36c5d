"""The config grid's values as typed: several values per config option.

``--block-m 64,128 --num-warps 4 --num-warps 8`` (comma-separated, repeatable or both) runs the cartesian
product. The options are declared in ``options`` (the ``Grid`` bundle); parsing lives here; expansion, the
size guard and sorting in :mod:`vgprscope.library.grid`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.errors import UsageError
from ..library.grid import INT_AXES, int_value_error, parse_knob_axes, point_label, varying_axes  # noqa: F401 (re-exported)

# the core's rules (vgprscope.library.grid), keyed here by flag: values Triton never takes are refused (exit 2)
_FIELD_OF = {flag: f for f, flag, _ in INT_AXES}
# (option flag, ConfigRequest field, smallest value)
_INT_AXES = tuple((flag, f, lo) for f, flag, lo in INT_AXES)


def split_values(items: Sequence[str] | None, flag: str = "the option") -> list[str]:
    """['64,128', '256'] -> ['64', '128', '256'], duplicates dropped, order kept. An empty value ('',
    '64,,128', '64,') is a usage error, never "the default"."""
    out = []
    for item in items or []:
        pieces = [v.strip() for v in str(item).split(",")]
        if not all(pieces):
            raise UsageError(f"{flag} {str(item)!r} has an empty value; give one or more values, comma-separated "
                             "or repeated, or leave the option out for the default")
        out += pieces
    return list(dict.fromkeys(out))


def parse_ints(flag: str, items: Sequence[str] | None, minimum: int) -> list[int]:
    out = []
    for v in split_values(items, flag):
        try:
            n = int(v)
        except ValueError:
            raise UsageError(f"{flag} {v!r} is not a whole number; give one or more, e.g. {flag} 64,128") from None
        if (why := int_value_error(_FIELD_OF.get(flag, ""), n, minimum, f"{flag} {n}")) is not None:
            raise UsageError(why)
        out.append(n)
    return out


def parse_dtypes(items: Sequence[str] | None) -> list[str]:
    from ..attention.config import DTYPES

    dtypes = split_values(items, "--dtype")
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        raise UsageError(f"--dtype {bad[0]!r} is not allowed; allowed: {', '.join(DTYPES)}")
    return dtypes


def grid_requests(*, block_m=None, block_n=None, head_dim=None, dtype=None, causal: bool | None = False, num_warps=None,
                  num_stages=None, waves_per_eu=None, matrix_instr_nonkdim=None, kpack=None, maxnreg=None,
                  knob=None, shape: tuple[int, ...] | None = None) -> list:
    """The options' values -> the ConfigRequests of their cartesian product (one when nothing varies)."""
    from ..library.grid import config_requests

    given = {"block_m": block_m, "block_n": block_n, "head_dim": head_dim, "num_warps": num_warps,
             "num_stages": num_stages, "waves_per_eu": waves_per_eu, "matrix_instr_nonkdim": matrix_instr_nonkdim,
             "kpack": kpack, "maxnreg": maxnreg}
    axes: dict[str, list[Any]] = {f: parse_ints(flag, given[f], lo) for flag, f, lo in _INT_AXES}
    axes["dtype"] = parse_dtypes(dtype)
    return config_requests(axes, parse_knob_axes(knob), bool(causal), shape)
