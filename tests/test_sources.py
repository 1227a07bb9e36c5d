"""Kernel sources as a layer: specs from the bundled variants keep their keys; the generic config and the
kernel identity survive a round trip through JSON (records, baselines, capture files)."""

from __future__ import annotations

import json

from vgprscope.archs import get_arch
from vgprscope.compile.engine import Task
from vgprscope.records import ArgSpec, AutotunePick, KernelConfig, KernelIdentity, LaunchConfig, Record, config_from_dict
from vgprscope.sources.variants import variant_spec
from vgprscope.variants import ConfigRequest, get_variant, resolve_config


def test_variant_spec_keeps_the_bundled_keys():
    v = get_variant("split-k")
    cfg = resolve_config(v, get_arch("gfx942"), ConfigRequest())
    spec = variant_spec(v, cfg)
    # the cache and the baseline key a bundled variant by name, source hash and KernelConfig.key(), as before
    assert (spec.label, spec.key, spec.source_hash, spec.kernels) == (v.name, cfg.key(), v.source_hash, v.kernels)
    assert spec.identity.file == str(v.file) and spec.kind == "variant"
    # the older Task(variant, arch, config) form builds the same spec
    old = Task(v, get_arch("gfx942"), cfg)
    assert old.spec == spec and old.variant is v and old.config == cfg


def launch() -> LaunchConfig:
    return LaunchConfig(args=(ArgSpec("X", "*fp16", "DS", "D"), ArgSpec("n", "i32", "", ""),
                              ArgSpec("BLOCK", "constexpr")),
                        constexprs=(("BLOCK", 128), ("DT", {"dtype": "fp16"})),
                        options=(("num_stages", 2), ("num_warps", 8)),
                        autotune=AutotunePick(1, 4, 6, ("1024", "torch.float16")))


def test_launch_config_round_trip_and_key():
    c = launch()
    d = json.loads(json.dumps(c.as_dict()))
    assert config_from_dict(d) == c and config_from_dict(d).key() == c.key()
    assert (c.num_warps, c.num_stages, c.waves_per_eu) == (8, 2, None)
    assert c.short() == "fp16 BLOCK=128 w8 s2 cfg 2/4"
    # another autotune pick, or another specialisation of one argument, is another key
    other = LaunchConfig(c.args, c.constexprs, c.options, AutotunePick(2, 4, 6, c.autotune.key))
    respec = LaunchConfig((ArgSpec("X", "*fp16", "S", ""), *c.args[1:]), c.constexprs, c.options, c.autotune)
    assert len({c.key(), other.key(), respec.key()}) == 3
    # a bundled variant's config still reads back as KernelConfig, with its key unchanged
    k = KernelConfig(block_m=64, block_n=32, head_dim=64)
    assert config_from_dict(json.loads(json.dumps(k.as_dict()))) == k


def test_record_round_trip_with_identity():
    ident = KernelIdentity("pkg.ops", "kern", "/x/pkg/ops.py", "abcd")
    rec = Record(variant="pkg.ops", kernel="kern", arch="sm_90", config=launch(), status="ok", identity=ident,
                 source="capture")
    back = Record.from_dict(json.loads(json.dumps(rec.as_dict())))
    assert back == rec and back.key == rec.key == f"pkg.ops/kern/sm_90/{launch().key()}"
