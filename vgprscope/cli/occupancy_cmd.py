"""``vgprscope occupancy``: the occupancy calculator, from register / LDS counts typed by hand."""

from __future__ import annotations

import typer

from ..core.exit_codes import FAILURE
from .common import emit, err, handles_errors
from .options import (
    AgprsOpt,
    LadderOpt,
    LdsOpt,
    OccFormat,
    OccFormatOpt,
    OneArchOpt,
    RegsOpt,
    SgprsOpt,
    SharedOpt,
    ThreadsOpt,
    VgprsOpt,
    WideOpt,
    WorkgroupOpt,
)


@handles_errors
def occupancy_cmd(
    arch: OneArchOpt,
    vgprs: VgprsOpt = None,
    agprs: AgprsOpt = None,
    sgprs: SgprsOpt = None,
    lds: LdsOpt = None,
    workgroup: WorkgroupOpt = None,
    regs: RegsOpt = None,
    shared: SharedOpt = None,
    threads: ThreadsOpt = None,
    show_ladder: LadderOpt = False,
    fmt: OccFormatOpt = OccFormat.table,
    wide: WideOpt = False,
) -> None:
    """Occupancy of one kernel from its counts: the limit, what binds, and the next step.

    Exit 1 (the answer still printed) when the counts cannot launch on the arch: occupancy 0.
    """
    from ..library.occupancy import occupancy

    result = occupancy(arch, vgprs=vgprs, agprs=agprs, sgprs=sgprs, lds=lds, workgroup=workgroup, regs=regs,
                       shared=shared, threads=threads, ladder=show_ladder)
    emit(result.to_json() if fmt is OccFormat.json else result.table(wide), None)
    if (why := result.cannot_launch) is not None:  # the answer is printed; the exit code says it cannot run
        err(f"error: {why}")
        raise typer.Exit(FAILURE)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command("occupancy")(occupancy_cmd)
