"""What the commands share: error handling, option types, output writing."""

from __future__ import annotations

import functools
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Callable, Optional

import typer

from ..errors import VgprscopeError
from ..fsutil import atomic_write


def err(message: str) -> None:
    """A diagnostic on stderr; tables and data go to stdout."""
    print(f"vgprscope: {message}", file=sys.stderr)


def handles_errors(fn: Callable) -> Callable:
    """Turn the core's typed errors into one stderr line and their exit code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except VgprscopeError as exc:
            err(f"error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err("interrupted; no output file was written")
            raise typer.Exit(130) from None

    return wrapper


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


class Dtype(str, Enum):
    fp16 = "fp16"
    bf16 = "bf16"


ArchOpt = Annotated[
    Optional[list[str]],
    typer.Option("--arch", "-a", help="Target arch, repeatable: gfx90a, gfx942, gfx950, gfx1100, sm_80, sm_86, "
                 "sm_89, sm_90, sm_100 \\[default: gfx90a, gfx942, sm_80]"),
]
VariantOpt = Annotated[
    Optional[list[str]],
    typer.Option("--variant", "-v", help="Variant, repeatable or comma-separated; 'all' \\[default: all]"),
]
BlockMOpt = Annotated[Optional[int], typer.Option("--block-m", min=1, help="BLOCK_M \\[default: the variant's]")]
BlockNOpt = Annotated[Optional[int], typer.Option("--block-n", min=1, help="BLOCK_N \\[default: the variant's]")]
HeadDimOpt = Annotated[int, typer.Option("--head-dim", "-d", min=1, help="Head dim (16-256)")]
NumWarpsOpt = Annotated[Optional[int], typer.Option("--num-warps", min=1, help="num_warps \\[default: the variant's]")]
NumStagesOpt = Annotated[Optional[int], typer.Option("--num-stages", min=1, help="num_stages \\[default: the variant's]")]
WavesPerEuOpt = Annotated[Optional[int], typer.Option("--waves-per-eu", min=0, help="AMD: waves_per_eu hint")]
NonKDimOpt = Annotated[Optional[int], typer.Option("--matrix-instr-nonkdim", min=0, help="AMD: MFMA size (16 or 32)")]
KpackOpt = Annotated[Optional[int], typer.Option("--kpack", min=1, help="AMD: kpack (1 or 2)")]
MaxnregOpt = Annotated[Optional[int], typer.Option("--maxnreg", min=1, help="NVIDIA: maxnreg register cap")]
DtypeOpt = Annotated[Dtype, typer.Option("--dtype", help="Element type of q, k, v")]
CausalOpt = Annotated[bool, typer.Option("--causal/--no-causal", help="Causal mask (bottom-right aligned)")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format")]
OutputOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file (atomically) instead of stdout")]
JobsOpt = Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help="Parallel compiles \\[default: all cores]")]
KernelDirOpt = Annotated[
    Optional[Path], typer.Option("--kernel-dir", help="Load variants from this directory instead of the bundled ones")
]
KnobOpt = Annotated[
    Optional[list[str]],
    typer.Option("--knob", "-k", help="A variant's own knob, NAME=VALUE, repeatable (num_splits=4, block_dk=32); "
                 "given to the variants that take it"),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Compile even when the cache holds the result")]
WideOpt = Annotated[bool, typer.Option(
    "--wide", help="Table: every column, each row on one line. Without it the table fits the terminal "
    "(in a pipe or file: $COLUMNS, else 100 columns) with long notes as footnotes")]


def emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        atomic_write(output, text)
        err(f"wrote {output}")
