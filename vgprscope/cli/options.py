"""Every option of every command, declared once, and the bundles the commands take them in.

A command is an option bundle, one library call and a view: its signature names bundles (``Kernels``,
``Grid``, ``Compiles``, ...) and the few options of its own; ``bundled`` shows typer each bundle's fields as
options and hands the command the bundles back, built. An option means the same wherever it appears; a flag
whose meaning differs by command is a separate declaration here, named for what it is (``OneArchOpt``:
occupancy's single arch; ``RetargetArchOpt``: scan's optional archs; the ``--format`` of each command's
formats), and tests/cli/test_cli_options.py checks that no other flag is declared twice and that no command
declares an option of its own outside this module.

Arch names in help text come from the arch table (``archs.ARCHS``), never a list typed here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.archs import ARCHS, DEFAULT_ARCHS
from ..core.options import COMPILER_WARNINGS, CompilerWarning, Option
from ..flashattn.tiles import field_named, grid_fields
from .common import nonempty_names, writable_output

_GRID = "; a comma list or a repeated option makes a grid"


TARGETS = tuple(n for n, a in ARCHS.items() if a.triton_target)


def _archs(names: Any = None) -> str:
    return ", ".join(names if names is not None else ARCHS)


def _grid(flag: str, what: str, short: str | None = None, metavar: str = "N,...") -> Any:
    names = (flag, short) if short else (flag,)
    return typer.Option(*names, help=f"{what}{_GRID}", metavar=metavar)


# ---- what to compile ---------------------------------------------------------------------------------------

# the archs Triton compiles for, from the arch table (a new row is in the help without touching this)
ArchOpt = Annotated[list[str] | None, typer.Option(
    "--arch", "-a", callback=nonempty_names,
    help=f"Target arch, repeatable: {_archs(TARGETS)} \\[default: the project's \\[tool.vgprscope] archs, else "
         f"{_archs(DEFAULT_ARCHS)}]")]
OneArchOpt = Annotated[str, typer.Option("--arch", "-a", help=f"One arch: {_archs()}")]
RetargetArchOpt = Annotated[list[str] | None, typer.Option(
    "--arch", "-a", callback=nonempty_names,
    help=f"Also recompile each kernel's TTIR for this arch, repeatable: {_archs()} \\[default: the project's "
         "\\[tool.vgprscope] archs, if any]")]
VariantOpt = Annotated[list[str] | None, typer.Option(
    "--variant", "-v", callback=nonempty_names, help="Variant, repeatable or comma-separated; 'all' \\[default: all]")]
StrategiesOpt = Annotated[list[str] | None, typer.Option(
    "--strategies", "-s", callback=nonempty_names,
    help="Same as --variant: 'all' or a comma list of variants \\[default: all]")]
KernelDirOpt = Annotated[Path | None, typer.Option(
    "--kernel-dir", help="Load variants from this directory instead of the bundled ones")]
CaptureOpt = Annotated[Path | None, typer.Option(
    "--capture", help="Compile the specialisations of this capture file (vgprscope capture) instead of the "
    "bundled variants (with them, when --variant is given) \\[default: the project's \\[tool.vgprscope] capture]")]

# ---- the config grid ---------------------------------------------------------------------------------------

@functools.cache
def grid_option(option: Option) -> Any:
    """A grid field's option (a tile's or a launch option's row): strings, a comma list or repeated. One
    declaration each, whichever bundles take it."""
    return Annotated[list[str] | None, _grid(option.flag, option.cli_help(), option.short or None)]


def with_grid_fields(leave_out: Callable[[Option], bool] = lambda option: False) -> Callable[[type], type]:
    """A class decorator, under ``@dataclass``: a bundle's option per grid field (``library.grid.grid_fields``:
    the tiles', then the launch options'), before the bundle's own fields."""

    def add(cls: type) -> type:
        own = dict(cls.__dict__.get("__annotations__", {}))
        annotations: dict[str, Any] = {}
        for option in grid_fields():
            if not leave_out(option):
                annotations[option.name] = grid_option(option)
                setattr(cls, option.name, None)
        cls.__annotations__ = annotations | own
        return cls

    return add


HeadDimOpt = grid_option(field_named("head_dim"))
DtypeOpt = Annotated[list[str] | None, _grid(
    "--dtype", "Element type of q, k, v \\[default: fp16]", metavar="fp16,bf16")]
