"""The compiler's own words: ptxas's warnings and coded advisories and LLVM's errors, parsed from committed
compiler outputs and from fresh compiles into exact Diagnostic records; the reason a failed pass gives; the
ptxas and LLVM versions every row carries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from vgprscope.core.parse.diagnostics import (
    compile_diagnostics,
    failure_reason,
    llvm_diagnostics,
    ptxas_diagnostics,
    short_llvm,
    short_ptxas,
    slug,
)
from vgprscope.core.records import Diagnostic, Record

FIX = Path(__file__).parents[1] / "fixtures"
DIAG = FIX / "diagnostics"

C7512 = Diagnostic("ptxas", "C7512", "info", "Potential Performance Loss: wgmma.mma_async instructions are serialized "
                   "due to insufficient register resources for the function 'attn_fwd'")
WS_REASON = "LLVM ERROR: unsupported load type for producer commit (in pass NVGPUWarpSpecialization)"


def test_ptxas_wgmma_serialised_advisory_is_a_coded_info_record():
    """baseline at 64x32 d64 w4 s1 maxnreg=64 on sm_90 (ptxas 13.4): the C7512 advisory, and nothing of the
    -v figures around it."""
    assert ptxas_diagnostics((DIAG / "baseline-sm_90-maxnreg64.ptxas.log").read_text()) == (C7512,)


def test_ptxas_advisory_with_a_ptx_line_says_where():
    """baseline at its defaults with maxnreg=128 on sm_90: C7511 names the PTX line it is about."""
    got = ptxas_diagnostics((FIX / "explain" / "baseline-sm_90-maxnreg128.ptxas.txt").read_text())
    assert got == (Diagnostic("ptxas", "C7511", "info", "Potential Performance Loss: wgmma.mma_async instructions are "
                              "serialized due to insufficient register resources for the wgmma pipeline in the "
                              "function 'attn_fwd' in line 2074", "PTX line 2074"),)


def test_ptxas_warning_without_a_code_is_coded_by_its_first_words():
    """The Gluon warp-specialised kernel on sm_100: ptxas ignores its maxnreg (a warning with no C code)."""
    got = ptxas_diagnostics((DIAG / "gluon-ws-sm_100.ptxas.log").read_text())
    assert got == (Diagnostic("ptxas", "too-many-maxnreg-specified", "warning",
                              "Too many maxnreg specified for entry warp_specialized, will be ignored"),)
    # the code does not depend on the kernel's name
    assert slug("Too many maxnreg specified for entry other_kernel, will be ignored") == got[0].code


def test_plain_ptxas_logs_have_no_diagnostics():
    """The -v figures alone (sm_80 with spills, sm_90 without) are no diagnostics."""
    for name in ("sm80_spills.ptxas.log", "sm90_plain.ptxas.log"):
        assert ptxas_diagnostics((FIX / name).read_text()) == ()


def test_failed_ptxas_error_line_gives_its_code():
    """baseline at its defaults with maxnreg=64 on sm_90: ptxas gives up (C7602); the worker's error line joins
    its stderr, the closing "aborted" line says nothing more; the PTX line its message names ("at line 1596")
    is its ``where``."""
    error = ("PTXASError: ptxas-blackwell fatal : (C7602) Insufficient registers (64) to compile instruction at line "
             "1596 in function attn_fwd. Try to compile with register target of 94 or higher. ptxas-blackwell fatal : "
             "Ptx assembly aborted due to errors")
    assert compile_diagnostics({"error": error}) == (
        Diagnostic("ptxas", "C7602", "error", "Insufficient registers (64) to compile instruction at line 1596 in "
                   "function attn_fwd. Try to compile with register target of 94 or higher.", "PTX line 1596"),)


def test_llvm_error_of_a_failed_pass_is_the_reason():
    """A warp-specialised loop of plain loads on sm_90: the exception says "PassManager::run failed"; LLVM said
    why, and MLIR which pass; the pipeline's headline is no diagnostic of its own."""
    log = (DIAG / "ws-loop-sm_90.compile.log").read_text()
    assert llvm_diagnostics(log) == (Diagnostic("llvm", "unsupported-load-type-for", "error",
                                                "unsupported load type for producer commit"),)
    assert failure_reason(log) == WS_REASON
    assert failure_reason("") is None


