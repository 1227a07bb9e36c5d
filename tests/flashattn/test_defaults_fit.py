"""Every bundled variant's default config launches on every supported arch.

"Default" is what a command compiles when the user gives no config option: ``variants.resolve_config`` for
the arch, the head dim and the shape (the variant's ``defaults`` and ``defaults_for``, and the shape's
defaults above them). The check compiles those configs for real and requires each kernel's LDS / shared
memory within the arch's per-workgroup / per-block limit (``compile.results.launch_limit_reason``, the
status every command shows).

What is compiled, and why that covers every accepted head dim (16 to 256):
- the kernels pad the head dim to a power of two for their tiles (``kernels/_launch.next_pow2_dim``), so a
  head dim allocates what its padded tile does; each distinct default config is compiled once, at the
  largest padded head dim it is the default for;
- at a fixed config no shared-memory buffer of these kernels shrinks as the padded head dim grows (K / V /
  Q tiles and the layout-conversion scratch scale with BLOCK_D or not at all), so that largest one bounds
  the others. Measured, not assumed: at the defaults of 2026-11-23 (all 8 variants, 9 archs, head dims
  16/32/64/128/256, `vgprscope analyze --arch <all> --head-dim D -f json`), every kernel's LDS / shared
  bytes were non-decreasing in the head dim.
- the shape sets only strides and sequence lengths, which no tile depends on: a decode default equal to a
  prefill one (but for the shape) is compiled once.
Archs: every arch Triton targets (gfx1201 and sm_120 too) except two, each compiled as an arch it equals
(checked below: the same LDS / shared limit and the same default configs at every head dim and shape), for
CI time:
- sm_89 as sm_86: 101376 B per block on both; Triton lowers capability 8.9 like 8.6 for fp16 / bf16 (8.9
  adds fp8 MMA, which these kernels do not use);
- gfx90a as gfx942: 65536 B of LDS per workgroup on both; Triton's AMD backend allocates the same LDS for
  CDNA2 and CDNA3 MFMA layouts.
Both measured: equal LDS / shared bytes on every variant, kernel and head dim (32 to 256) at the defaults.
gfx90a and gfx942 are the gate's archs besides: `vgprscope check` compiles them at head dim 128 with the
launch limit in each entry's status. gfx1100-wave64 is not a Triton target (calculator only).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from vgprscope.compile.cache import CompileCache
from vgprscope.compile.engine import Engine
from vgprscope.compile.results import launch_limit_reason
from vgprscope.compile.task import target_of
from vgprscope.core.archs import ARCHS, AmdArch
from vgprscope.flashattn.config import DEFAULT_SHAPE, ConfigRequest
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import DefaultsRule, load_variants, resolve_config

HEAD_DIMS = range(16, 257)  # every head dim the bundled variants accept (kernels/_launch.HEAD_DIM_RANGE)
# the shapes whose defaults differ: prefill (the reference problem) and decode (one query row, long K/V)
SHAPES = {"prefill": DEFAULT_SHAPE, "decode": (1, 32, 1, 8192)}
SAME_AS = {"sm_89": "sm_86", "gfx90a": "gfx942"}  # compiled as the arch it equals (module docstring)
ARCH_NAMES = [n for n, a in ARCHS.items() if getattr(a, "triton_target", True) and n not in SAME_AS]


def _pow2(d: int) -> int:
    return max(16, 1 << (d - 1).bit_length())


def default_configs(shapes: list[tuple[int, ...]]):
    """(variant, arch, config) for every distinct default config at ``shapes``, at the largest padded head
    dim it is the default for; a config that differs from an earlier one only in its shape is left out."""
    out: dict = {}
    for shape in shapes:
        for v in load_variants().values():
            for name in ARCH_NAMES:
                arch = ARCHS[name]
                for d in HEAD_DIMS:
                    cfg = resolve_config(v, arch, ConfigRequest(head_dim=d, shape=shape))
                    key = (v.name, name, replace(cfg, head_dim=0, shape=DEFAULT_SHAPE))
                    first_shape, top = out.get(key, (shape, 0))
                    out[key] = (first_shape, max(top, _pow2(d)))
    variants = load_variants()
    return [(variants[v], ARCHS[a], replace(cfg, head_dim=d, shape=first))
            for (v, a, cfg), (first, d) in out.items()]


def _limit(arch) -> int:
    return arch.lds_per_workgroup if isinstance(arch, AmdArch) else arch.max_shared_per_block


def test_skipped_archs_equal_the_compiled_ones():
    for skipped, same in SAME_AS.items():
        a, b = ARCHS[skipped], ARCHS[same]
        assert type(a) is type(b) and a.vendor is b.vendor
        assert _limit(a) == _limit(b)
        for v in load_variants().values():
            for d in HEAD_DIMS:
                for shape in SHAPES.values():
                    req = ConfigRequest(head_dim=d, shape=shape)
                    assert resolve_config(v, a, req) == resolve_config(v, b, req), (v.name, d, shape)


@pytest.mark.exhaustive  # 315 compiles (7 minutes on 2 cores): `python -m pytest -m exhaustive`
def test_every_default_config_fits_every_arch():
    engine = Engine(cache=CompileCache())
    records = engine.compile(variant_tasks([(v, cfg, a, "") for v, a, cfg in default_configs(list(SHAPES.values()))],
                                           engine))
    bad = []
    variants = load_variants()
    for r in records:
        arch = ARCHS[r.arch]
        # a variant written for one arch (ws-regalloc: sm_90) says why on the others, in its row
        refusal = getattr(variants[r.variant].module(), "target_refusal", None)
        why = refusal(vars(target_of(arch))) if refusal else None
        if why is not None and r.usage is None and r.status == f"ValueError: {why}":
            continue
        if r.usage is None:
            bad.append(f"{r.variant}/{r.kernel} on {r.arch} at {r.config.short()}: {r.status}")
            continue
        reason = launch_limit_reason(arch, r.usage)
        used = r.usage.lds_bytes if isinstance(arch, AmdArch) else r.usage.shared_bytes
        limit = _limit(arch)
        if r.status != "ok" or reason or used > limit:
            bad.append(f"{r.variant}/{r.kernel} on {r.arch} at {r.config.short()}: {used} B > {limit} B "
                       f"({r.status})")
    assert not bad, "defaults that do not launch:\n" + "\n".join(bad)
    # every variant, kernel and arch was compiled
    seen = {(r.variant, r.kernel, r.arch) for r in records}
    expected = {(v.name, k, a) for v in load_variants().values() for k in v.kernels for a in ARCH_NAMES}
    assert expected <= seen


def test_defaults_for_rules_resolve_in_order():
    from vgprscope.core.archs import get_arch

    rule_a = DefaultsRule(values=(("num_stages", 1),), archs=("sm_86", "sm_89"), head_dims=(129, 256))
    rule_b = DefaultsRule(values=(("num_stages", 3),), archs=("nvidia",), head_dims=(200, 256))
    assert rule_a.applies(get_arch("sm_86"), 256) and not rule_a.applies(get_arch("sm_86"), 128)
    assert not rule_a.applies(get_arch("sm_80"), 256)
    assert rule_b.applies(get_arch("sm_80"), 256) and not rule_b.applies(get_arch("gfx942"), 256)
    v = next(iter(load_variants().values()))
    w = replace(v, defaults=(("block_m", 128), ("num_stages", {"amd": 1, "nvidia": 2})),
                defaults_for=(rule_a, rule_b))
    assert w.defaults_on(get_arch("sm_86"), 128)["num_stages"] == 2
    assert w.defaults_on(get_arch("sm_86"), 150)["num_stages"] == 1
    assert w.defaults_on(get_arch("sm_86"), 256)["num_stages"] == 3  # later entries win
    assert w.defaults_on(get_arch("gfx942"), 256)["num_stages"] == 1
    req = ConfigRequest(head_dim=150, num_stages=4)
    assert resolve_config(w, get_arch("sm_86"), req).num_stages == 4  # the user's value wins


@pytest.mark.parametrize("variant", sorted(load_variants()))
def test_defaults_for_names_known_archs(variant):
    v = load_variants()[variant]
    for rule in v.defaults_for:
        assert set(rule.archs) <= set(ARCHS) | {"amd", "nvidia"}


def test_a_defaults_for_rule_may_name_the_mask():
    """``causal``: a rule for causal (or non-causal) attention only; where the mask is not given (a caller that
    does not know it), such a rule does not apply. ws-regalloc takes its dynamic persistent scheduler so."""
    from vgprscope.core.archs import get_arch

    rule = DefaultsRule(values=(("num_stages", 4),), archs=("nvidia",), causal=True)
    sm90 = get_arch("sm_90")
    assert rule.applies(sm90, 128, True) and not rule.applies(sm90, 128, False) and not rule.applies(sm90, 128)
    v = next(iter(load_variants().values()))
    w = replace(v, defaults=(("block_m", 128), ("num_stages", 2)), defaults_for=(rule,))
    assert [w.defaults_on(sm90, 128, c)["num_stages"] for c in (False, True, None)] == [2, 4, 2]
    ws = load_variants()["ws-regalloc"]
    assert [dict(resolve_config(ws, sm90, ConfigRequest(causal=c)).extra).get("persistent") for c in (False, True)] \
        == [None, 2]


def test_a_defaults_for_rule_with_a_mask_that_is_no_boolean_is_refused(tmp_path):
    from pathlib import Path

    from vgprscope.core.errors import UsageError

    src = (Path(__file__).resolve().parents[2] / "kernels" / "baseline.py").read_text()
    bad = src.replace('"name": "baseline"', '"name": "mask-rule"', 1).replace(
        '"defaults_for": [', '"defaults_for": [{"causal": "yes", "set": {"num_stages": 1}}, ', 1)
    assert bad != src
    (tmp_path / "mask_rule.py").write_text(bad)
    with pytest.raises(UsageError, match=r"\['causal'\] must be true or false; got 'yes'"):
        load_variants(tmp_path)