KnobOpt = Annotated[list[str] | None, typer.Option(
    "--knob", "-k", metavar="NAME=V,...", help="A variant's own knob, NAME=VALUE, repeatable (num_splits=4, "
    "block_dk=32); NAME=V1,V2 makes a grid; given to the variants that take it")]
CausalOpt = Annotated[bool | None, typer.Option(
    "--causal/--no-causal", help="Causal mask (bottom-right aligned) \\[default: off; bench: the preset's cases]",
    show_default=False)]
ShapeOpt = Annotated[list[str] | None, typer.Option(
    "--shape", help="B,H,Nq,Nk\\[,Hkv]: compare: the traffic model's reference problem \\[default: 4,32,4096,4096]; "
    "bench: a case to time, repeatable (Hkv: K/V heads)")]

# ---- how to compile ----------------------------------------------------------------------------------------

JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Parallel compiles \\[default: all cores]")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Compile even when the cache holds the result")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Run a grid of more than 10,000 compiles")]
MaxCompilesOpt = Annotated[int | None, typer.Option(
    "--max-compiles", min=1, help="Refuse a grid of more compiles than this \\[default: 10,000]")]
def _nonempty(value: str | None) -> str | None:
    """An option whose empty value would silently mean "not given" (--sort '', --scheduler '')."""
    if value is not None and not value.strip():
        raise typer.BadParameter("the value is empty; give one, or leave the option out")
    return value


@functools.cache
def warning_option(row: CompilerWarning) -> Any:
    """A compiler warning's option (a row of ``core.options.COMPILER_WARNINGS``): a switch, or a value from the
    row's minimum."""
    if row.type is bool:
        return Annotated[bool, typer.Option(row.flag, help=row.cli_help())]
    return Annotated[row.type | None, typer.Option(row.flag, min=row.minimum, metavar=row.metavar or None,
                                                   help=row.cli_help())]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", callback=_nonempty, help="Compile on this Dask scheduler (tcp://HOST:PORT) instead of local processes; "
    "needs the distributed extra")]
TritonOpt = Annotated[list[str] | None, typer.Option(
    "--triton", "-t", metavar="VERSION|A..B|PATH",
    help="A Triton to compile with: a release (3.8.0; installed once into the user's toolchain store), a range of "
         "releases (3.4.0..3.9.0), or a Python environment that has Triton; repeatable on analyze (a history) "
         "and diff (two sides) \\[default: the installed one]")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", metavar="NAME=VALUE",
    help="A compiler setting (an environment variable Triton reads, e.g. TRITON_HIP_USE_BLOCK_PINGPONG=1), "
         "repeatable; diff: of the second side")]

# ---- what to show ------------------------------------------------------------------------------------------


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    md = "md"
    html = "html"  # one self-contained page with charts (write it with -o report.html)


class ExplainFormat(str, Enum):
    table = "table"
    json = "json"
    md = "md"
    html = "html"
    sarif = "sarif"  # SARIF 2.1.0 for code scanning: a result per spill site, at its source line


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    md = "md"
    html = "html"
    sarif = "sarif"  # SARIF 2.1.0 for code scanning: a result per regression, at the kernel's line


class GateFormat(str, Enum):
    table = "table"
    md = "md"
    html = "html"
    json = "json"
    benchmark_json = "benchmark-json"  # github-action-benchmark's customSmallerIsBetter
    sarif = "sarif"  # SARIF 2.1.0 for code scanning: a result per regression, at the kernel's line


class OccFormat(str, Enum):
    table = "table"
    json = "json"


def _format() -> Any:
    return typer.Option("--format", "-f", help="Output format")


# one --format per set of formats a command writes
FormatOpt = Annotated[Format, _format()]
ExplainFormatOpt = Annotated[ExplainFormat, _format()]
GateFormatOpt = Annotated[GateFormat, _format()]
DiffFormatOpt = Annotated[DiffFormat, _format()]
OccFormatOpt = Annotated[OccFormat, _format()]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", callback=writable_output, help="Write to this file (atomically) instead of stdout (- for stdout)")]
CaptureOutputOpt = Annotated[Path, typer.Option("--output", "-o", help="Capture file to write (atomically)")]
KeepSourcesOpt = Annotated[Path | None, typer.Option(
    "--keep-sources", metavar="DIR",
    help="Write the generated modules of the captured kernels (torch.compile's, which live in a temporary cache) "
         "into DIR; the capture names them, so spill sites are at their own lines")]