def test_llvm_warning_with_a_location():
    """LLVM's ``FILE:LINE:COL: warning:`` form: the file's name and line are where; <unknown> is nowhere."""
    log = ("/tmp/k.py:12:5: warning: loop not unrolled\n"
           "<unknown>:0:0: warning: stack frame size (70000) exceeds limit (65536) in function 'k'\n")
    assert llvm_diagnostics(log) == (
        Diagnostic("llvm", "loop-not-unrolled", "warning", "loop not unrolled", "k.py:12"),
        Diagnostic("llvm", "stack-frame-size-exceeds", "warning",
                   "stack frame size (70000) exceeds limit (65536) in function 'k'"))


def test_amdgpu_warning_with_its_location_after_the_severity():
    """AMDGPU's LLVM writes ``warning: FILE:LINE:COL: message`` (the stack-size check of ``warn-stack-size``)."""
    assert llvm_diagnostics("warning: k.py:6:0: stack frame size (888) exceeds limit (512) in function 'big'") == (
        Diagnostic("llvm", "stack-frame-size-exceeds", "warning",
                   "stack frame size (888) exceeds limit (512) in function 'big'", "k.py:6"),)


def test_short_versions():
    assert short_ptxas("Cuda compilation tools, release 13.4, V13.4.59") == "13.4.59"
    assert short_llvm("24.0.0git (b010a18d2b648cab83c83967ff26b8fde11acdc6)") == "24.0.0git b010a18d2b64"


def test_record_round_trips_its_diagnostics():
    from vgprscope.core.records import LaunchConfig

    rec = Record("v", "k", "sm_90", LaunchConfig((), (), (("num_warps", 4),)), "ok", diagnostics=(C7512,),
                 llvm_version="24.0.0git (b010a18d2b648cab83c83967ff26b8fde11acdc6)")
    d = rec.as_dict()
    assert d["diagnostics"] == [C7512.as_dict()] and d["llvm_version"].startswith("24.0.0git")
    assert Record.from_dict(d) == rec


# ---- fresh compiles ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_sm90(tmp_path_factory):
    """baseline's 64x32 d64 w4 s1 on sm_90 with maxnreg 64: spills, and ptxas serialises the wgmma."""
    import vgprscope

    return vgprscope.analyze(variant="baseline", arch=["sm_90"], maxnreg=[64], block_m=[64], block_n=[32],
                             head_dim=[64], num_warps=[4], num_stages=[1], jobs=1)


def test_compile_carries_ptxas_advisory_and_versions(small_sm90):
    from vgprscope.runtime import protocol

    rec, = small_sm90.records
    assert rec.ok and rec.diagnostics == (C7512,)
    assert rec.llvm_version == protocol.llvm_version() and rec.llvm_version
    assert rec.ptxas_version.startswith("Cuda compilation tools, release ")
    frame = small_sm90.to_pandas()
    assert frame["diagnostics"].tolist() == ["C7512"]
    assert frame["llvm_version"].tolist() == [rec.llvm_version]
    assert json.loads(small_sm90.to_json())["rows"][0]["diagnostics"] == [C7512.as_dict()]


def test_failed_pass_row_says_the_llvm_error(tmp_path):
    """The row of a compile whose pass failed holds LLVM's reason, not the exception's "PassManager::run failed"."""
    torch = pytest.importorskip("torch")
    import vgprscope

    sys.path.insert(0, str(DIAG))
    try:
        from ws_loop import ws_matmul
    finally:
        sys.path.remove(str(DIAG))
    a = torch.empty(128, 256, dtype=torch.float16)
    b = torch.empty(256, 128, dtype=torch.float16)
    c = torch.empty(128, 128)
    res = vgprscope.analyze(ws_matmul, a, b, c, 256, BM=128, BN=128, BK=64, num_warps=4, arch=["sm_90"], jobs=1)
    rec, = res.records
    assert rec.status == WS_REASON
    assert rec.diagnostics == (Diagnostic("llvm", "unsupported-load-type-for", "error",
                                          "unsupported load type for producer commit"),)


