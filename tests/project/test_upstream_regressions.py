"""reports/upstream-regressions.md: `vgprscope diff` on the upstream kernels of three
reports of a Triton upgrade exits 1 for Primus-Turbo's grouped GEMM (AMD-AGI/Primus-Turbo#471: spills grow)
and aiter's decode attention (ROCm/aiter#5137: LDS drops the occupancy), and 0 for vLLM's fused MoE
(vllm-project/vllm#43153: registers fell, spills shrank, SGPRs grew within their level) and for the tile of
Primus-Turbo's fix. The CPU tests read the committed captures and per-release records (no
toolchain needed); the `slow` ones run the real diffs where the releases are installed."""

from __future__ import annotations

import json

import pytest
from capture_helpers import ROOT, cli

from tools.reports.upstream_regressions import (
    CASES,
    DIRECTORY,
    Case,
    capture_path,
    exit_code,
    judge,
    load_records,
    records_path,
)

DIR = ROOT / "reports" / DIRECTORY
BY_NAME = {c.name: c for c in CASES}
IDS = [c.name for c in CASES]


def compared(gate) -> int:
    return sum(1 for d in gate.entries if d.baseline is not None and d.current is not None
               and d.baseline.status == "ok" and d.current.status == "ok")


def installed_releases() -> set[str]:
    from vgprscope.compile import toolchains

    return {tc.version for tc, _ in toolchains.list_installed()}


def counts(rec) -> dict:
    u = rec.usage
    return {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "vgpr_spill": u.vgpr_spill, "scratch": u.scratch_bytes,
            "lds": u.lds_bytes, "occupancy": rec.occupancy.value}


def by_launch(records) -> dict:
    return {(r.kernel, r.config.key()): counts(r) for r in records}


# ---- the committed inputs: the upstream kernels, as their own code launches them ---------------------------

@pytest.mark.parametrize("name, module, kernels", [
    ("primus-turbo-grouped-gemm", "primus_turbo.triton.grouped_gemm.grouped_gemm_kernel",
     {"_grouped_variable_k_gemm_kernel"}),
    ("aiter-pa-decode", "aiter.ops.triton._triton_kernels.attention.pa_decode", {"_paged_attn_decode_v1_w_dot_kernel"}),
    ("aiter-unified-decode", "aiter.ops.triton._triton_kernels.attention.unified_attention",
     {"kernel_unified_attention_2d"}),
    ("vllm-fused-moe", "vllm.model_executor.layers.fused_moe.fused_moe", {"fused_moe_kernel_gptq_awq"}),
])
def test_each_capture_holds_the_upstream_kernel_of_its_report(name, module, kernels):
    """The capture records the upstream module's own kernel (its source snapshot too, so the diff runs where
    the upstream project is not installed)."""
    data = json.loads(capture_path(DIR, BY_NAME[name]).read_text())
    assert {k["qualname"] for k in data["kernels"]} == kernels
    assert {k["module"] for k in data["kernels"]} == {module}
    assert all(k["snapshot"]["functions"] for k in data["kernels"])


def test_the_primus_captures_hold_the_tiles_before_and_after_the_fix():
    """#471 changed the gfx942 variable-K tile from 256x256x64 to 256x256x32 (8 warps, 2 stages)."""
    for name, block_k in (("primus-turbo-grouped-gemm", 64), ("primus-turbo-grouped-gemm-fix", 32)):
        (launch,) = json.loads(capture_path(DIR, BY_NAME[name]).read_text())["launches"]
        constexprs = {a["name"]: a["value"] for a in launch["args"] if a["type"] == "constexpr"}
        assert (constexprs["BLOCK_SIZE_M"], constexprs["BLOCK_SIZE_N"], constexprs["BLOCK_SIZE_K"]) == (256, 256, block_k)
        assert (launch["options"]["num_warps"], launch["options"]["num_stages"]) == (8, 2)


# ---- the gate's verdict on the committed per-release records (the default rules, no toolchain) -----------

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_gate_gives_each_case_the_exit_code_of_its_report(case: Case):
    gate = judge(case, DIR)
    assert compared(gate) == len(gate.entries) > 0
    assert exit_code(gate.passed, compared(gate)) == case.expected_exit


def test_primus_spills_grow_from_4_to_64_values_at_256_vgprs():
    """The numbers of #471's regression as compiled here: 256 VGPRs on both releases, the spilled values and
    the scratch of a lane grow 16-fold; the gate fails on the spills alone."""
    case = BY_NAME["primus-turbo-grouped-gemm"]
    (before,), (after,) = (load_records(records_path(DIR, case, v)) for v in (case.before, case.after))
    assert (counts(before)["vgpr_total"], counts(after)["vgpr_total"]) == (256, 256)
    assert (before.usage.vgpr_spill, after.usage.vgpr_spill) == (4, 64)
    assert (before.usage.scratch_bytes, after.usage.scratch_bytes) == (20, 260)
    (failing,) = judge(case, DIR).failures
    assert {m.metric for m in failing.metrics if m.fails} >= {"vgpr_spill", "scratch_bytes"}


