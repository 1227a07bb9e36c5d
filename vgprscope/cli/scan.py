"""``vgprscope scan [DIR]``: what a GPU run compiled, read from Triton's cache, and the same kernels retargeted."""

from __future__ import annotations

import typer

from ..core.exit_codes import FAILURE
from .common import emit, err, handles_errors
from .options import CacheDirArg, Compiles, Format, FormatOpt, Output, RetargetArchOpt, TritonOpt, bundled


@handles_errors
@bundled
def scan(directory: CacheDirArg = None, *, arch: RetargetArchOpt = None, triton: TritonOpt = None,
         format: FormatOpt = Format.table, out: Output, run: Compiles) -> None:
    """Registers, spills, LDS and occupancy of the kernels in a Triton cache (what a GPU run compiled).

    Read from the stored AMDGCN / cubin for the arch each was built for (--arch recompiles their TTIR for
    others); partial or corrupt entries are rows with the reason. Rows are named by kernel, the file it
    came from beside it. Entries another Triton release wrote are read and recompiled by that release where
    it is at hand (--triton, or a toolchain installed before); a stored cubin's spill figures come from the
    ptxas that rebuilds it, else are unknown. Inductor's cache directory (TORCHINDUCTOR_CACHE_DIR): each
    generated kernel's configs compiled from its source for the arch it was generated for and --arch."""
    from ..library import api
    from .analyze import reads_loops, render
    from .common import in_project
    from .progress import compile_progress

    arch = in_project({"arch": arch})[0].get("arch")  # the project's archs where --arch is not given
    with compile_progress("scanning") as progress:  # stored kernels are read, Inductor's compiled
        result = api.scan(directory, arch=arch, triton=triton, **run.library(), on_progress=progress,
                          loops=reads_loops(format, out) or None)
    err(f"scanned {result.summary}")
    if not result.records:
        if result.caches:
            err("no kernel in the cache")
        raise typer.Exit(FAILURE)
    emit(render(list(result.records), format, "scan", title="vgprscope scan", wide=out.wide, by_kernel=True,
                machine=getattr(result, "machine", None)), out.output)
    if not any(r.ok for r in result.records):
        raise typer.Exit(FAILURE)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command()(scan)
