"""Grid options shared by analyze / compare / frontier / bench: several values per config option.

``--block-m 64,128 --num-warps 4 --num-warps 8`` (comma-separated, repeatable or both) runs the cartesian
product. Parsing lives here; expansion, the size guard and sorting in :mod:`vgprscope.grid`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Optional

import typer

from ..errors import UsageError
from ..grid import INT_AXES, int_value_error, parse_knob_axes, point_label, varying_axes  # noqa: F401 (re-exported)
from ..grid import POWER_OF_TWO as CORE_POWER_OF_TWO

_GRID = "; a comma list or a repeated option makes a grid"


def _opt(flag: str, what: str, short: str | None = None, metavar: str = "N,...") -> Any:
    names = (flag, short) if short else (flag,)
    return typer.Option(*names, help=f"{what}{_GRID}", metavar=metavar)


BlockMGrid = Annotated[Optional[list[str]], _opt("--block-m", "BLOCK_M, a power of two \\[default: the variant's]")]
BlockNGrid = Annotated[Optional[list[str]], _opt("--block-n", "BLOCK_N, a power of two \\[default: the variant's]")]
HeadDimGrid = Annotated[Optional[list[str]], _opt("--head-dim", "Head dim, 16-256 \\[default: 128]", "-d")]
NumWarpsGrid = Annotated[Optional[list[str]], _opt("--num-warps", "num_warps, a power of two \\[default: the variant's]")]
NumStagesGrid = Annotated[Optional[list[str]], _opt("--num-stages", "num_stages \\[default: the variant's]")]
WavesPerEuGrid = Annotated[Optional[list[str]], _opt("--waves-per-eu", "AMD: waves_per_eu hint, 0 for none")]
NonKDimGrid = Annotated[Optional[list[str]], _opt("--matrix-instr-nonkdim", "AMD: MFMA size (16 or 32)")]
KpackGrid = Annotated[Optional[list[str]], _opt("--kpack", "AMD: kpack (1 or 2)")]
MaxnregGrid = Annotated[Optional[list[str]], _opt("--maxnreg", "NVIDIA: maxnreg register cap")]
DtypeGrid = Annotated[Optional[list[str]], _opt("--dtype", "Element type of q, k, v \\[default: fp16]", metavar="fp16,bf16")]
KnobGrid = Annotated[
    Optional[list[str]],
    typer.Option("--knob", "-k", metavar="NAME=V,...", help="A variant's own knob, NAME=VALUE, repeatable (num_splits=4, block_dk=32); "
                 "NAME=V1,V2 makes a grid; given to the variants that take it"),
]
SortOpt = Annotated[Optional[str], typer.Option(
    "--sort", help="Order each variant x arch group best first by a metric: vgprs, regs, spills, scratch, lds, "
    "occupancy, sgprs, compile, or any csv field")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Run a grid of more than 10,000 compiles")]
MaxCompilesOpt = Annotated[Optional[int], typer.Option(
    "--max-compiles", min=1, help="Refuse a grid of more compiles than this \\[default: 10,000]")]
SchedulerOpt = Annotated[Optional[str], typer.Option(
    "--scheduler", help="Compile on this Dask scheduler (tcp://HOST:PORT) instead of local processes; "
    "needs the distributed extra")]

# the core's rules (vgprscope.grid), keyed here by flag: values Triton never takes are refused (exit 2)
_FIELD_OF = {flag: f for f, flag, _ in INT_AXES}
POWER_OF_TWO = {flag: why for flag, why in ((flag, CORE_POWER_OF_TWO.get(f)) for f, flag, _ in INT_AXES) if why}
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


def power_of_two_error(flag: str, n: int) -> str | None:
    """Why ``n`` cannot be ``flag``'s value (Triton takes only powers of two there), or None."""
    if flag in POWER_OF_TWO and n >= 1:
        return int_value_error(_FIELD_OF[flag], n, 1, f"{flag} {n}")
    return None


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


def grid_requests(*, block_m=None, block_n=None, head_dim=None, dtype=None, causal: bool = False, num_warps=None,
                  num_stages=None, waves_per_eu=None, matrix_instr_nonkdim=None, kpack=None, maxnreg=None,
                  knob=None, shape: tuple[int, int, int, int] | None = None) -> list:
    """The options' values -> the ConfigRequests of their cartesian product (one when nothing varies)."""
    from ..grid import config_requests
    from ..attention.config import DTYPES

    given = {"block_m": block_m, "block_n": block_n, "head_dim": head_dim, "num_warps": num_warps,
             "num_stages": num_stages, "waves_per_eu": waves_per_eu, "matrix_instr_nonkdim": matrix_instr_nonkdim,
             "kpack": kpack, "maxnreg": maxnreg}
    axes: dict[str, list[Any]] = {f: parse_ints(flag, given[f], lo) for flag, f, lo in _INT_AXES}
    dtypes = split_values(dtype, "--dtype")
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        raise UsageError(f"--dtype {bad[0]!r} is not allowed; allowed: {', '.join(DTYPES)}")
    axes["dtype"] = dtypes
    return config_requests(axes, parse_knob_axes(knob), causal, shape)


def guard(compiles: int, yes: bool, max_compiles: int | None, sample_tasks: Sequence[Any] = (),
          compile_sample=None) -> None:
    from ..library.tasks import guard as library_guard

    library_guard(compiles, yes, max_compiles, sample_tasks, compile_sample)


@contextlib.contextmanager
def executor_for(scheduler: str | None) -> Iterator[Any]:
    """None (the local process pool) or an Executor on the Dask scheduler at ``scheduler``."""
    from ..library.tasks import executor_for as library_executor_for

    with library_executor_for(scheduler) as ex:
        yield ex


def sample_of(tasks: Sequence[Any], jobs: int | None) -> list[Any]:
    from ..library.tasks import sample_of as library_sample_of

    return library_sample_of(tasks, jobs)


def guarded_sweep(variants, arch, requests, *, jobs=None, use_cache=True, kernel_dir=None, yes=False,
                  max_compiles=None, scheduler=None, capture=None, toolchains=()) -> list:
    """The library's sweep of a grid (refused when over the compile limit, with the time it would take; run
    on the Dask scheduler when one is named), with a progress bar."""
    from ..library.tasks import Selection, sweep
    from .progress import compile_progress

    sel = Selection.of(variants, arch, requests, kernel_dir, capture, toolchains=toolchains)
    with compile_progress() as progress:
        return sweep(sel, jobs=jobs, use_cache=use_cache, yes=yes, max_compiles=max_compiles, scheduler=scheduler,
                     on_progress=progress)


def per_request(variants, arch, requests, records, kernel_dir=None) -> dict[str, list]:
    """A grid's records split by grid point, keyed by the point's label ('' when there is one point)."""
    from ..library.tasks import Selection, per_request as library_per_request

    return library_per_request(Selection.of(variants, arch, requests, kernel_dir), records)
