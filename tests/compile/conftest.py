"""The compile tests' kernel directory: the requesting module's ``KERNEL`` (a variant file's text) as ``mine.py``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vgprscope.flashattn.variants import load_variants


@pytest.fixture()
def kernel_dir(request, tmp_path) -> Path:
    """A kernel directory holding the test module's ``KERNEL``, with the variants read anew (their cache cleared)."""
    d = tmp_path / "kernels"
    d.mkdir()
    (d / "mine.py").write_text(textwrap.dedent(request.module.KERNEL))
    load_variants.cache_clear()
    return d