WideOpt = Annotated[bool, typer.Option(
    "--wide", help="Table: every column, each row on one line. Without it the table fits the terminal "
    "(in a pipe or file: $COLUMNS, else 100 columns) with long notes as footnotes")]
SortOpt = Annotated[str | None, typer.Option(
    "--sort", metavar="METRIC", callback=_nonempty,
    help="Order each table best first by a metric: vgprs, regs, spills, scratch, lds, occupancy, sgprs (analyze: "
         "also compile or any csv field; compare: spill_free_occupancy with --frontier; frontier: "
         "spill_free_occupancy, next_spills, min_maxnreg)")]
PlotOpt = Annotated[Path | None, typer.Option(
    "--plot", help="With several --triton: a PNG of registers and spills per release per kernel")]

# ---- the gate ----------------------------------------------------------------------------------------------

ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="TOML file with the gate's settings and rules (\\[tool.vgprscope] or top-level keys) "
    "\\[default: the nearest pyproject.toml]")]
BaselineOpt = Annotated[Path | None, typer.Option(
    "--baseline", "-b", help="Baseline file \\[default: vgprscope-baseline.json beside the config]")]
RuleOpt = Annotated[list[str] | None, typer.Option(
    "--rule", "-r", help="\\[VARIANT:]METRIC:TOLERANCE, repeatable: vgpr_total:+4, split-k:vgpr_total:+8, "
    "registers:+4 (vgpr_total on AMD, regs on NVIDIA), scratch_bytes:+10%, occupancy:-1, arch_vgpr:exact, sgpr:off")]
AllowMissingOpt = Annotated[bool, typer.Option(
    "--allow-missing", help="Baseline entries this run does not produce do not fail (they are still listed); "
    "or allow_missing = true / [\"PATTERN\", ...] in \\[tool.vgprscope]")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="Tolerance 0 on every count: registers, SGPRs and LDS may not grow even within their "
    "occupancy step (or strict = true in \\[tool.vgprscope])")]
FailOnChangeOpt = Annotated[bool, typer.Option(
    "--fail-on-change", help="Fail on any change: improvements, changed configs, new and missing entries too")]
AllowVersionChangeOpt = Annotated[bool, typer.Option(
    "--allow-version-change", help="Compare with a baseline compiled by another Triton version")]

# ---- the options of one command each -----------------------------------------------------------------------

def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"vgprscope {__version__}")
        raise typer.Exit()


VersionOpt = Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit")]
BenchOpt = Annotated[bool, typer.Option("--bench", help="Add timings on this GPU (compile-only without one)")]
FrontierOpt = Annotated[bool, typer.Option(
    "--frontier", help="Compile every occupancy level too: each strategy's spill-free occupancy and the spills at "
    "the next level")]
PresetOpt = Annotated[list[str] | None, typer.Option(
    "--preset", help="prefill, decode or gqa, repeatable")]
KvHeadsOpt = Annotated[int | None, typer.Option(
    "--kv-heads", min=1, help="K/V heads of --shape cases that give none (grouped-query attention; must divide H) "
    "\\[default: H]")]
AutotuneOpt = Annotated[bool, typer.Option("--autotune", help="Pick each variant's best config from a small grid")]
AnchorsOpt = Annotated[bool, typer.Option("--anchors/--no-anchors", help="Time torch SDPA backends too")]
CudaGraphOpt = Annotated[bool, typer.Option(
    "--cuda-graph", help="Time CUDA graph replays of each launch (the GPU's time without the host's launch cost, as "
    "serving engines run decode) instead of eager calls")]
RepMsOpt = Annotated[float, typer.Option("--rep-ms", min=1, help="Timed milliseconds per measurement")]
BudgetSOpt = Annotated[float, typer.Option(
    "--budget-s", min=0.001, help="Skip launches the traffic model puts over this")]
CommandArg = Annotated[list[str] | None, typer.Argument(
    help="The command to run, after --: a test suite, a benchmark, a model script")]
