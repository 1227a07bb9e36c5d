"""The bundled variants (or a user's kernel directory in the same protocol) as a source of specs.

Attention knowledge stays here and in ``vgprscope.variants``: a variant and a KernelConfig with its named
fields become one spec whose worker job loads the variant file and asks it for its kernels.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..archs import Arch
from ..records import KernelConfig, KernelIdentity
from ..variants import ConfigRequest, Variant, check_backend_options, check_knobs, request_label, resolve_config
from .spec import CompileSpec, dumps


def variant_spec(variant: Variant, config: KernelConfig, slot: str = "") -> CompileSpec:
    from .. import loader

    module = f"{loader._package_name(variant.directory)}.{variant.file.stem}"
    identity = KernelIdentity(module=module, qualname=",".join(variant.kernels), file=str(variant.file),
                              source_hash=variant.source_hash)
    job = dumps({"directory": str(variant.directory), "file_name": variant.file.name, "config": config.as_dict()})
    return CompileSpec(label=variant.name, kernels=variant.kernels, config=config, identity=identity,
                       source="variants", kind="variant", job=job, source_hash=variant.source_hash,
                       key=config.key(), variant=variant, slot=slot)


def variant_specs(variants: Sequence[Variant], archs: Sequence[Arch],
                  requests: Sequence[ConfigRequest]) -> list[tuple[CompileSpec, Arch]]:
    """Every (spec, arch) of variants x archs x requests, each specialisation once, in request order."""
    for req in requests:
        check_backend_options(req, list(archs))
        check_knobs(req, list(variants))
    out = []
    for req in requests:
        for v in variants:
            for a in archs:
                out.append((variant_spec(v, resolve_config(v, a, req), request_label(req)), a))
    return list(dict.fromkeys(out))
