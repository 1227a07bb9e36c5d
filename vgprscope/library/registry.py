"""The kernel sources by keyword: the one table the library's calls, the gate's configuration and the CLI's
``Kernels`` bundle read a source's keyword through, and the one rule of which sources a selection uses.

Adding a source is its module (a class answering ``sources/base.py``'s ``Source``, with ``read``) and its
line in ``SOURCES`` below; ``vgprscope/cli/options.py`` declares its option in the ``Kernels`` bundle when
the commands should take it (``vgprscope/sources/README.md``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from ..flashattn.config import ConfigRequest
from ..sources.base import Reading, Source, SourceType

# keyword (the library's keyword, the CLI's option, the gate configuration's key) -> the source type reading it:
# its class, or "module:Class", imported where a selection uses that source (a warm analyze of the bundled
# variants loads no capture reader)
SOURCES: dict[str, SourceType | str] = {
    # a directory of variants in the bundled protocol (default: the bundled ones)
    "kernel_dir": "vgprscope.flashattn.source:VariantSource",
    # captured launches: a capture file, vgprscope.capture()'s session, a kernel's
    "capture": "vgprscope.sources.capture:CaptureSource",
}
# the keyword of what a selection compiles when it names no other source: the bundled variants
DEFAULT = "kernel_dir"


def source_type(keyword: str) -> SourceType:
    """The source type registered for ``keyword``, imported on first use."""
    kind = SOURCES[keyword]
    if isinstance(kind, str):
        module, _, name = kind.partition(":")
        kind = getattr(importlib.import_module(module), name)
    return kind  # type: ignore[return-value]


def given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The registered keywords of ``values`` that were given (None, and an empty list, are not), in the
    registry's order."""
    return {k: values[k] for k in SOURCES if k in values and not _absent(values[k])}


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and not value)


def _picked(keywords: Mapping[str, Any]) -> set[str]:
    return set(given(keywords))


def only_default(keywords: Mapping[str, Any]) -> bool:
    """Whether no source but the default's (the variants: ``kernel_dir``) is given."""
    return _picked(keywords) <= {DEFAULT}


def uses_default(keywords: Mapping[str, Any], variants: Sequence[str]) -> bool:
    """Whether the default source (the bundled variants, or a kernel directory's) compiles: always, unless
    another source (a capture, ...) was given alone: without variants named or a kernel directory beside it."""
    picked = _picked(keywords)
    return bool(variants) or DEFAULT in picked or not picked


def read(keywords: Mapping[str, Any], variants: Sequence[str] = (), requests: Sequence[Any] = (ConfigRequest(),),
         launch_grid: bool = True) -> tuple[Source, ...]:
    """The sources a selection uses, read from its keywords' values: the default first where it compiles,
    then each source given, in the registry's order."""
    found = given(keywords)
    reading = Reading(tuple(variants), tuple(requests), uses_default(found, variants), launch_grid)
    first = [source_type(DEFAULT).read(None, reading)] if reading.with_variants and DEFAULT not in found else []
    return (*first, *(source_type(k).read(v, reading) for k, v in found.items()))


def pop_keywords(extra: dict[str, Any]) -> dict[str, Any]:
    """The registered keywords taken out of a call's other keywords (``**launch``), given or not."""
    return {k: extra.pop(k) for k in list(extra) if k in SOURCES}