def test_the_primus_fix_grows_registers_within_its_occupancy_level_and_passes():
    """The fix's tile: 244 -> 248 VGPRs, nothing spilled, the same occupancy: `changed`, not `worse`."""
    case = BY_NAME["primus-turbo-grouped-gemm-fix"]
    (before,), (after,) = (load_records(records_path(DIR, case, v)) for v in (case.before, case.after))
    assert (before.usage.vgpr_total, after.usage.vgpr_total) == (244, 248)
    assert before.usage.spills == after.usage.spills == 0
    assert before.occupancy.value == after.occupancy.value
    (entry,) = judge(case, DIR).entries
    assert entry.change.name == "CHANGED"


def test_vllm_registers_fall_and_spills_shrink_while_sgprs_grow_at_the_same_occupancy():
    """vLLM's launches from Triton 3.4.0 to 3.6.0: no VGPR count, spill or scratch grows, the occupancy holds,
    spills vanish from some launches; the SGPRs of some grow (+4, +5): within their level, so they pass."""
    case = BY_NAME["vllm-fused-moe"]
    before = by_launch(load_records(records_path(DIR, case, case.before)))
    after = by_launch(load_records(records_path(DIR, case, case.after)))
    assert before.keys() == after.keys() and len(before) >= 2
    for launch, b in before.items():
        a = after[launch]
        assert a["vgpr_total"] <= b["vgpr_total"] and a["vgpr_spill"] <= b["vgpr_spill"], launch
        assert a["scratch"] <= b["scratch"] and a["occupancy"] == b["occupancy"], launch
    assert any(b["vgpr_spill"] > 0 and after[k]["vgpr_spill"] == 0 for k, b in before.items())
    assert any(after[k]["vgpr_total"] < b["vgpr_total"] for k, b in before.items())
    grown = [after[k]["sgpr"] - b["sgpr"] for k, b in before.items() if after[k]["sgpr"] > b["sgpr"]]
    assert grown
    assert judge(case, DIR).passed


def test_aiter_occupancy_drops_through_lds_while_vgprs_fall():
    """aiter's decode attention at 3.8.0: fewer VGPRs, but Triton's LDS more than doubles and the occupancy
    falls a level; the gate fails it on the LDS and the occupancy, not on the registers."""
    case = BY_NAME["aiter-unified-decode"]
    (before,), (after,) = (load_records(records_path(DIR, case, v)) for v in (case.before, case.after))
    assert after.usage.vgpr_total < before.usage.vgpr_total
    assert after.usage.lds_bytes > 2 * before.usage.lds_bytes
    assert (before.occupancy.value, after.occupancy.value) == (2, 1)
    assert "lds" in after.occupancy.limiters
    (failing,) = judge(case, DIR).failures
    assert {m.metric for m in failing.metrics if m.fails} == {"lds_bytes", "occupancy"}


@pytest.mark.parametrize("name", ["vllm-fused-moe", "primus-turbo-grouped-gemm-fix"])
def test_strict_rules_fail_the_register_growth_the_default_rules_pass(name, tmp_path):
    """`strict = true` (tolerance 0 on every count) fails what only grew within its occupancy level: the
    SGPRs of vLLM's launches, the 4 VGPRs of Primus-Turbo's fix."""
    (tmp_path / "pyproject.toml").write_text("[tool.vgprscope]\nstrict = true\n")
    gate = judge(BY_NAME[name], DIR, config=tmp_path / "pyproject.toml")
    assert not gate.passed
    assert {m.metric for d in gate.failures for m in d.metrics if m.fails} <= {"sgpr", "vgpr_total", "arch_vgpr"}


# ---- the installed Triton compiles the committed captures here (no toolchain) -----------------------------

@pytest.mark.parametrize("name", ["aiter-pa-decode", "aiter-unified-decode"])
def test_the_installed_triton_compiles_a_committed_capture_to_its_committed_records(name):
    """The capture needs neither the upstream project nor a GPU: it compiles from its snapshot, and its counts
    are the ones the report committed for the installed release."""
    from vgprscope import analyze
    from vgprscope.compile.toolchains import triton_version

    case = BY_NAME[name]
    committed = records_path(DIR, case, triton_version())
    fresh = analyze(capture=capture_path(DIR, case), arch=[case.arch], jobs=1).records
    assert all(r.ok for r in fresh)
    assert by_launch(fresh) == by_launch(load_records(committed))


# ---- the real diffs, where the releases are installed ------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vgprscope_diff_exits_as_the_report_says_under_the_real_releases(case: Case):
    """The command of each case under the real releases: its exit code, and every metric of both sides is
    the committed records' (what the CPU tests above judge)."""
    missing = sorted({case.before, case.after} - installed_releases())
    if missing:
        pytest.skip(f"Triton {', '.join(missing)} not installed (`vgprscope diff --triton {case.before} "
                    f"--triton {case.after} ...` installs it)")
    done = cli("diff", "--triton", case.before, "--triton", case.after, "--capture", str(capture_path(DIR, case)),
               "--arch", case.arch, "--format", "json", "--jobs", "1")
    assert done.returncode == case.expected_exit, done.stderr
    got = {r["key"]: sorted((m["metric"], m["baseline"], m["current"]) for m in r["metrics"])
           for r in json.loads(done.stdout)["rows"]}
    committed = {d.key: sorted((m.metric, m.baseline, m.current) for m in d.metrics) for d in judge(case, DIR).entries}
    assert got == committed
