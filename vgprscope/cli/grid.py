"""Grid options shared by analyze / compare / frontier / bench: several values per config option.

``--block-m 64,128 --num-warps 4 --num-warps 8`` (comma-separated, repeatable or both) runs the cartesian
product. Parsing lives here; expansion, the size guard and sorting in :mod:`vgprscope.grid`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Optional

import typer

from ..errors import UsageError

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

# Values Triton never takes, refused before anything compiles (exit 2): tile sizes feed tl.arange, whose
# length must be a power of two, and every backend asserts that num_warps is one.
POWER_OF_TWO = {"--block-m": "tile sizes feed tl.arange", "--block-n": "tile sizes feed tl.arange",
                "--num-warps": "Triton's rule for num_warps"}

# (option flag, ConfigRequest field, smallest value)
_INT_AXES = (("--block-m", "block_m", 1), ("--block-n", "block_n", 1), ("--head-dim", "head_dim", 1),
             ("--num-warps", "num_warps", 1), ("--num-stages", "num_stages", 1),
             ("--waves-per-eu", "waves_per_eu", 0), ("--matrix-instr-nonkdim", "matrix_instr_nonkdim", 0),
             ("--kpack", "kpack", 1), ("--maxnreg", "maxnreg", 1))


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
    if flag in POWER_OF_TWO and n >= 1 and n & (n - 1):
        lower = 1 << (n.bit_length() - 1)
        return (f"{flag} {n} is not allowed; allowed: powers of two ({POWER_OF_TWO[flag]}), such as {lower} or "
                f"{lower * 2}")
    return None


def parse_ints(flag: str, items: Sequence[str] | None, minimum: int) -> list[int]:
    out = []
    for v in split_values(items, flag):
        try:
            n = int(v)
        except ValueError:
            raise UsageError(f"{flag} {v!r} is not a whole number; give one or more, e.g. {flag} 64,128") from None
        if n < minimum:
            raise UsageError(f"{flag} {n} is below the smallest allowed value, {minimum}")
        if (why := power_of_two_error(flag, n)) is not None:
            raise UsageError(why)
        out.append(n)
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


def grid_requests(*, block_m=None, block_n=None, head_dim=None, dtype=None, causal: bool = False, num_warps=None,
                  num_stages=None, waves_per_eu=None, matrix_instr_nonkdim=None, kpack=None, maxnreg=None,
                  knob=None, shape: tuple[int, int, int, int] | None = None) -> list:
    """The options' values -> the ConfigRequests of their cartesian product (one when nothing varies)."""
    from ..grid import KNOB_PREFIX, expand
    from ..attention.config import DTYPES, ConfigRequest

    given = {"block_m": block_m, "block_n": block_n, "head_dim": head_dim, "num_warps": num_warps,
             "num_stages": num_stages, "waves_per_eu": waves_per_eu, "matrix_instr_nonkdim": matrix_instr_nonkdim,
             "kpack": kpack, "maxnreg": maxnreg}
    axes: dict[str, list[Any]] = {f: parse_ints(flag, given[f], lo) for flag, f, lo in _INT_AXES}
    dtypes = split_values(dtype, "--dtype")
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        raise UsageError(f"--dtype {bad[0]!r} is not allowed; allowed: {', '.join(DTYPES)}")
    axes["dtype"] = dtypes
    for name, values in parse_knob_axes(knob).items():
        axes[KNOB_PREFIX + name] = values
    base = ConfigRequest(causal=causal, **({"shape": shape} if shape else {}))
    return expand(base, axes)


def varying_axes(requests: Sequence[Any]) -> list[str]:
    """The ConfigRequest fields (and knobs) that differ between the requests of a grid."""
    from dataclasses import fields

    names = [f.name for f in fields(requests[0]) if f.name != "extra"] if requests else []
    out = [n for n in names if len({getattr(r, n) for r in requests}) > 1]
    knobs = {k for r in requests for k, _ in r.extra}
    out += [f"knob:{k}" for k in sorted(knobs) if len({dict(r.extra).get(k) for r in requests}) > 1]
    return out


