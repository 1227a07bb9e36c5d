"""``vgprscope toolchains``: the Triton releases vgprscope has installed to compile with, and removing one
(``library.toolchain_store``)."""

from __future__ import annotations

import typer

from .common import ReflowedHelp, emit, err, handles_errors
from .options import ReleaseArg

toolchains_app = typer.Typer(cls=ReflowedHelp, help="The Triton releases vgprscope has installed to compile with.",
                             no_args_is_help=False, invoke_without_command=True)


@toolchains_app.callback()
@handles_errors
def toolchains_list(ctx: typer.Context) -> None:
    """List the installed Triton toolchains (version, size, path); `toolchains remove VERSION` deletes one."""
    if ctx.invoked_subcommand is not None:
        return
    from ..library.toolchain_store import installed_toolchains

    found = installed_toolchains()
    if not found.entries:
        err(f"no Triton toolchain installed yet in {found.directory} (`--triton VERSION` installs one)")
        return
    emit(found.table(), None)
    if found.broken:
        err("`vgprscope toolchains remove VERSION` deletes a broken toolchain or an interrupted install's "
            "directory (the next install of that release removes the latter too)")


@toolchains_app.command("remove")
@handles_errors
def toolchains_remove(version: ReleaseArg) -> None:
    """Delete an installed Triton toolchain."""
    from ..library.toolchain_store import remove_toolchain

    where = remove_toolchain(version)
    err(f"removed Triton {version} ({where})")


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.add_typer(toolchains_app, name="toolchains")
