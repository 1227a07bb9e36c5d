"""Config grids: several values per option -> the cartesian product of requests; the size guard.

Everything here is pure (no triton, no torch): the one parser of a grid's values (the CLI's option strings and
the library's keywords, by the names of ``core/options.py``'s and ``flashattn/tiles.py``'s rows), their
expansion and what a grid would compile. The order of rows is each question's (``analysis/order.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..core.options import Option
from ..flashattn.tiles import DTYPES, TILE_FIELDS, field_named, grid_fields  # noqa: F401 (the grid's fields)

if TYPE_CHECKING:  # imported where used: the CLI imports this module at start-up for its option rules
    from ..flashattn.config import ConfigRequest

# A grid above this many compiles is run only when asked for (`--yes` or `--max-compiles N`): at about a
# second per compile and core, 10,000 compiles keep a 2-core machine busy for well over an hour.
DEFAULT_MAX_COMPILES = 10_000

KNOB_PREFIX = "knob:"  # an axis over a variant's own knob: "knob:num_splits"


def axis_names() -> tuple[str, ...]:
    """The ConfigRequest fields a grid may vary, in the order a config label shows them."""
    names = [o.name for o in grid_fields()]
    return (*names[:len(TILE_FIELDS)], "dtype", *names[len(TILE_FIELDS):])


# ---- the one parser of a grid's values: the CLI's strings and the library's values ---------------------------


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


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def option_values(option: Option, value: Any, cli: bool = False) -> list[int]:
    """An integer field's values, checked: the CLI's strings (``["64,128", "256"]``: comma lists, repeated) or
    the library's value (None: the default; an int; a list of ints: a grid). A message names the value as it
    was given (``--block-m 100``, ``block_m=100``)."""
    out = []
    if cli:
        for v in split_values(value, option.flag):
            try:
                n = int(v)
            except ValueError:
                raise UsageError(f"{option.flag} {v!r} is not a whole number; give one or more, e.g. {option.flag} "
                                 "64,128") from None
            if (why := option.value_error(n, f"{option.flag} {n}")) is not None:
                raise UsageError(why)
            out.append(n)
        return out
    for v in _listed(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{option.name}={v!r} is not a whole number; give one, or a list of them for a grid")
        if (why := option.value_error(v, f"{option.name}={v}")) is not None:
            raise UsageError(why)
        out.append(v)
    return list(dict.fromkeys(out))


def dtype_values(value: Any, cli: bool = False) -> list[str]:
    given = split_values(value, "--dtype") if cli else list(dict.fromkeys(_listed(value)))
    bad = [d for d in given if d not in DTYPES]
    if bad:
        spelled = f"--dtype {bad[0]!r}" if cli else f"dtype={bad[0]!r}"
        raise UsageError(f"{spelled} is not allowed; allowed: {', '.join(DTYPES)}")
    return given


def grid_axes(given: Mapping[str, Any], cli: bool = False) -> dict[str, list[Any]]:
    """Each grid field's checked values (and the dtypes'), from what was given by their names."""
    out: dict[str, list[Any]] = {o.name: option_values(o, given.get(o.name), cli) for o in grid_fields()}
    out["dtype"] = dtype_values(given.get("dtype"), cli)
    return out


def _knob_value(v: str) -> Any:
    return int(v) if v.lstrip("-").isdigit() else v


def parse_knob_axes(items: Sequence[str] | None) -> dict[str, list[Any]]:
    """``NAME=V1,V2`` strings -> {NAME: [V1, V2]} (integers become ints)."""
    out: dict[str, list[Any]] = {}
    for item in items or []:
        name, sep, values = item.partition("=")
        vals = [_knob_value(v.strip()) for v in values.split(",") if v.strip()]
        if not sep or not name.strip() or not vals:
            raise UsageError(f"knob {item!r} is not NAME=VALUE (for example num_splits=4, or num_splits=2,4)")
        out.setdefault(name.strip(), [])
        out[name.strip()] += [v for v in vals if v not in out[name.strip()]]
    return out


def config_requests(axes: Mapping[str, Sequence[Any]], knobs: Mapping[str, Sequence[Any]] | None = None,
                    causal: bool = False, shape: tuple[int, ...] | None = None) -> list[ConfigRequest]:
    """Checked values per request field (``grid_fields``, ``dtype``) and per knob -> the requests of their
    cartesian product (one when nothing varies)."""
    from ..flashattn.config import ConfigRequest

    full = {**axes, **{KNOB_PREFIX + name: list(values) for name, values in (knobs or {}).items()}}
    base = ConfigRequest(causal=causal, shape=tuple(shape)) if shape else ConfigRequest(causal=causal)
    return expand(base, full)


def grid_requests(given: Mapping[str, Any], *, knob: Any = None, causal: bool | None = False,
                  shape: tuple[int, ...] | None = None) -> list[ConfigRequest]:
    """The CLI's option values (strings, by the fields' names) -> the ConfigRequests of their cartesian product
    (one when nothing varies)."""
    return config_requests(grid_axes(given, cli=True), parse_knob_axes(knob), bool(causal), shape)


def varying_axes(requests: Sequence[Any]) -> list[str]:
    """The ConfigRequest fields (and knobs) that differ between the requests of a grid."""
    from dataclasses import fields

    names = [f.name for f in fields(requests[0]) if f.name != "extra"] if requests else []
    out = [n for n in names if len({getattr(r, n) for r in requests}) > 1]
    knobs = {k for r in requests for k, _ in r.extra}
    out += [f"knob:{k}" for k in sorted(knobs) if len({dict(r.extra).get(k) for r in requests}) > 1]
    return out


def point_label(req: Any, axes: Sequence[str]) -> str:
    """'[block_m=64 num_warps=4]': what one grid point sets, for a table title."""
    if not axes:
        return ""
    parts = []
    for a in axes:
        v = dict(req.extra).get(a[len("knob:"):]) if a.startswith("knob:") else getattr(req, a)
        parts.append(f"{a.removeprefix('knob:')}={'default' if v is None else v}")
    return "[" + " ".join(parts) + "]"


def expand(base: ConfigRequest, axes: Mapping[str, Sequence[Any]]) -> list[ConfigRequest]:
    """The cartesian product of ``axes`` over ``base``, in the order the axes and their values were given.

    An axis name is a ConfigRequest field or ``knob:NAME``; an axis with no values keeps ``base``'s.
    """
    names = [n for n, values in axes.items() if values]
    for n in names:
        if not n.startswith(KNOB_PREFIX) and n not in axis_names():
            raise UsageError(f"cannot vary {n!r}; a grid varies: {', '.join(axis_names())} and knobs")
    out = []
    for combo in itertools.product(*(axes[n] for n in names)):
        fields: dict[str, Any] = {}
        knobs = dict(base.extra)
        for n, v in zip(names, combo):
            if n.startswith(KNOB_PREFIX):
                knobs[n[len(KNOB_PREFIX):]] = v
            else:
                fields[n] = v
        out.append(replace(base, **fields, extra=tuple(sorted(knobs.items()))))
    return list(dict.fromkeys(out)) or [base]


@dataclass(frozen=True)
class GridSize:
    compiles: int  # compile jobs the grid needs (one per variant x arch x config x level)
    seconds_per_compile: float | None  # measured here on a sample, wall time per job with the pool's workers
    sample: int  # how many jobs the rate was measured on

    def estimate(self) -> str:
        if self.seconds_per_compile is None:
            return "an unknown time (no compile could be timed)"
        return f"about {_duration(self.compiles * self.seconds_per_compile)}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class GridTooLargeError(UsageError):
    """A grid over the compile limit that the user did not confirm."""


def check_size(compiles: int, limit: int | None, confirmed: bool,
               measure: Callable[[], GridSize] | None = None) -> None:
    """Refuse a grid of more than ``limit`` compiles (default DEFAULT_MAX_COMPILES) unless ``confirmed``,
    saying how long it would take at the rate ``measure`` finds (it compiles a small sample of the grid,
    which the cache keeps, so nothing measured is thrown away)."""
    if confirmed and limit is None:
        return
    most = DEFAULT_MAX_COMPILES if limit is None else limit
    if compiles <= most:
        return
    size = measure() if measure else GridSize(compiles, None, 0)
    rate = (f" at the rate measured here on {size.sample} of them ({size.seconds_per_compile:.2f} s per compile)"
            if size.seconds_per_compile is not None else "")
    raise GridTooLargeError(
        f"the grid is {compiles:,} compiles, over the limit of {most:,}; it would take {size.estimate()}{rate}; "
        f"pass --yes to run it, or --max-compiles N to allow up to N, or narrow the grid")
