"""`vgprscope baseline save` and `vgprscope check` end to end, on fresh compiles: the gate passes an
unchanged set, fails a kernel that keeps one more tile live, passes an improvement, reports new entries,
fails on missing ones (a kernel no longer launched, a renamed kernel, a variant dropped from the set)
unless accepted, compares a changed default config with the old one, and refuses (exit 2) what it cannot
compare (an empty or malformed baseline or set, a malformed pyproject.toml).

Compiles stay small: a self-contained toy kernel (written below into temporary kernel directories, so
that the bundled kernels can change without breaking these tests) at 64x32 d64 on gfx942 and sm_80, and
the bundled ``baseline`` variant at the small config the other CLI tests compile too (cache hits).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

_register()

TOY = '''"""toy: a minimal FlashAttention loop for the gate's tests."""

import triton
import triton.language as tl

EXTRA_LIVE = {extra}  # True: one more [BLOCK_M, BLOCK_N] fp32 tile stays live across the K/V loop

VARIANT = {{
    "name": "{name}", "strategy": "test kernel", "seed": "-", "trades": "-", "kernels": ["toy_fwd"],
    "defaults": {{"block_m": {block_m}, "block_n": 32, "num_warps": 4, "num_stages": 1}},
}}


@triton.jit
def toy_fwd(Q, K, V, O, stride_m, seqlen_k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr,
            EXTRA: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * stride_m + offs_d[None, :])
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    top = tl.full([BLOCK_M, BLOCK_N], float("-inf"), dtype=tl.float32)
    for start in range(0, seqlen_k, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        k = tl.load(K + offs_n[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k)
        if EXTRA:
            top = tl.maximum(top, qk)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + offs_n[:, None] * stride_m + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    if EXTRA:
        acc += tl.sum(top, 1)[:, None]
    tl.store(O + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(O.dtype.element_ty))


def check_config(cfg):
    return None


def kernel_specs(cfg):
    args = {{"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "stride_m": cfg["head_dim"], "seqlen_k": 4096}}
    constexprs = {{"BLOCK_M": cfg["block_m"], "BLOCK_N": cfg["block_n"], "D": cfg["head_dim"], "EXTRA": EXTRA_LIVE}}
    return [{{"name": "toy_fwd", "fn": toy_fwd, "args": args, "constexprs": constexprs}}]
'''

SMALL_BASELINE = '{block_m = 64, block_n = 32, head_dim = 64, num_warps = 4, num_stages = 1}'


@pytest.fixture(autouse=True)
def not_on_actions(monkeypatch):
    # CI may itself run under GitHub Actions: these tests decide when the gate sees it
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def kernel_dir(root: Path, name: str, *files: tuple[str, bool], block_m: int = 64) -> Path:
    d = root / name
    d.mkdir()
    for variant, extra in files:
        (d / f"{variant}.py").write_text(TOY.format(name=variant, extra=extra, block_m=block_m))
    return d


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """Kernel dirs (lean, fat = one more live tile, plus = lean and a second variant), a config, and a
    baseline saved from the lean kernel."""
    root = tmp_path_factory.mktemp("gate")
    dirs = {"lean": kernel_dir(root, "lean", ("toy", False)), "fat": kernel_dir(root, "fat", ("toy", True)),
            "plus": kernel_dir(root, "plus", ("toy", False), ("toy2", False))}
    config = root / "vgprscope.toml"
    config.write_text('archs = ["gfx942", "sm_80"]\nconfigs = [{head_dim = 64}]\nbaseline = "toy-baseline.json"\n')
    res = run("baseline", "save", "--config", config, "--kernel-dir", dirs["lean"])
    assert res.exit_code == 0, res.output
    return dirs, config, root / "toy-baseline.json", res


def check(toy, which: str, *args: str):
    dirs, config, _, _ = toy
    return run("check", "--config", config, "--kernel-dir", dirs[which], *args)


def rows(res) -> list[dict]:
    return json.loads(res.stdout)["rows"]


def test_save_writes_every_entry_with_every_field(toy):
    _, _, path, res = toy
    assert "wrote" in res.stderr and "2 entries, Triton" in res.stderr
    doc = json.loads(path.read_text())
    assert (doc["schema"], doc["schema_version"]) == ("vgprscope-baseline", 2)
    assert doc["triton_version"] == importlib.metadata.version("triton")
    assert doc["set"] == {"variants": ["all"], "archs": ["gfx942", "sm_80"], "configs": [{"head_dim": 64}]}
    (amd_key, amd), (nv_key, nv) = doc["entries"].items()
    # keyed by slot (the request), the config and its hash stored
    assert amd_key == "toy/toy_fwd/gfx942/head_dim=64" and nv_key == "toy/toy_fwd/sm_80/head_dim=64"
    assert amd["slot"] == "head_dim=64" and len(amd["config_key"]) == 16
    assert amd["config"]["block_m"] == 64 and amd["config"]["head_dim"] == 64 and amd["status"] == "ok"
    assert {"arch_vgpr", "agpr", "vgpr_total", "sgpr", "vgpr_spill", "sgpr_spill", "scratch_bytes", "lds_static",
            "lds_dynamic", "spill_stores", "spill_loads", "llvm_occupancy"} <= set(amd["usage"])
    assert {"regs", "stack_bytes", "spill_store_bytes", "spill_load_bytes", "shared_static", "shared_dynamic"} <= set(nv["usage"])
    assert amd["occupancy"]["unit"] == "waves/SIMD" and nv["occupancy"]["unit"] == "blocks/SM"
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []  # no temp file left


def test_unchanged_kernels_pass(toy):
    res = check(toy, "lean")
    assert res.exit_code == 0, res.output
    assert "vgprscope check passed: 0 worse, 0 better, 2 same, 0 new, 0 missing" in res.stdout
    table = [ln for ln in res.stdout.splitlines() if "toy_fwd" in ln]
    assert len(table) == 2 and all(ln.split()[0] == "same" for ln in table)


def test_a_check_reads_its_sources_once(toy, monkeypatch):
    """The gate resolves its run once (``library.gate.GateRun``): the rules' names, the sweep (the variants'
    own archs included), the part of the set and the kernels' files all ask the sources read there."""
    from vgprscope.library import registry

    reads = []
    real = registry.read
    monkeypatch.setattr(registry, "read", lambda *a, **k: reads.append(a) or real(*a, **k))
    res = check(toy, "lean", "--variant", "toy", "--format", "sarif")
    assert res.exit_code == 0, res.output
    assert len(reads) == 1


def test_one_more_live_tile_is_a_regression_naming_entry_and_metric(toy):
    # by default only what costs time fails: sm_80 crosses an occupancy step (4 -> 3 blocks/SM), gfx942's
    # VGPRs grow within theirs (changed, with the headroom left); --strict fails every growth
    default = check(toy, "fat", "--format", "json")
    assert default.exit_code == 1, default.output
    assert {r["arch"]: (r["result"], r["fails"]) for r in rows(default)} == {
        "sm_80": ("worse", True), "gfx942": ("changed", False)}
    res = check(toy, "fat", "--strict")
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    first = next(ln for ln in lines if "toy_fwd" in ln)
    assert first.split()[0] == "worse"  # regressions come first
    assert "vgpr_total" in res.stdout and "regs" in res.stdout and "FAILED: 2 of 2 entries" in res.stdout
    by_arch = {r["arch"]: r for r in rows(check(toy, "fat", "--strict", "--format", "json"))}
    worse = {arch: {m["metric"]: (m["baseline"], m["current"]) for m in r["metrics"] if m["fails"]}
             for arch, r in by_arch.items()}
    vgpr = worse["gfx942"]["vgpr_total"]
    regs = worse["sm_80"]["regs"]
    assert vgpr[1] > vgpr[0] and regs[1] > regs[0]
    assert all(r["change"] == "+" and r["fails"] for r in by_arch.values())


def test_a_tolerance_rule_lets_the_growth_pass(toy):
    # --strict: every growth fails unless a rule allows it (the default would pass gfx942's VGPRs anyway)
    grown = {m["metric"]: abs(m["delta"]) for r in rows(check(toy, "fat", "--strict", "--format", "json"))
             for m in r["metrics"] if m["fails"]}
    assert {"vgpr_total", "regs"} <= set(grown)

    def rules(tolerances: dict[str, int]) -> list[str]:
        return ["--strict"] + [a for metric, n in tolerances.items()
                               for a in ("--rule", f"toy:{metric}:{'-' if metric == 'occupancy' else '+'}{n}")]

    assert check(toy, "fat", *rules(grown)).exit_code == 0
    assert check(toy, "fat", *rules(grown | {"vgpr_total": grown["vgpr_total"] - 1})).exit_code == 1
    # one vendor-neutral rule covers AMD's vgpr_total and NVIDIA's regs
    others = {m: n for m, n in grown.items() if m not in ("vgpr_total", "regs")}
    most = max(grown["vgpr_total"], grown["regs"])
    assert check(toy, "fat", *rules(others), "--rule", f"registers:+{most}").exit_code == 0
    assert check(toy, "fat", *rules(others), "--rule", f"registers:+{most - 1}").exit_code == 1


def test_an_improvement_passes_with_minus_unless_fail_on_change(toy, tmp_path):
    dirs, config, _, _ = toy
    fat = tmp_path / "fat.json"
    assert run("baseline", "save", "--config", config, "--kernel-dir", dirs["fat"], "-b", fat).exit_code == 0
    res = run("check", "--config", config, "--kernel-dir", dirs["lean"], "-b", fat, "-f", "json")
    assert res.exit_code == 0, res.output
    assert {r["change"] for r in rows(res)} == {"-"} and not any(r["fails"] for r in rows(res))
    strict = run("check", "--config", config, "--kernel-dir", dirs["lean"], "-b", fat, "--fail-on-change")
    assert strict.exit_code == 1 and "(--fail-on-change)" in strict.stdout


def test_a_new_variant_is_reported_and_passes(toy):
    res = check(toy, "plus", "-f", "json")
    assert res.exit_code == 0, res.output
    new = [(r["variant"], r["arch"]) for r in rows(res) if r["state"] == "new"]
    assert new == [("toy2", "gfx942"), ("toy2", "sm_80")]
    assert {r["change"] for r in rows(res) if r["state"] == "new"} == {"x"}
    table = check(toy, "plus")
    assert table.exit_code == 0 and "new: no baseline entry" in table.stdout and "2 new" in table.stdout


def test_missing_entries_fail_unless_accepted_or_out_of_scope(toy, tmp_path):
    """A kernel no longer launched (here a variant gone from the kernel directory) is a missing entry: it
    fails, unless accepted or outside the run's part of the set."""
    dirs, config, _, _ = toy
    plus = tmp_path / "plus.json"
    assert run("baseline", "save", "--config", config, "--kernel-dir", dirs["plus"], "-b", plus).exit_code == 0
    res = run("check", "--config", config, "--kernel-dir", dirs["lean"], "-b", plus)
    assert res.exit_code == 1, res.output
    assert "FAILED: 2 of 4 entries" in res.stdout and "2 missing" in res.stdout
    assert "missing: in the baseline, not produced by this run" in res.stdout
    missing = [r for r in rows(run("check", "--config", config, "--kernel-dir", dirs["lean"], "-b", plus, "-f", "json"))
               if r["state"] == "missing"]
    assert [(r["key"], r["fails"]) for r in missing] == [("toy2/toy_fwd/gfx942/head_dim=64", True),
                                                          ("toy2/toy_fwd/sm_80/head_dim=64", True)]
    # accepted: listed, not failing (the flag, or allow_missing in the configuration, by pattern)
    ok = run("check", "--config", config, "--kernel-dir", dirs["lean"], "-b", plus, "--allow-missing")
    assert ok.exit_code == 0 and "2 missing (2 accepted)" in ok.stdout
    patterned = tmp_path / "allow.toml"
    patterned.write_text(config.read_text() + 'allow_missing = ["toy2/*/sm_80/*"]\n')
    one = run("check", "--config", patterned, "--kernel-dir", dirs["lean"], "-b", plus, "-f", "json")
    assert one.exit_code == 1 and [r["arch"] for r in rows(one) if r["fails"]] == ["gfx942"]
    # --variant / --arch check a part of the set: the rest of the baseline is not judged
    part = run("check", "--config", config, "--kernel-dir", dirs["plus"], "-b", plus, "--variant", "toy", "-a", "sm_80")
    assert part.exit_code == 0 and "0 missing" in part.stdout and "1 same" in part.stdout


def test_a_variant_dropped_from_the_set_and_a_renamed_kernel_fail(toy, tmp_path):
    dirs, config, path, _ = toy
    plus = tmp_path / "plus.json"
    assert run("baseline", "save", "--config", config, "--kernel-dir", dirs["plus"], "-b", plus).exit_code == 0
    dropped = tmp_path / "dropped.toml"
    dropped.write_text(config.read_text() + 'variants = ["toy"]\n')  # toy2 no longer in the configured set
    res = run("check", "--config", dropped, "--kernel-dir", dirs["plus"], "-b", plus)
    assert res.exit_code == 1 and "2 same, 0 new, 2 missing" in res.stdout
    renamed = kernel_dir(tmp_path, "renamed", ("toy_v2", False))  # the same kernel under a new name
    res = run("check", "--config", config, "--kernel-dir", renamed, "-f", "json")
    assert res.exit_code == 1, res.output
    assert sorted((r["variant"], r["state"], r["fails"]) for r in rows(res)) == [
        ("toy", "missing", True), ("toy", "missing", True), ("toy_v2", "new", False), ("toy_v2", "new", False)]


def test_a_changed_default_config_is_compared_with_the_old_one(toy, tmp_path):
    """Entries are keyed by slot: a new default config is compared with the old one, not "new" beside a
    "missing" one."""
    dirs, config, _, _ = toy
    bigger = kernel_dir(tmp_path, "bigger", ("toy", False), block_m=128)  # the variant's default grew
    res = run("check", "--config", config, "--kernel-dir", bigger, "-f", "json")
    assert res.exit_code == 1, res.output
    by_arch = {r["arch"]: r for r in rows(res)}
    assert {r["state"] for r in by_arch.values()} == {"compared"}
    assert all(r["config_changed"] and r["baseline_config"]["block_m"] == 64 and r["config"]["block_m"] == 128
               for r in by_arch.values())
    assert by_arch["gfx942"]["change"] == "+" and any(m["metric"] == "vgpr_total" and m["fails"]
                                                      for m in by_arch["gfx942"]["metrics"])
    table = " ".join(run("check", "--config", config, "--kernel-dir", bigger).stdout.split())
    assert "0 new, 0 missing, 2 changed configs" in table and "config changed: 64x32 d64 fp16 w4 s1 -> 128x32" in table


def test_partial_save_replaces_only_its_entries(toy, tmp_path):
    dirs, config, _, _ = toy
    out = tmp_path / "b.json"
    assert run("baseline", "save", "--config", config, "--kernel-dir", dirs["lean"], "-b", out).exit_code == 0
    before = json.loads(out.read_text())["entries"]
    assert run("baseline", "save", "--config", config, "--kernel-dir", dirs["fat"], "-b", out, "-a", "sm_80").exit_code == 0
    after = json.loads(out.read_text())["entries"]
    assert list(after) == list(before)
    amd, nv = list(before)
    assert after[amd] == before[amd] and after[nv]["usage"]["regs"] > before[nv]["usage"]["regs"]


def test_bundled_baseline_with_an_entry_edited_down(tmp_path):
    config = tmp_path / "vgprscope.toml"
    config.write_text(f'variants = ["baseline"]\narchs = ["gfx942", "sm_80"]\nconfigs = [{SMALL_BASELINE}]\n')
    assert run("baseline", "save", "--config", config).exit_code == 0
    path = tmp_path / "vgprscope-baseline.json"
    doc = json.loads(path.read_text())
    key = next(k for k in doc["entries"] if "/gfx942/" in k)
    doc["entries"][key]["usage"]["vgpr_total"] -= 4
    path.write_text(json.dumps(doc))
    # 4 VGPRs within gfx942's occupancy step: changed by default; --strict (or strict = true) fails it
    changed = run("check", "--config", config)
    assert changed.exit_code == 0, changed.output
    row = next(ln for ln in changed.stdout.splitlines() if "gfx942" in ln and "baseline" in ln)
    assert row.split()[0] == "changed" and "of headroom before" in " ".join(changed.stdout.split())
    res = run("check", "--config", config, "--strict")
    assert res.exit_code == 1, res.output
    row = next(ln for ln in res.stdout.splitlines() if "gfx942" in ln and "baseline" in ln)
    assert row.split()[0] == "worse" and "vgpr_total" in res.stdout and "(+4 ✗, allowed +0)" in res.stdout
    strict = tmp_path / "strict.toml"
    strict.write_text(config.read_text() + "strict = true\n")
    assert run("check", "--config", strict).exit_code == 1
    assert run("check", "--config", config, "--strict", "--rule", "vgpr_total:+4").exit_code == 0
    assert run("check", "--config", config, "--strict", "--rule", "baseline:vgpr_total:+3").exit_code == 1


def _edit_json(text: str, edit) -> str:
    doc = json.loads(text)
    edit(doc)
    return json.dumps(doc)


def _copy_baseline(toy, tmp_path, edit) -> Path:
    _, _, path, _ = toy
    out = tmp_path / "edited.json"
    out.write_text(edit(path.read_text()))
    return out


@pytest.mark.parametrize("edit, reason", [
    (lambda t: t[: len(t) // 2], "is not valid JSON (truncated or corrupt)"),
    (lambda t: "\x00garbage", "is not valid JSON"),
    (lambda t: t.replace('"schema_version": 2', '"schema_version": 7'),
     "has schema version 7; this vgprscope reads version 2"),
    (lambda t: t.replace('"usage"', '"usagex"', 1), "is corrupt: entry 'toy/toy_fwd/gfx942/head_dim=64' lacks"),
    # each of these is refused with one line
    (lambda t: t.replace('"entries": {', '"entries": {"toy/toy_fwd/sm_80/head_dim=64": {}, ', 1),
     "is corrupt: key 'toy/toy_fwd/sm_80/head_dim=64' appears twice"),
    (lambda t: _edit_json(t, lambda d: d["entries"]["toy/toy_fwd/gfx942/head_dim=64"]["usage"].update(sgpr=True)),
     "has usage.sgpr true, not a non-negative integer"),
    (lambda t: _edit_json(t, lambda d: d["entries"]["toy/toy_fwd/gfx942/head_dim=64"].update(usage=None)),
     "is \"ok\" but has no usage"),
    (lambda t: _edit_json(t, lambda d: d.update(entries={})), "has no entries: it gates nothing"),
])
def test_a_corrupt_baseline_is_exit_2_with_one_line(toy, tmp_path, edit, reason):
    res = check(toy, "lean", "-b", _copy_baseline(toy, tmp_path, edit))
    assert res.exit_code == 2 and reason in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output and res.stdout == ""


def test_no_baseline_is_exit_2(toy, tmp_path):
    res = check(toy, "lean", "-b", tmp_path / "nope.json")
    assert res.exit_code == 2 and "create it with `vgprscope baseline save`" in res.stderr


def test_another_triton_version_is_exit_2_unless_allowed(toy, tmp_path):
    other = _copy_baseline(toy, tmp_path, lambda t: t.replace(f'"triton_version": "{importlib.metadata.version("triton")}"',
                                                              '"triton_version": "3.1.0"'))
    res = check(toy, "lean", "-b", other)
    assert res.exit_code == 2
    assert "the baseline was compiled with Triton 3.1.0, the installed Triton is" in res.stderr
    assert "--allow-version-change" in res.stderr
    allowed = check(toy, "lean", "-b", other, "--allow-version-change")
    assert allowed.exit_code == 0 and "Triton changed: baseline 3.1.0" in allowed.stdout


def test_not_comparable_under_actions_is_an_annotation_and_a_summary(toy, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    res = check(toy, "lean", "-b", tmp_path / "nope.json")
    assert res.exit_code == 2
    assert res.stdout.startswith("::error title=vgprscope check cannot compare::no baseline at ")
    assert summary.read_text().startswith("## vgprscope check could not compare\n\nno baseline at ")


@pytest.mark.parametrize("data, reason", [
    (b"tool = 3\n", "tool must be a table"),
    (b"[tool]\nvgprscope = 'x'\n", "tool.vgprscope must be a table"),
    (b"[tool.vgprscope]\nbaseline = '\xff'\n", "is not UTF-8 text (TOML must be)"),
    (b"[tool.vgprscope\n", "is not valid TOML"),
    (b"[tool.vgprscope]\nconfigs = [{head_dim = 'x'}]\n", "configs[0]: head_dim must be a non-negative integer"),
])
def test_a_malformed_pyproject_is_exit_2_with_one_line(tmp_path, monkeypatch, data, reason):
    """A malformed or non-UTF-8 pyproject.toml is one line and exit 2, not a traceback."""
    (tmp_path / "pyproject.toml").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    for args in (["check"], ["baseline", "save"]):
        res = run(*args)
        assert res.exit_code == 2 and reason in res.stderr, res.output
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output and res.stdout == ""


def test_an_arch_triton_cannot_target_is_exit_2(toy):
    res = check(toy, "lean", "--arch", "gfx1100-wave64")
    assert res.exit_code == 2 and "the installed Triton cannot target gfx1100-wave64" in res.stderr


@pytest.mark.parametrize("args, reason", [
    (["--rule", "vgpr_total"], "rule 'vgpr_total' is not allowed"),
    (["--rule", "nope:vgpr_total:+1"], "names unknown variant 'nope'; valid: toy"),
    (["--rule", "occupancy:+1"], "occupancy is higher-is-better"),
])
def test_bad_rules_are_exit_2(toy, args, reason):
    res = check(toy, "lean", *args)
    assert res.exit_code == 2 and reason in res.stderr


def test_markdown_summary_annotations_and_benchmark_json(toy, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(toy[0]["fat"].parent)  # the kernel files inside the working directory (the repository)
    res = check(toy, "fat", "--format", "md", "--strict")  # --strict: gfx942's growth within its step fails too
    assert res.exit_code == 1
    assert res.stdout.startswith("## vgprscope check FAILED: 2 of 2 entries")
    assert "| result | variant | kernel | arch | slot | config | VGPRs / regs | occupancy | details |" in res.stdout
    assert "| worse | toy | toy_fwd | gfx942 | head_dim=64 | 64x32 d64 fp16 w4 s1 |" in res.stdout
    errors = [ln for ln in res.stdout.splitlines() if ln.startswith("::error ")]
    assert len(errors) == 2 and "title=vgprscope%3A register regression in toy" in errors[0]
    assert "vgpr_total" in errors[0] or "vgpr_total" in errors[1]
    # at the kernel's def line, as SARIF locates it (``gate.sarif.kernel_locations``)
    line = next(i for i, text in enumerate(TOY.splitlines(), 1) if text.startswith("def toy_fwd("))
    assert all(f",file=fat/toy.py,line={line}::" in e for e in errors)
    sarif = json.loads(check(toy, "fat", "--format", "sarif", "--strict").stdout)
    where = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert (where["artifactLocation"]["uri"], where["region"]["startLine"]) == ("fat/toy.py", line)
    text = summary.read_text()
    assert text.startswith("earlier step\n## vgprscope check FAILED") and "| worse | toy |" in text
    default = check(toy, "fat", "--format", "md")  # by default the growth within the step is a change
    assert "| changed | toy | toy_fwd | gfx942 | head_dim=64 | 64x32 d64 fp16 w4 s1 |" in default.stdout
    assert len([ln for ln in default.stdout.splitlines() if ln.startswith("::error ")]) == 1

    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    bench = check(toy, "fat", "--format", "benchmark-json")
    assert bench.exit_code == 1
    items = json.loads(bench.stdout)  # data only: no workflow commands mixed in
    assert "::error" not in bench.output and "vgprscope check FAILED" in bench.stderr
    names = {i["name"]: i for i in items}
    assert len(names) == len(items)  # one series per entry and metric, names unique
    vgpr = names["toy/toy_fwd gfx942 [head_dim=64] vgpr_total"]  # the slot: a chart goes on when the config changes
    assert vgpr["unit"] == "VGPRs" and isinstance(vgpr["value"], int) and "occupancy" in vgpr["extra"]
    assert "config 64x32 d64 fp16 w4 s1" in vgpr["extra"]
    assert names["toy/toy_fwd sm_80 [head_dim=64] regs"]["unit"] == "registers/thread"
    assert all(set(i) == {"name", "unit", "value", "extra"} for i in items)
    assert not any(n.endswith(" occupancy") for n in names)