def guard(compiles: int, yes: bool, max_compiles: int | None, sample_tasks: Sequence[Any] = (),
          compile_sample=None) -> None:
    """Refuse a grid of too many compiles unless confirmed, with how long it would take here.

    The rate is measured by compiling ``sample_tasks`` (a few of the grid's own, one per worker, which the
    cache keeps) with ``compile_sample``."""
    from ..grid import GridSize, check_size

    def measure() -> GridSize:
        if not sample_tasks or compile_sample is None:
            return GridSize(compiles, None, 0)
        t0 = time.perf_counter()
        compile_sample(list(sample_tasks))
        wall = time.perf_counter() - t0
        return GridSize(compiles, wall / len(sample_tasks), len(sample_tasks))

    check_size(compiles, max_compiles, yes, measure)


@contextlib.contextmanager
def executor_for(scheduler: str | None) -> Iterator[Any]:
    """None (the local process pool) or an Executor on the Dask scheduler at ``scheduler``."""
    if not scheduler:
        yield None
        return
    from ..compile.cluster import dask_executor

    with dask_executor(scheduler) as ex:
        yield ex


def sample_of(tasks: Sequence[Any], jobs: int | None) -> list[Any]:
    import os

    return list(tasks)[: max(1, jobs or os.cpu_count() or 1)]


def guarded_sweep(variants, arch, requests, *, jobs=None, use_cache=True, kernel_dir=None, yes=False,
                  max_compiles=None, scheduler=None, capture=None, toolchains=()) -> list:
    """``run_sweep`` of a grid: refused when over the compile limit (with the time it would take), run on the
    Dask scheduler when one is named."""
    from ..compile.cache import CompileCache
    from ..compile.engine import Engine
    from ..sweep import capture_tasks, launch_overrides, sweep_items
    from ..attention.source import variant_tasks
    from .progress import compile_progress

    with executor_for(scheduler) as executor, compile_progress() as progress:
        engine = Engine(jobs, CompileCache(enabled=use_cache), executor, progress)
        tasks = []
        if capture is None or variants or kernel_dir:
            items = sweep_items(variants, arch, requests, kernel_dir)
            compiles = sum(len(v.kernels) for v, *_ in items)
            guard(compiles, yes, max_compiles, sample_of(items, jobs),
                  lambda sample: engine.compile(variant_tasks(sample, engine)))
            tasks = variant_tasks(items, engine)
        if capture is not None:
            tasks += capture_tasks(capture, arch, launch_overrides(requests, not (variants or kernel_dir)))
        if toolchains:
            tasks = [t.under(tc) for tc in toolchains for t in tasks]
        try:
            return engine.compile(tasks)
        finally:
            engine.close()


def point_label(req: Any, axes: Sequence[str]) -> str:
    """'[block_m=64 num_warps=4]': what one grid point sets, for a table title."""
    if not axes:
        return ""
    parts = []
    for a in axes:
        v = dict(req.extra).get(a[len("knob:"):]) if a.startswith("knob:") else getattr(req, a)
        parts.append(f"{a.removeprefix('knob:')}={'default' if v is None else v}")
    return "[" + " ".join(parts) + "]"


def per_request(variants, arch, requests, records, kernel_dir=None) -> dict[str, list]:
    """A grid's records split by grid point (a record shared by two points, as a default the points do not
    change is, goes to both), keyed by the point's label ('' when there is one point)."""
    from ..sweep import sweep_items

    if len(requests) == 1:
        return {"": list(records)}
    axes = varying_axes(requests)
    out: dict[str, list] = {}
    for req in requests:
        keys = {(v.name, a.name, c.key()) for v, c, a, _ in sweep_items(variants, arch, [req], kernel_dir)}
        out[point_label(req, axes)] = [r for r in records if (r.variant, r.arch, r.config.key()) in keys]
    return out
