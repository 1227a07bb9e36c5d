"""An argument's facts say only what Triton's JIT specialises it on: a ``do_not_specialize`` parameter on
nothing, a ``do_not_specialize_on_alignment`` one not on its divisibility. Planned (a variant's example values) and
captured (a real launch) alike, so two launches that differ only in what the JIT ignores are one job, one compile
and one cache entry (ws-regalloc's ``swizzle`` 8 and 64 were two)."""

from __future__ import annotations

import textwrap

import pytest

from vgprscope.runtime import record
from vgprscope.runtime.plan import plan

VARIANT = '''
import triton
import triton.language as tl

VARIANT = {"name": "dns", "strategy": "-", "seed": "-", "trades": "-", "kernels": ["k"],
           "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=["m", "Y"])
def k(X, Y, n, m, s, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + i, tl.load(Y + i), mask=i < n + m + s)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    v = cfg["value"]
    return [{"name": "k", "fn": k, "args": {"X": "*fp32", "Y": "*fp32", "n": v, "m": v, "s": v},
             "constexprs": {"BLOCK": 64}}]
'''

# what Triton's binder specialises of each (3.6 to 3.9 alike): n nothing, m and Y not their divisibility
EXPECTED = {
    4096: [{"name": "X", "type": "*fp32", "aligned": True, "small": True}, {"name": "Y", "type": "*fp32", "small": True},
           {"name": "n", "type": "i32"}, {"name": "m", "type": "i32"}, {"name": "s", "type": "i32", "aligned": True}],
    1: [{"name": "X", "type": "*fp32", "aligned": True, "small": True}, {"name": "Y", "type": "*fp32", "small": True},
        {"name": "n", "type": "i32"}, {"name": "m", "type": "i32", "one": True},
        {"name": "s", "type": "i32", "one": True}],
}


def _planned(tmp_path, value: int) -> list[dict]:
    kd = tmp_path / "kd"
    kd.mkdir(exist_ok=True)
    (kd / "dns.py").write_text(textwrap.dedent(VARIANT))
    answer = plan({"op": "plan", "directory": str(kd), "package": f"vgprscope_test_dns_{tmp_path.name}",
                   "file_name": "dns.py", "config": {"value": value}, "options": {}, "compute_units": 304,
                   "target": {"backend": "hip", "arch": "gfx942", "warp_size": 64}})
    assert "error" not in answer, answer
    [job] = answer["jobs"]
    return job["job"]["args"][:-1]  # BLOCK, a constexpr, aside


@pytest.mark.parametrize("value", [4096, 1])
def test_planned_facts_leave_out_what_the_jit_does_not_specialise(tmp_path, value):
    assert _planned(tmp_path, value) == EXPECTED[value]


@pytest.mark.parametrize("value", [4096, 1])
def test_a_captured_launch_has_the_planned_launchs_facts(tmp_path, value, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # as a capture session sets it (Triton 3.9 warns without)
    namespace: dict = {}
    path = tmp_path / "dns_kernel.py"
    path.write_text(textwrap.dedent(VARIANT))
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 (the test's own kernel)
    x, y = torch.empty(64), torch.empty(64)
    facts = record.launch_facts(namespace["k"], (x, y, value, value, value), {"BLOCK": 64, "grid": (1,)})
    # a CPU tensor is 16-byte aligned and within 2 GiB, as the plan's example pointer stands for
    assert facts["args"][:-1] == EXPECTED[value] == _planned(tmp_path, value)