@pytest.mark.parametrize("ask", [{"llvm_fn_attrs": "warn-stack-size=512"}, {"warn_stack_size": 512}])
def test_amd_compile_keeps_llvms_stack_warning(ask):
    """gfx942 at waves_per_eu=8 spills the dot chain to scratch; asked to warn above 512 bytes of stack
    (``llvm_fn_attrs``, or the CLI's ``--warn-stack-size``: ``warn_stack_size``), LLVM does, and the row says it
    with the scratch bytes it is about."""
    torch = pytest.importorskip("torch")
    import vgprscope

    sys.path.insert(0, str(DIAG))
    try:
        from stack_kernel import dot_chain
    finally:
        sys.path.remove(str(DIAG))
    x, y = torch.empty(2 * 64 * 64), torch.empty(64 * 64)
    res = vgprscope.analyze(dot_chain, x, y, N=64, num_warps=1, waves_per_eu=8, **ask, arch=["gfx942"], jobs=1)
    rec, = res.records
    assert rec.ok and rec.usage.scratch_bytes > 512
    line = (DIAG / "stack_kernel.py").read_text().splitlines().index("def dot_chain(X, Y, N: tl.constexpr):") + 1
    assert rec.diagnostics == (Diagnostic("llvm", "stack-frame-size-exceeds", "warning",
                                          f"stack frame size ({rec.usage.scratch_bytes}) exceeds limit (512) in "
                                          "function 'dot_chain'", f"stack_kernel.py:{line}"),)


# ---- the gate's diagnostics rule ---------------------------------------------------------------------


def _gate_entry(rec, diagnostics=..., llvm=None):
    """The gate's entry of a real record, with its compiler codes (and LLVM) as another compile had them."""
    import dataclasses

    from vgprscope.gate.baseline import Entry

    e = Entry.from_record(rec)
    changes = {} if diagnostics is ... else {"diagnostics": diagnostics}
    return dataclasses.replace(e, **changes, **({"llvm_version": llvm} if llvm is not None else {}))


def _judge(base, cur, *rules):
    from vgprscope.gate.baseline import Baseline
    from vgprscope.gate.diff import judge
    from vgprscope.gate.rules import RuleSet, parse_rule

    result = judge(Baseline.of([base], "3.9.0"), [cur], RuleSet(tuple(map(parse_rule, rules))))
    return result, result.entries[0]


def test_a_new_compiler_warning_fails_check_and_says_its_code(small_sm90):
    """The same counts, but ptxas now serialises the wgmma (C7512): the entry fails on the diagnostics rule."""
    from vgprscope.gate.diff import Change
    from vgprscope.gate.report import details, to_json, to_table

    rec, = small_sm90.records
    cur = _gate_entry(rec)
    assert cur.diagnostics == ("C7512",)
    result, d = _judge(_gate_entry(rec, diagnostics=()), cur)
    assert (d.change, d.fails) == (Change.WORSE, True) and not result.passed
    assert d.diagnostics.new == ("C7512",) and d.diagnostics.removed == ()
    assert "compiler warnings +C7512 (new, allowed +0)" in details(d)
    assert "new C7512 [1]" in to_table(result, "m", "b.json", width=100)  # the row names the code
    from tests.report.test_sarif import schema_validator

    jsonschema = schema_validator()

    from vgprscope.gate.sarif import gate_sarif

    sarif = gate_sarif(result, {}, "0.1.0", exit_code=1)
    jsonschema.Draft4Validator(json.loads((FIX / "sarif" / "sarif-schema-2.1.0.json").read_text())).validate(sarif)
    assert [(r["ruleId"], r["level"], r["properties"]) for r in sarif["runs"][0]["results"]] == [
        ("vgprscope.diagnostics", "error", {"new": ["C7512"]})]
    row = json.loads(to_json(result, {}, "b.json"))["rows"][0]
    assert row["diagnostics"]["new"] == ["C7512"] and row["fails"] is True


