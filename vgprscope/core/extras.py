"""Optional dependencies: which extra installs each, and the one-line error when one is missing.

The register gate (compile, parse, occupancy, analyze, compare, check, baseline) needs Triton only; torch
is the ``bench`` extra, for what runs kernels on tensors: ``bench``, ``compare --bench`` and
``vgprscope.attention``; matplotlib is the ``plots`` extra (``analyze --plot``); Dask the ``distributed``
extra (``--scheduler``).

vgprscope is installed from a clone, a wheel or a Git URL (it is on no package index): the command an error
names adds the extra from where this vgprscope came from (pip's record of it, ``direct_url.json``), e.g.
``pip install '.[bench]'`` in the clone it was installed from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .errors import MissingExtraError

# torch is pinned at install time, never by the extra: a bare `torch` from PyPI is the multi-GB CUDA build
# on Linux, right for a GPU machine and wrong for a CPU one.
TORCH_PIN = "torch==2.13.0"


def install_command(extra: str, also: str = "") -> str:
    """``pip install ...`` adding ``extra`` (and ``also``, more requirements) to this vgprscope, named as it
    was installed: its clone's directory (``.`` when it is the working directory), its wheel, its URL."""
    target = _source_of_install()
    spec = f"{target}[{extra}]" if not target.startswith("vgprscope ") else f"vgprscope[{extra}] @ {target[10:]}"
    return " ".join(["pip install", *(["-e"] if _editable() else []), f"'{spec}'", *([also] if also else [])])


def _direct_url() -> dict[str, Any] | None:
    """pip's record of where this vgprscope was installed from (None: an index, or a checkout on sys.path)."""
    import importlib.metadata

    try:
        text = importlib.metadata.distribution("vgprscope").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        doc = json.loads(text) if text else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("url"), str) else None


def _editable() -> bool:
    doc = _direct_url() or {}
    return bool((doc.get("dir_info") or {}).get("editable"))


def _source_of_install() -> str:
    """What pip is given to reinstall this vgprscope: a directory or a wheel (a path, ``.`` for the working
    directory), ``vgprscope @ URL`` for a remote archive or a VCS, else the checkout it runs from (or its
    name, where it came from an index)."""
    doc = _direct_url()
    if doc is None:
        here = Path(__file__).resolve().parents[2]
        return _shown(here) if (here / "pyproject.toml").is_file() else "vgprscope"
    url = doc["url"]
    if url.startswith("file:"):
        return _shown(Path(unquote(urlparse(url).path)))
    vcs = doc.get("vcs_info") or {}
    if vcs.get("vcs"):
        ref = f"@{vcs['commit_id']}" if vcs.get("commit_id") else ""
        return f"vgprscope {vcs['vcs']}+{url}{ref}"
    return f"vgprscope {url}"


def _shown(path: Path) -> str:
    """A local path as pip takes it: ``.`` for the working directory, ``./sub`` below it, else absolute (a
    bare ``sub`` would be a package's name to pip)."""
    try:
        rel = os.path.relpath(path, Path.cwd())
    except ValueError:
        return str(path)
    if rel == ".":
        return rel
    return f"./{rel}" if not rel.startswith("..") else str(path)


def require_torch(what: str) -> None:
    """Raise MissingExtraError naming the extra when torch cannot be imported; ``what`` needs it."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise MissingExtraError(what, "torch", "bench", install_command("bench", TORCH_PIN)) from None


def require_matplotlib(what: str) -> None:
    """Raise MissingExtraError naming the ``plots`` extra when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtraError(what, "matplotlib", "plots", install_command("plots")) from None