CacheDirArg = Annotated[Path | None, typer.Argument(
    help="Triton cache directory \\[default: $TRITON_CACHE_DIR, else ~/.triton/cache]")]
ReleaseArg = Annotated[str, typer.Argument(help="The release to delete, e.g. 3.8.0")]
# the occupancy calculator's counts
VgprsOpt = Annotated[int | None, typer.Option(
    "--vgprs", help="AMD: arch VGPRs per wave (`; NumVgprs:`); AGPRs go to --agprs")]
AgprsOpt = Annotated[int | None, typer.Option("--agprs", help="AMD (CDNA): AGPRs per wave")]
SgprsOpt = Annotated[int | None, typer.Option(
    "--sgprs", help="AMD: SGPRs per wave incl. VCC / flat scratch / XNACK (.sgpr_count)")]
LdsOpt = Annotated[int | None, typer.Option(
    "--lds", help="AMD: LDS bytes per workgroup, static + dynamic (Triton's shared)")]
WorkgroupOpt = Annotated[int | None, typer.Option(
    "--workgroup", help="AMD: threads per workgroup (Triton: num_warps x wave size); default: one wave")]
RegsOpt = Annotated[int | None, typer.Option("--regs", help="NVIDIA: registers per thread")]
SharedOpt = Annotated[int | None, typer.Option(
    "--shared", help="NVIDIA: shared memory bytes per block, static + dynamic")]
ThreadsOpt = Annotated[int | None, typer.Option(
    "--threads", help="NVIDIA: threads per block (Triton: num_warps x 32); default: 128")]
LadderOpt = Annotated[bool, typer.Option(
    "--ladder", help="Print the arch's register -> occupancy steps (for --workgroup / --threads)")]


# ---- bundles -----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Kernels:
    """What to compile: bundled (or a directory's) variants, a capture, on archs. A source's option
    (``library/registry.py``'s keyword, as ``capture``) is one field here: it reaches the calls by its name."""

    variant: VariantOpt = None
    arch: ArchOpt = None
    capture: CaptureOpt = None
    kernel_dir: KernelDirOpt = None

    def library(self) -> dict[str, Any]:
        """The library's keywords of the same names."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


class _GridValues:
    """What the grid bundles share: their fields' values as the library's keywords and as requests. A bundle
    without some of the config options (the frontier's, bench's) has fewer fields; those read as not given."""

    def _given(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    def library(self) -> dict[str, Any]:
        """The library's keywords: each integer option's values checked and parsed here (a message naming the
        flag, ``--block-m 100 ...``), lists where the library takes lists."""
        from ..library.grid import dtype_values, option_values

        given = self._given()
        out: dict[str, Any] = {o.name: option_values(o, given[o.name], cli=True) or None
                               for o in grid_fields() if o.name in given}
        if "dtype" in given:
            out["dtype"] = dtype_values(given["dtype"], cli=True) or None
        if "knob" in given:
            out["knob"] = list(given["knob"] or []) or None
        if "causal" in given:
            out["causal"] = given["causal"]
        return out

    def requests(self, shape: tuple[int, ...] | None = None) -> list[Any]:
        """The ConfigRequests of the grid (one when nothing varies)."""
        from ..library.grid import grid_requests

        given = self._given()
        return grid_requests(given, knob=given.get("knob"), causal=given.get("causal", False), shape=shape)


@dataclasses.dataclass(frozen=True)
@with_grid_fields()
class Grid(_GridValues):
    """The config options; several values of one (a comma list or a repeated option) make a grid."""

    knob: KnobOpt = None
    dtype: DtypeOpt = None
    causal: CausalOpt = None


@dataclasses.dataclass(frozen=True)
@with_grid_fields(leave_out=lambda option: option.occupancy_knob)
class FrontierGrid(_GridValues):
    """The grid's options but the occupancy knob, which the frontier sets itself (waves_per_eu, maxnreg)."""

    knob: KnobOpt = None
    dtype: DtypeOpt = None
    causal: CausalOpt = None


@dataclasses.dataclass(frozen=True)
@with_grid_fields(leave_out=lambda option: option.name == "head_dim")
class BenchGrid(_GridValues):
    """The grid's launch and tile options; bench takes the head dim, dtype and causal mask from its cases."""

    knob: KnobOpt = None