def test_a_warning_gone_is_better_and_the_rule_is_configurable(small_sm90):
    from vgprscope.gate.diff import Change

    rec, = small_sm90.records
    quiet, said = _gate_entry(rec, diagnostics=()), _gate_entry(rec)
    _, d = _judge(said, quiet)
    assert (d.change, d.fails, d.diagnostics.removed) == (Change.BETTER, False, ("C7512",))
    _, d = _judge(said, quiet, "diagnostics:exact")  # exact: the baseline must be re-saved
    assert d.fails
    _, d = _judge(quiet, said, "diagnostics:off")  # shown, never a failure
    assert (d.change, d.fails) == (Change.SAME, False) and d.diagnostics.new == ("C7512",)
    _, d = _judge(quiet, said, "diagnostics:+1")
    assert not d.fails
    _, d = _judge(quiet, said, "baseline:diagnostics:off")  # a variant's own rule
    assert not d.fails


def test_a_baseline_from_before_diagnostics_judges_none(small_sm90, tmp_path):
    """A baseline file whose entries carry no diagnostics (written before they were recorded) never fails on
    them; one saved now writes them and reads them back."""
    from vgprscope.gate.baseline import Baseline, load_baseline
    from vgprscope.gate.diff import Change

    rec, = small_sm90.records
    old = _gate_entry(rec, diagnostics=None)
    path = tmp_path / "old.json"
    path.write_text(Baseline.of([old], "3.9.0").to_json())
    assert "diagnostics" not in path.read_text()
    read = load_baseline(path)
    assert next(iter(read.entries.values())).diagnostics is None
    result, d = _judge(next(iter(read.entries.values())), _gate_entry(rec))
    assert (d.change, d.fails, d.diagnostics) == (Change.SAME, False, None)
    assert result.notes == ("compiler warnings not judged on 1 entry (C7512): the baseline predates recorded "
                            "diagnostics; `vgprscope baseline save` records them",)
    path.write_text(Baseline.of([_gate_entry(rec)], "3.9.0").to_json())
    assert next(iter(load_baseline(path).entries.values())).diagnostics == ("C7512",)


def test_check_names_a_change_of_ptxas_and_llvm(small_sm90):
    import dataclasses

    rec, = small_sm90.records
    cur = _gate_entry(rec)
    old_usage = dataclasses.replace(cur.usage, ptxas_version="Cuda compilation tools, release 12.8, V12.8.93")
    base = dataclasses.replace(cur, usage=old_usage, llvm_version="23.0.0git (5f07f818b51b786b0a87b4e514882600ecba112f)")
    result, d = _judge(base, cur)
    assert not d.fails
    assert result.notes == (f"ptxas changed: 12.8.93 -> {short_ptxas(rec.ptxas_version)} (1 entry)",
                            f"LLVM changed: 23.0.0git 5f07f818b51b -> {short_llvm(rec.llvm_version)} (1 entry)")


# ---- spill units (issue 29 item 5) -------------------------------------------------------------------


def test_wide_and_markdown_views_say_the_spills_units(small_sm90):
    """--wide and markdown show every spill field: the legend says what each counts and in which unit."""
    from vgprscope.analysis.analyze.view import table_text, to_markdown
    from vgprscope.report.machine import compile_only
    from vgprscope.report.rows import SPILLS_FULL_LEGEND

    machine = compile_only()
    wide = " ".join(table_text(small_sm90.records, machine, wide=True).split())
    assert " ".join(SPILLS_FULL_LEGEND.split()) in wide
    assert "bytes per thread" in to_markdown(small_sm90.records, machine)


def test_a_spills_change_in_check_says_its_unit(small_sm90):
    import dataclasses

    from vgprscope.gate.report import SPILLS_CHANGE_LEGEND, to_markdown, to_table

    rec, = small_sm90.records
    cur = _gate_entry(rec)
    base = dataclasses.replace(cur, usage=dataclasses.replace(cur.usage, spill_store_bytes=0, spill_load_bytes=0,
                                                              stack_bytes=0, local_bytes=0))
    result, d = _judge(base, cur)
    assert d.fails
    assert " ".join(SPILLS_CHANGE_LEGEND.split()) in " ".join(to_table(result, "m", "b.json", width=100).split())
    assert SPILLS_CHANGE_LEGEND in to_markdown(result, "m", "b.json")


