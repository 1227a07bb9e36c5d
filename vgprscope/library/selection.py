"""The library's keyword selections -> what the core takes: the CLI's options by the same names, a scalar or
a list each (a list makes a grid, as a comma list does on the command line). Bad values are UsageErrors
naming the keyword as it was given (``block_m=100 is not allowed; allowed: powers of two ...``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..attention.config import ConfigRequest

if TYPE_CHECKING:
    from ..core.archs import Arch


def names(value: Any, keyword: str) -> tuple[str, ...]:
    """``"gfx942"``, ``"gfx942,sm_90"`` or ``["gfx942", "sm_90"]`` -> the names, each once, in order."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise UsageError(f"{keyword}={value!r} is not allowed; allowed: a name, a comma list or a list of names")
    if not items:  # an empty list is a selection of nothing, never "the default"
        raise UsageError(f"{keyword}={value!r} names nothing; give one or more names, or leave {keyword} out for "
                         "the default")
    out = []
    for item in items:
        pieces = [p.strip() for p in item.split(",")]
        if not all(pieces):
            raise UsageError(f"{keyword}={value!r} has an empty name; give names such as gfx942 or baseline")
        out += pieces
    return tuple(dict.fromkeys(out))


def arch_names(value: Any) -> tuple[str, ...]:
    """``arch=``'s names, each checked against the arch table now: an unknown arch is refused before Triton
    is imported or anything compiles."""
    from ..core.archs import get_arch

    found = names(value, "arch")
    for n in found:
        get_arch(n)
    return found


def select_archs(names: Sequence[str] | None) -> list[Arch]:
    """The archs of names (comma lists allowed), each once in order; the default archs when none is named."""
    from ..core.archs import DEFAULT_ARCHS, get_arch

    flat = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    return [get_arch(n) for n in dict.fromkeys(flat or DEFAULT_ARCHS)]


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def knob_axes(value: Any) -> dict[str, list[Any]]:
    """A variant's own knobs: ``{"num_splits": [2, 4]}`` (a value or a list each), or the CLI's
    ``"num_splits=2,4"`` strings."""
    from .grid import parse_knob_axes

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
    if value is None:
        return None
    from ..bench.cases import parse_shape

    if isinstance(value, str):
        return parse_shape(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return parse_shape(",".join(map(str, value)))
    raise UsageError(f"shape={value!r} is not allowed; give (B, H, Nq, Nk) or (B, H, Nq, Nk, Hkv) as positive integers")


def requests(fields: Mapping[str, Any], *, dtype: Any = None, causal: Any = None, knob: Any = None,
             shape: Any = None) -> list[ConfigRequest]:
    """The requests of the cartesian product of every field's values (one when nothing varies)."""
    from .grid import config_requests, grid_axes

    if causal is not None and not isinstance(causal, bool):
        raise UsageError(f"causal={causal!r} is not allowed; allowed: True or False")
    return config_requests(grid_axes({**fields, "dtype": dtype}), knob_axes(knob), bool(causal), shape_value(shape))



# ---- toolchains: triton= and settings= ------------------------------------------------------------------


def settings_of(value: Any) -> dict[str, str]:
    """Compiler settings: ``{"NAME": "VALUE"}``, or the CLI's ``"NAME=VALUE"`` strings (an environment variable
    Triton reads, e.g. ``TRITON_HIP_USE_BLOCK_PINGPONG=1``)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        items = [f"{k}={v}" for k, v in value.items()]
    else:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
            raise UsageError(f"settings={value!r} is not allowed; give {{NAME: VALUE}} or NAME=VALUE strings")
    out: dict[str, str] = {}
    for item in items:
        name, sep, v = item.partition("=")
        if not sep or not name.strip() or not name.strip().replace("_", "").isalnum():
            raise UsageError(f"setting {item!r} is not NAME=VALUE (an environment variable Triton reads, e.g. "
                             "TRITON_HIP_USE_BLOCK_PINGPONG=1)")
        out[name.strip()] = v
    return out


def triton_specs(value: Any) -> list[str]:
    """``"3.8.0"``, ``"3.4.0..3.9.0"``, an environment's path, or a list of them."""
    if value is None:
        return []
    import os

    items = [value] if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, (str, os.PathLike)) for v in items):
        raise UsageError(f"triton={value!r} is not allowed; allowed: a release (3.8.0), a range (3.4.0..3.9.0), "
                         "the path of a Python environment that has Triton, or a list of them")
    specs = [os.fspath(v).strip() for v in items]
    if not all(specs):
        raise UsageError(f"triton={value!r} has an empty value; give a release (3.8.0), a range or a path")
    return list(dict.fromkeys(specs))


def _say(text: str) -> None:
    """A toolchain's one-time install says what it does on stderr (it takes a minute)."""
    import sys

    print(f"vgprscope: {text}", file=sys.stderr)


def toolchains(triton: Any, settings: Any, say: Any = None) -> list[Any]:
    """The toolchains of ``triton`` (ranges expanded, releases installed on first use), each with
    ``settings``; [] for the installed Triton as is."""
    from ..compile import toolchains as tcs

    specs, extra = triton_specs(triton), settings_of(settings)
    if not specs and not extra:
        return []
    found = [tcs.resolve(s, say or _say) for s in tcs.expand(specs or ["installed"])]
    return [tc.with_settings(extra) if extra else tc for tc in found]


def one_toolchain(command: str, triton: Any, settings: Any, say: Any = None) -> Any:
    """The one toolchain of a command that compiles one set (None: the installed Triton as is). Several, or a
    range, are refused before any is installed: they belong to analyze (a history) and diff (two sides)."""
    from ..compile.toolchains import is_range

    specs = triton_specs(triton)
    if len(specs) > 1 or any(is_range(s) for s in specs):
        raise UsageError(f"{command} compiles with one Triton; got {', '.join(specs)}: several are for "
                         "`vgprscope analyze --triton A --triton B` (a history, release by release) or "
                         "`vgprscope diff --triton A --triton B` (two sides, judged by the gate's rules)")
    found = toolchains(specs, settings, say)
    return found[0] if found else None


def sides(triton: Any, settings: Any, say: Any = None) -> tuple[Any, Any]:
    """The two sides of a diff: two toolchains (the settings go to the second); one toolchain (before: as
    is, after: with the settings); none (the installed Triton without, then with, the settings)."""
    from ..compile import toolchains as tcs

    specs = tcs.expand(triton_specs(triton))
    extra = settings_of(settings)
    if len(specs) > 2:
        raise UsageError(f"diff compares two sides; got {len(specs)} toolchains ({', '.join(specs)}); for a "
                         "release history use `vgprscope analyze --triton A..B`")
    resolved = [tcs.resolve(s, say or _say) for s in specs]
    if len(resolved) == 2:
        a, b = resolved
        b = b.with_settings(extra) if extra else b
    else:
        base = resolved[0] if resolved else tcs.installed()
        if not extra:
            raise UsageError("diff needs two sides: --triton A --triton B, or one Triton and a setting that "
                             "differs (--set NAME=VALUE, e.g. --set TRITON_HIP_USE_BLOCK_PINGPONG=1)")
        a, b = base, base.with_settings(extra)
    if a.id == b.id and a.settings == b.settings:
        raise UsageError(f"both sides are {a.label}: nothing would differ; give two releases or a setting")
    return a, b
