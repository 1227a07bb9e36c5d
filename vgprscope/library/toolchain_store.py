"""``vgprscope toolchains`` as library calls: the Triton releases installed to compile with (the store,
``compile.toolchains``), and removing one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..compile import toolchains as store
from ..compile.toolchains import StoreEntry


@dataclass(frozen=True)
class InstalledToolchains:
    """Every directory of the store (whole toolchains, broken ones, installs under way or interrupted) and where
    the store is."""

    entries: tuple[StoreEntry, ...]
    directory: Path

    @property
    def broken(self) -> bool:
        """Whether a broken toolchain or an interrupted install is left (``remove`` deletes it)."""
        return any(e.note and not e.alive for e in self.entries)

    def table(self) -> str:
        """One line a directory: the release, its size in MB, its path and what is wrong with it."""
        lines = [f"{'Triton':<10} {'MB':>6}  path"]
        for e in self.entries:
            note = f"  ({e.note})" if e.note else ""
            lines.append(f"{e.version:<10} {e.size / 2**20:>6.0f}  {e.path}{note}")
        return "\n".join(lines)


def installed_toolchains() -> InstalledToolchains:
    """The Triton toolchains installed (``--triton VERSION`` installs one)."""
    return InstalledToolchains(tuple(store.list_store()), store.store())


def remove_toolchain(version: str) -> Path:
    """Delete an installed Triton toolchain, whole or broken, and what an interrupted install of it left; its
    directory. A release not installed is a UsageError (``ToolchainError``) naming those that are."""
    return store.remove(version)