def test_diff_between_releases_names_the_ptxas_and_llvm_change():
    """Triton 3.8.0 against the installed release: each side's records carry its ptxas and LLVM, and the diff's
    notes (table, markdown, JSON) name the change beside the Triton versions."""
    import vgprscope
    from vgprscope.compile import toolchains
    from vgprscope.compile.engine import triton_version

    toolchains.release("3.8.0", print)
    res = vgprscope.diff(triton=["3.8.0", triton_version()], variant="baseline", arch=["sm_90", "gfx942"],
                         block_m=[64], block_n=[32], head_dim=[64], num_warps=[4], num_stages=[1], jobs=1)
    nv_a, nv_b = (next(r for r in side if r.arch == "sm_90") for side in (res.records_before, res.records_after))
    assert nv_a.ptxas_version and nv_b.ptxas_version and nv_a.ptxas_version != nv_b.ptxas_version
    llvm_a, llvm_b = res.records_before[0].llvm_version, res.records_after[0].llvm_version
    assert llvm_a and llvm_b and llvm_a != llvm_b
    assert {r.llvm_version for r in res.records_before} == {llvm_a}
    expected = (f"ptxas changed: {short_ptxas(nv_a.ptxas_version)} -> {short_ptxas(nv_b.ptxas_version)} (1 entry)",
                f"LLVM changed: {short_llvm(llvm_a)} -> {short_llvm(llvm_b)} (2 entries)")
    assert res.gate.notes == expected
    assert all(n in " ".join(res.table().split()) for n in expected)
    assert json.loads(res.to_json())["notes"] == list(expected)
    # release by release (analyze --triton A --triton B): the table says which compilers each release brought
    from vgprscope.analysis.history.view import to_table

    hist = vgprscope.analyze(triton=["3.8.0", triton_version()], variant="baseline", arch=["sm_90", "gfx942"],
                             block_m=[64], block_n=[32], head_dim=[64], num_warps=[4], num_stages=[1], jobs=1)
    line = (f"compilers: 3.8.0 ptxas {short_ptxas(nv_a.ptxas_version)}, LLVM {short_llvm(llvm_a)}; "
            f"{triton_version()} ptxas {short_ptxas(nv_b.ptxas_version)}, LLVM {short_llvm(llvm_b)}")
    assert line in " ".join(to_table(hist.history(), hist.machine, width=100).split())


