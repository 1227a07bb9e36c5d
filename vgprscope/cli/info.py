"""``vgprscope archs`` and ``vgprscope variants``: the library's calls (``library.info``), printed."""

from __future__ import annotations

from typing import Any

from .common import emit, handles_errors
from .options import Format, FormatOpt, KernelDirOpt, OutputOpt, WideOpt


@handles_errors
def archs_cmd(format: FormatOpt = Format.table, output: OutputOpt = None, wide: WideOpt = False) -> None:
    """The arch constants every number comes from; the rules and their sources: docs/occupancy-rules.md."""
    from ..library.info import archs

    emit(archs().render(format.value, wide), output)


@handles_errors
def variants_cmd(format: FormatOpt = Format.table, output: OutputOpt = None, kernel_dir: KernelDirOpt = None,
                 wide: WideOpt = False) -> None:
    """The attention variants: strategy, seed, what each trades, and its kernels (nothing is compiled)."""
    from ..library.info import variants

    emit(variants(kernel_dir).render(format.value, wide), output)


def register(app: Any) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command("archs")(archs_cmd)
    app.command("variants")(variants_cmd)
