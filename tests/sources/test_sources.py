"""Kernel sources as a layer: every source yields the same pure-data CompileJob. A bundled variant and the
same kernel captured from a launch with the same arguments give equal jobs and share one cache entry; the
generic config and the kernel identity survive a round trip through JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from capture_helpers import cli

from vgprscope.captures.model import load_capture
from vgprscope.compile.cache import CompileCache
from vgprscope.compile.engine import Engine
from vgprscope.core.archs import get_arch
from vgprscope.core.job import Arg, CompileJob, FunctionSource
from vgprscope.core.records import ArgSpec, AutotunePick, KernelIdentity, LaunchConfig, Record, config_from_dict
from vgprscope.flashattn.config import AttentionConfig, ConfigRequest
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import get_variant, resolve_config
from vgprscope.sources.capture import capture_tasks

SHAPE = (1, 2, 64, 64)
CONFIG = dict(block_m=64, block_n=32, num_warps=4, num_stages=1)

LAUNCH = f"""
import torch, vgprscope
q, k, v = (torch.randn(*{SHAPE[:3]}, 16, dtype=torch.float16) for _ in range(3))
o = vgprscope.attention(q, k, v, variant="baseline", **{CONFIG!r})
assert o.shape == q.shape
print("launched")
"""


def test_a_variant_job_is_pure_data():
    v = get_variant("baseline")
    a = get_arch("gfx942")
    (task,) = variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "defaults")])
    assert (task.row.slot, task.row.points) == ("defaults", ("defaults",))  # one slot given alone, as bench gives it
    job = task.job
    assert job.source == FunctionSource(file=str(v.file), qualname="attn_fwd")
    assert (job.target.backend, job.target.arch, job.target.warp_size) == ("hip", "gfx942", 64)
    args = {x.name: x for x in job.args}
    assert args["Q"] == Arg("Q", "*fp16", aligned=True, small=True)
    assert args["BLOCK_M"].type == "constexpr" and args["BLOCK_M"].value == 128
    assert args["kv_group"] == Arg("kv_group", "i32", one=True)  # multi-head attention: one K/V head per head
    assert dict(job.options) == {"num_warps": 4, "num_stages": 1}
    # the job is JSON for a worker, and back, unchanged (key included)
    again = CompileJob.from_dict(json.loads(json.dumps(job.as_dict())))
    assert again == job and again.key() == job.key()
    assert task.row.slot == "defaults" and task.row.kernel == "attn_fwd"


def test_varying_a_job_is_one_method():
    v = get_variant("baseline")
    a = get_arch("sm_90")
    (task,) = variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")])
    capped = task.vary(maxnreg=128)
    assert capped.job.option("maxnreg") == 128 and capped.config.maxnreg == 128
    assert capped.job.key() != task.job.key()
    assert capped.vary(maxnreg=None).job == task.job


@pytest.fixture(scope="module")
def captured_attention(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("launch")
    (work / "launch.py").write_text(LAUNCH)
    out = work / "cap.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, str(work / "launch.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0 and "launched" in done.stdout, done.stderr
    return out


def test_a_bundled_variant_and_the_same_launch_captured_are_one_job(captured_attention, tmp_path):
    a = get_arch("gfx942")
    v = get_variant("baseline")
    cfg = resolve_config(v, a, ConfigRequest(head_dim=16, shape=SHAPE, **CONFIG))
    engine = Engine(1, CompileCache(tmp_path / "cache"))
    (bundled,) = variant_tasks([(v, cfg, a, "")], engine)
    (launched,) = capture_tasks(load_capture(captured_attention), [a])
    assert launched.job == bundled.job and launched.job.key() == bundled.job.key()
    first, second = engine.compile([bundled]), engine.compile([launched])
    assert not first[0].cached and second[0].cached  # one cache entry, shared
    assert first[0].usage == second[0].usage


def launch() -> LaunchConfig:
    return LaunchConfig(args=(ArgSpec("X", "*fp16", (("hip", "DS"), ("cuda", "D"))),
                              ArgSpec("n", "i32", (("hip", ""), ("cuda", ""))), ArgSpec("BLOCK", "constexpr")),
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
    respec = LaunchConfig((ArgSpec("X", "*fp16", (("hip", "S"), ("cuda", ""))), *c.args[1:]), c.constexprs, c.options, c.autotune)
    assert len({c.key(), other.key(), respec.key()}) == 3
    assert c.with_options(maxnreg=128).option("maxnreg") == 128
    # a bundled variant's config still reads back as AttentionConfig, with its key unchanged
    k = AttentionConfig(block_m=64, block_n=32, head_dim=64)
    assert config_from_dict(json.loads(json.dumps(k.as_dict()))) == k


def test_record_round_trip_with_identity():
    ident = KernelIdentity("pkg.ops", "kern", "/x/pkg/ops.py", "abcd")
    rec = Record(variant="pkg.ops", kernel="kern", arch="sm_90", config=launch(), status="ok", identity=ident,
                 source="capture", slot="autotune[1024] cfg 2")
    back = Record.from_dict(json.loads(json.dumps(rec.as_dict())))
    assert back == rec and back.key == rec.key == f"pkg.ops/kern/sm_90/{launch().key()}"