def test_explain_says_which_compilers_built_it_and_what_they_said(tmp_path):
    """explain's table, JSON and SARIF: the ptxas and LLVM that built the kernel and the C7512 advisory."""
    from tests.report.test_sarif import schema_validator

    jsonschema = schema_validator()

    import vgprscope

    res = vgprscope.explain(variant="baseline", arch=["sm_90"], maxnreg=[64], block_m=[64], block_n=[32],
                            head_dim=[64], num_warps=[4], num_stages=[1], jobs=1)
    e, = res.explanations
    assert e.diagnostics == (C7512,) and e.ptxas_version and e.llvm_version
    text = " ".join(res.table().split())
    assert f"compiler: ptxas {short_ptxas(e.ptxas_version)}, LLVM {short_llvm(e.llvm_version)}; it said (1):" in text
    assert " ".join(C7512.text().split()) in text
    assert json.loads(res.to_json())["kernels"][0]["diagnostics"] == [C7512.as_dict()]
    assert res.to_pandas()["diagnostics"].tolist() == ["C7512"]
    sarif = json.loads(res.to_sarif())
    schema = json.loads((FIX / "sarif" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(sarif)
    said = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "vgprscope.compiler"]
    assert [(r["level"], r["properties"]["code"]) for r in said] == [("note", "C7512")]


def test_failed_ptxas_row_reads_its_first_error():
    """baseline at its defaults with maxnreg=64 on sm_90: ptxas cannot allocate; the row says ptxas's error with
    its code, not the Python exception's name and ptxas's closing line."""
    import vgprscope

    rec, = vgprscope.analyze(variant="baseline", arch=["sm_90"], maxnreg=[64], jobs=1).records
    assert rec.diagnostics[0].code == "C7602" and rec.diagnostics[0].severity == "error"
    assert rec.status == rec.diagnostics[0].text()
    assert rec.status.startswith("ptxas C7602 error: Insufficient registers (64) to compile instruction")


def test_compare_says_the_spills_unit_where_it_shows_spills():
    """compare's spills column (baseline and small-tiles at 64x32 maxnreg=64 on sm_90 spill) gets its legend."""
    import vgprscope
    from vgprscope.report.rows import SPILLS_LEGEND

    res = vgprscope.compare(strategies=["baseline", "small-tiles"], arch=["sm_90"], maxnreg=[64], block_m=[64],
                            block_n=[32], head_dim=[64], num_warps=[4], num_stages=[1], jobs=1)
    assert " ".join(SPILLS_LEGEND.removeprefix("; ").split()) in " ".join(res.table().split())


def test_cache_entries_of_the_format_before_diagnostics_are_compiled_again(tmp_path, monkeypatch):
    """Format 4 entries hold raw outputs without the compiler's LLVM lines and version: none is read back as a
    result of this format; the kernel compiles again and its row has them."""
    import vgprscope
    from vgprscope.compile import cache

    kw = dict(variant="baseline", arch=["sm_90"], maxnreg=[64], block_m=[64], block_n=[32], head_dim=[64],
              num_warps=[4], num_stages=[1], jobs=1, cache=tmp_path)
    assert cache.FORMAT == 5
    monkeypatch.setattr(cache, "FORMAT", 4)
    old, = vgprscope.analyze(**kw).records
    assert vgprscope.analyze(**kw).records[0].cached  # the entry is whole under its own format
    monkeypatch.setattr(cache, "FORMAT", 5)
    new, = vgprscope.analyze(**kw).records
    assert not new.cached and new.llvm_version and new.diagnostics == (C7512,)
    assert (new.usage.regs, new.usage.spills) == (old.usage.regs, old.usage.spills)


@pytest.mark.parametrize("ask", [{"ptx_options": "--warn-on-spills"}, {"warn_on_spills": True}])
def test_ptxas_spill_warning_asked_for_with_ptx_options(ask):
    """sm_80 with maxnreg=32 spills the dot chain; ``ptx_options="--warn-on-spills"`` (or the CLI's
    ``--warn-on-spills``: ``warn_on_spills``) makes ptxas warn, and the warning's numbers are the spill bytes the
    row reports."""
    torch = pytest.importorskip("torch")
    import vgprscope

    sys.path.insert(0, str(DIAG))
    try:
        from stack_kernel import dot_chain
    finally:
        sys.path.remove(str(DIAG))
    x, y = torch.empty(2 * 64 * 64), torch.empty(64 * 64)
    rec, = vgprscope.analyze(dot_chain, x, y, N=64, num_warps=4, maxnreg=32, **ask, arch=["sm_80"], jobs=1).records
    u = rec.usage
    assert rec.ok and u.spill_store_bytes > 0
    assert rec.diagnostics == (Diagnostic("ptxas", "registers-are-spilled-to", "warning",
                                          f"Registers are spilled to local memory in function 'dot_chain', "
                                          f"{u.spill_store_bytes} bytes spill stores, {u.spill_load_bytes} bytes "
                                          "spill loads"),)


def test_wide_and_markdown_rows_of_inductor_say_its_spill_threshold(small_sm90):
    """An Inductor row over its spill threshold (the 64x32 maxnreg=64 compile's 136 B stack: n_spills 34 > 16)
    says Inductor's verdict in --wide and markdown, beside the spills it is counted from."""
    import dataclasses

    from vgprscope.analysis.analyze.view import table_text, to_markdown
    from vgprscope.report.machine import compile_only
    from vgprscope.sources.inductor import THRESHOLD_EXTRA, SpillThreshold

    rec, = small_sm90.records
    inductor = dataclasses.replace(rec, extras=((THRESHOLD_EXTRA, 16),), verdict=SpillThreshold(16)(rec.usage))
    n = rec.usage.stack_bytes // 4
    assert n > 16
    for text in (table_text([inductor], compile_only(), wide=True), to_markdown([inductor], compile_only())):
        assert "Inductor spill threshold" in text and f"skip: n_spills {n} > 16" in text
    assert "Inductor spill threshold" not in table_text([rec], compile_only(), wide=True)
