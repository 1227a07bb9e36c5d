"""``vgprscope scan [DIR]``: what a GPU run compiled, read from Triton's cache, and the same kernels retargeted."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import app
from .common import ArchOpt, Format, FormatOpt, JobsOpt, NoCacheOpt, OutputOpt, WideOpt, emit, err, handles_errors


@app.command()
@handles_errors
def scan(
    directory: Annotated[Optional[Path], typer.Argument(
        help="Triton cache directory \\[default: $TRITON_CACHE_DIR, else ~/.triton/cache]")] = None,
    arch: Annotated[Optional[list[str]], typer.Option(
        "--arch", "-a", help="Also recompile each kernel's TTIR for this arch, repeatable (gfx950, sm_90, ...)")] = None,
    format: FormatOpt = Format.table,
    output: OutputOpt = None,
    jobs: JobsOpt = None,
    no_cache: NoCacheOpt = False,
    wide: WideOpt = False,
) -> None:
    """Registers, spills, LDS and occupancy of the kernels in a Triton cache (what a GPU run compiled).

    Read from the stored AMDGCN / cubin for the arch each was built for (--arch recompiles their TTIR for
    others); partial or corrupt entries are rows with the reason. Rows are named by kernel, the file it
    came from beside it."""
    from ..scan import scan as scan_cache
    from ..sources.triton_cache import default_dir
    from ..sweep import select_archs
    from .analyze import render
    from .progress import compile_progress

    archs = select_archs(arch) if arch else []
    with compile_progress() as progress:
        result = scan_cache(directory or default_dir(), archs, jobs=jobs, use_cache=not no_cache,
                            on_progress=progress)
    err(f"scanned {result.summary()}")
    if not result.records:
        err("no kernel in the cache")
        raise typer.Exit(1)
    emit(render(list(result.records), format, "scan", title="vgprscope scan", wide=wide, by_kernel=True), output)
    if not any(r.ok for r in result.records):
        raise typer.Exit(1)
