"""The library's keyword selections -> what the core takes: the CLI's options by the same names, a scalar or
a list each (a list makes a grid, as a comma list does on the command line). Bad values are UsageErrors
naming the keyword as it was given (``block_m=100 is not allowed; allowed: powers of two ...``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from ..attention.config import ConfigRequest


def names(value: Any, keyword: str) -> tuple[str, ...]:
    """``"gfx942"``, ``"gfx942,sm_90"`` or ``["gfx942", "sm_90"]`` -> the names, each once, in order."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise UsageError(f"{keyword}={value!r} is not allowed; allowed: a name, a comma list or a list of names")
    out = []
    for item in items:
        pieces = [p.strip() for p in item.split(",")]
        if not all(pieces):
            raise UsageError(f"{keyword}={value!r} has an empty name; give names such as gfx942 or baseline")
        out += pieces
    return tuple(dict.fromkeys(out))


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def int_values(field: str, value: Any) -> list[int]:
    """An integer field's values: None (the default), an int, or a list of ints (a grid)."""
    from ..grid import INT_AXES, int_value_error

    minimum = next(lo for f, _, lo in INT_AXES if f == field)
    out = []
    for v in _values(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{field}={v!r} is not a whole number; give one, or a list of them for a grid")
        if (why := int_value_error(field, v, minimum, f"{field}={v}")) is not None:
            raise UsageError(why)
        out.append(v)
    return list(dict.fromkeys(out))


def dtype_values(value: Any) -> list[str]:
    from ..attention.config import DTYPES

    out = _values(value)
    bad = [d for d in out if d not in DTYPES]
    if bad:
        raise UsageError(f"dtype={bad[0]!r} is not allowed; allowed: {', '.join(DTYPES)}")
    return list(dict.fromkeys(out))


def knob_axes(value: Any) -> dict[str, list[Any]]:
    """A variant's own knobs: ``{"num_splits": [2, 4]}`` (a value or a list each), or the CLI's
    ``"num_splits=2,4"`` strings."""
    from ..grid import parse_knob_axes

    if value is None:
        return {}
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            vals = _values(v)
            if not isinstance(k, str) or not k or not vals:
                raise UsageError(f"knob={{{k!r}: {v!r}}} is not allowed; give {{NAME: VALUE}} or {{NAME: [V1, V2]}}")
            out[k] = list(dict.fromkeys(vals))
        return out
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise UsageError(f"knob={value!r} is not allowed; give {{NAME: VALUE}}, or NAME=VALUE strings")
    return parse_knob_axes(items)


def shape_value(value: Any) -> tuple[int, ...] | None:
    """compare's reference problem: ``(B, H, Nq, Nk[, Hkv])`` or the CLI's ``"B,H,Nq,Nk"``."""
    from ..bench.cases import parse_shape

    if value is None:
        return None
    if isinstance(value, str):
        return parse_shape(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return parse_shape(",".join(map(str, value)))
    raise UsageError(f"shape={value!r} is not allowed; give (B, H, Nq, Nk) or (B, H, Nq, Nk, Hkv) as positive integers")


INT_FIELDS = ("block_m", "block_n", "head_dim", "num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim",
              "kpack", "maxnreg")


def requests(fields: Mapping[str, Any], *, dtype: Any = None, causal: Any = None, knob: Any = None,
             shape: Any = None) -> list[ConfigRequest]:
    """The requests of the cartesian product of every field's values (one when nothing varies)."""
    from ..grid import config_requests

    if causal is not None and not isinstance(causal, bool):
        raise UsageError(f"causal={causal!r} is not allowed; allowed: True or False")
    axes: dict[str, list[Any]] = {f: int_values(f, fields.get(f)) for f in INT_FIELDS}
    axes["dtype"] = dtype_values(dtype)
    return config_requests(axes, knob_axes(knob), bool(causal), shape_value(shape))