@dataclasses.dataclass(frozen=True)
class Compiles:
    """How to compile: workers, and whether the cache may answer."""

    jobs: JobsOpt = None
    no_cache: NoCacheOpt = False

    def library(self) -> dict[str, Any]:
        return {"jobs": self.jobs, "use_cache": not self.no_cache}


def _with_warning_fields(cls: type) -> type:
    """A class decorator, under ``@dataclass``: an option per compiler warning (``core.options``' rows)."""
    cls.__annotations__ = {row.name: warning_option(row) for row in COMPILER_WARNINGS}
    for row in COMPILER_WARNINGS:
        setattr(cls, row.name, row.default)
    return cls


@dataclasses.dataclass(frozen=True)
@_with_warning_fields
class Warnings:
    """The compiler's own warnings asked for beyond its defaults, an option per row of
    ``core.options.COMPILER_WARNINGS``."""

    def library(self) -> dict[str, Any]:
        return {row.name: getattr(self, row.name) for row in COMPILER_WARNINGS}


@dataclasses.dataclass(frozen=True)
class Large:
    """A large grid: the size guard and a Dask scheduler."""

    yes: YesOpt = False
    max_compiles: MaxCompilesOpt = None
    scheduler: SchedulerOpt = None

    def library(self) -> dict[str, Any]:
        return {"yes": self.yes, "max_compiles": self.max_compiles, "scheduler": self.scheduler}


@dataclasses.dataclass(frozen=True)
class Toolchains:
    """Which Triton compiles, and with which compiler settings."""

    triton: TritonOpt = None
    setting: SetOpt = None

    def library(self) -> dict[str, Any]:
        return {"triton": list(self.triton) if self.triton else None,
                "settings": list(self.setting) if self.setting else None}


@dataclasses.dataclass(frozen=True)
class Output:
    """Where the text goes, and how wide a table is."""

    output: OutputOpt = None
    wide: WideOpt = False


@dataclasses.dataclass(frozen=True)
class Rules:
    """The gate's rules: the configuration file and rules added on the command line."""

    config: ConfigOpt = None
    rule: RuleOpt = None
    fail_on_change: FailOnChangeOpt = False
    strict: StrictOpt = False


@dataclasses.dataclass(frozen=True)
class Cases:
    """bench's problems: shapes or a preset, the head dim, dtype and causal mask of each."""

    shape: ShapeOpt = None
    preset: PresetOpt = None
    head_dim: HeadDimOpt = None  # type: ignore[valid-type]  # (its row: flashattn/tiles.py)
    kv_heads: KvHeadsOpt = None
    dtype: DtypeOpt = None
    causal: CausalOpt = None


BUNDLES = (Kernels, Grid, FrontierGrid, BenchGrid, Compiles, Warnings, Large, Toolchains, Output, Rules, Cases)


def _is_bundle(annotation: Any) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation) and annotation in BUNDLES


def bundled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Show typer each bundle parameter of ``fn`` as its options (in the bundle's order, where the bundle
    stands), and call ``fn`` with the bundles built from them. Two bundles (or a bundle and a parameter) with
    an option of the same name are a mistake, refused here."""
    hints = typing.get_type_hints(fn, include_extras=True)
    params: list[inspect.Parameter] = []
    annotations: dict[str, Any] = {}
    groups: dict[str, tuple[type, list[str]]] = {}
    for p in inspect.signature(fn).parameters.values():
        ann = hints.get(p.name, p.annotation)
        if _is_bundle(ann):
            field_hints = typing.get_type_hints(ann, include_extras=True)
            names = []
            for f in dataclasses.fields(ann):
                params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                                annotation=field_hints[f.name]))
                annotations[f.name] = field_hints[f.name]
                names.append(f.name)
            groups[p.name] = (ann, names)
        else:
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=ann))
            annotations[p.name] = ann
    seen = [p.name for p in params]
    if len(seen) != len(set(seen)):
        raise TypeError(f"{fn.__name__}: an option is given twice: {sorted({n for n in seen if seen.count(n) > 1})}")

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        for name, (cls, names) in groups.items():
            kwargs[name] = cls(**{n: kwargs.pop(n) for n in names})
        return fn(**kwargs)

    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = annotations
    return wrapper
