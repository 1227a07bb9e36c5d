"""Kernels as users' libraries write them, each captured and analysed: an autotuner subclass
with its own run(), a kernel in a generated module loaded under another name, a kernel in a script without
a main guard, a library that needs a GPU to import (read from its file), and one gone from this machine (compiled
from the capture's snapshot of its source).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from capture_helpers import USER_KERNELS, cli, direct_compile, gone_library, usage_counts

import vgprscope
from vgprscope.captures.model import load_capture

ARCHS = ["gfx942", "sm_90"]


def capture(tmp_path: Path, script: str, *args: str, env: dict | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)  # a second capture in a directory of its own
    out = tmp_path / "cap.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, str(USER_KERNELS / script), *args,
               env={"TRITON_INTERPRET": "1", **(env or {})})
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout
    return out


def test_an_autotuner_subclass_with_its_own_run_records_every_config(tmp_path):
    cap = load_capture(capture(tmp_path, "run_tuner.py"))
    tuned = [x for x in cap.launches if x.kernel.qualname == "tuned_copy"]
    assert [x.autotune["index"] for x in tuned] == list(range(6))
    assert all(x.autotune["count"] == 6 and x.autotune["declared"] == 6 for x in tuned)
    assert sorted((x.constexprs["BLOCK"], x.options["num_warps"]) for x in tuned) == [
        (b, w) for b in (64, 128, 256) for w in (2, 4)]
    records = vgprscope.analyze(capture=capture(tmp_path / "again", "run_tuner.py"), arch=["gfx942"], jobs=2).records
    assert len(records) == 6 and all(r.ok for r in records)


def test_a_librarys_own_autotuner_keeps_every_config_and_is_never_stale(tmp_path):
    """A library's Autotuner subclass (its own run() passes the chosen config's keyword arguments to fn.run),
    made by a call around the kernel under another name, or stacked under an entry wrapper and
    ``@triton.heuristics`` with a ``prune_configs_by``: captured under the interpreter, every config of each
    compiles on each arch, from the current source (never "the parameters changed": the capture is seconds
    old), with torch and without it (the module imports torch at the top), to the same numbers."""
    import os
    import subprocess

    from tests.project.test_no_torch import BLOCKER

    cap_file = capture(tmp_path, "run_lib_ops.py")
    cap = load_capture(cap_file)
    assert sorted((x.kernel.qualname, x.autotune["index"], x.autotune["count"]) for x in cap.launches) == [
        ("double_kernel", 0, 3), ("double_kernel", 1, 3), ("double_kernel", 2, 3), ("gelu_kernel", 0, 1)]
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2).records
    assert all(r.ok for r in records), [r.status for r in records]
    rows = sorted((r.kernel, r.arch, dict(r.config.constexprs)["BLOCK"]) for r in records)
    assert rows == sorted([(k, a, b) for a in ARCHS for k, b in
                           [("double_kernel", 32), ("double_kernel", 64), ("double_kernel", 128), ("gelu_kernel", 32)]])
    assert {dict(r.config.constexprs).get("EVEN") for r in records if r.kernel == "gelu_kernel"} == {False}
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", "--capture", str(cap_file), "--arch",
                           ",".join(ARCHS), "--format", "json"], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    torch_free = {(r["kernel"], r["arch"], r["slot"]): r["usage"] for r in json.loads(done.stdout)["rows"]}
    assert torch_free == {(r.kernel, r.arch, r.slot): json.loads(json.dumps(_usage(r))) for r in records}


def _usage(rec) -> dict:
    from vgprscope.core.records import usage_to_dict

    return usage_to_dict(rec.usage)


def test_a_kernel_in_a_generated_module_is_analysed(tmp_path):
    cap_file = capture(tmp_path, "run_generated.py", str(tmp_path / "generated"))
    (x,) = load_capture(cap_file).launches
    assert x.kernel.module == "_gen_module_scale_3x" and x.kernel.file.endswith("pointwise_0f3a9c.py")
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2).records
    assert [r.status for r in records] == ["ok", "ok"]


def test_a_kernel_in_a_script_without_a_main_guard_is_analysed_without_running_it(tmp_path):
    marker = tmp_path / "marker.txt"
    cap_file = capture(tmp_path, "script_kernel.py", env={"MARKER": str(marker)})
    assert marker.read_text() == "ran\n"
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2).records
    assert [r.status for r in records] == ["ok", "ok"]
    assert marker.read_text() == "ran\n"  # analysing it did not run the script


def _direct_gpu_only(module_dir: Path) -> dict:
    """The counts of a direct compile of the real module, imported where the "GPU" is."""
    import os

    os.environ["FAKE_GPU"] = "1"
    try:
        return direct_compile(module_dir, {
            "module": "gpu_only_ops", "name": "rms",
            "signature": {"X": "*fp32", "Y": "*fp32", "n": "i32", "BLOCK": "constexpr"},
            "constexprs": {"BLOCK": 128},
            "attrs": {"hip": {"X": [["tt.divisibility", 16], ["tt.pointer_range", 32]],
                              "Y": [["tt.divisibility", 16], ["tt.pointer_range", 32]]},
                      "cuda": {"X": [["tt.divisibility", 16]], "Y": [["tt.divisibility", 16]]}},
            "options": {}})
    finally:
        del os.environ["FAKE_GPU"]


def test_a_library_that_needs_a_gpu_to_import_is_read_from_its_file(tmp_path):
    """Where its module does not import (no GPU here), the kernel is read from its current file: the same counts
    as the real module's direct compile, and no row says "snapshot"."""
    cap_file = capture(tmp_path, "run_gpu_only.py", env={"FAKE_GPU": "1"})
    (kernel,) = load_capture(cap_file).kernels
    snap = json.loads(kernel.snapshot)
    assert not snap["problems"] and set(snap["functions"]) == {"gpu_only_ops:rms", "helpers_for_gpu_only:square"}
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2).records  # no FAKE_GPU here: the import fails
    assert [r.status for r in records] == ["ok", "ok"]
    assert not any(dict(r.extras).get("note") for r in records)
    direct = _direct_gpu_only(USER_KERNELS)
    for rec in records:
        assert usage_counts(rec) == direct[rec.arch], rec.arch


def test_a_library_gone_from_this_machine_compiles_from_the_snapshot(tmp_path):
    """Only where the file itself is gone (a library installed where the capture ran, not here) does the
    capture's snapshot compile: to the same counts, and the result's header says so once."""
    cap_file, moved = gone_library(tmp_path)
    result = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2)
    assert [r.status for r in result.records] == ["ok", "ok"]
    notes = {dict(r.extras)["note"] for r in result.records}
    assert notes == {"compiled from the capture's snapshot of its source "
                     f"({tmp_path / 'capturing-machine' / 'site-packages' / 'gpu_only_ops.py'} is not on this machine)"}
    assert result.machine.notes == (f"every row (2) compiled from the capture's snapshot of their source: "
                                    f"{tmp_path / 'capturing-machine' / 'site-packages' / 'gpu_only_ops.py'} is not "
                                    "on this machine",)
    direct = _direct_gpu_only(moved)
    for rec in result.records:
        assert usage_counts(rec) == direct[rec.arch], rec.arch


def test_a_tuned_key_launched_with_another_specialisation_adds_the_chosen_config(tmp_path):
    """Two launches under one autotune key whose optional arguments swap None and a tensor: the JIT
    compiles every config for the first (tuning) and the chosen config alone for the second, so the capture
    holds 3 + 1 specialisations (fla-core's chunk_fwd_kernel_o on an H100: 7 JIT compiles, 6 recorded
    before, reports/capture-fla-gpu-h100.md)."""
    cap = load_capture(capture(tmp_path, "run_optional_args.py"))
    launches = [x for x in cap.launches if x.kernel.qualname == "gated_copy"]
    by_use = sorted((x.constexprs["USE_G"], x.constexprs["USE_G_GAMMA"], x.autotune["index"]) for x in launches)
    # the interpreter cannot benchmark, so the chosen config is the first of the list
    assert by_use == [(False, True, 0), (True, False, 0), (True, False, 1), (True, False, 2)]
    # the gate compiles what the current source launches for each of the two calls: every config of the list
    records = vgprscope.analyze(capture=capture(tmp_path / "again", "run_optional_args.py"), arch=["gfx942"], jobs=1).records
    assert len(records) == 6 and all(r.ok for r in records), [r.status for r in records]
    assert len({r.slot for r in records}) == 6


def test_kernels_compiled_through_triton_compile_are_captured_with_inductor_configs_as_slots(tmp_path):
    """Inductor compiles through ``triton.compile`` and launches with its own launchers: the compile is
    captured, with the autotuner's config index and Inductor's kernel name, and compiles anywhere to the counts
    of a direct compile of the same ASTSource."""
    cap_file = capture(tmp_path, "run_direct_compile.py", env={"TRITON_INTERPRET": "0"})
    raw = json.loads(cap_file.read_text())
    assert [x["options"].get("num_warps") for x in raw["launches"]] == [4, 2, 4]
    plain, *tuned = raw["launches"]
    assert plain["origin"] == "triton.compile" and plain["autotune"] is None
    assert plain["target"] == {"backend": "cuda", "arch": 90, "warp_size": 32}
    assert [a.get("value") for a in plain["args"] if a["type"] == "constexpr"] == [1024]
    assert [x["autotune"]["index"] for x in tuned] == [0, 1]
    assert {x["producer"]["kernel_name"] for x in tuned} == {"triton_poi_fused_add_mul_0"}
    assert {x["producer"]["heuristic"] for x in tuned} == {"pointwise"}
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=1).records
    assert len(records) == 6 and all(r.ok for r in records), [r.status for r in records]
    spec = {"module": "run_direct_compile", "name": "triton_poi_fused_add_mul_0",
            "signature": {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp16", "xnumel": "i32",
                          "XBLOCK": "constexpr"},
            "constexprs": {"XBLOCK": 1024}, "options": {"num_warps": 4, "num_stages": 1},
            "attrs": {v: {"in_ptr0": [["tt.divisibility", 16]], "in_ptr1": [["tt.divisibility", 16]],
                          "out_ptr0": [["tt.divisibility", 16]], "xnumel": [["tt.divisibility", 16]]}
                      for v in ("hip", "cuda")}}
    direct = direct_compile(USER_KERNELS, spec)
    first = {r.arch: usage_counts(r) for r in records if r.config.autotune is None}
    assert first == direct


def test_a_launch_with_host_tensor_descriptors_compiles_on_every_arch(tmp_path):
    """FlagGems' Hopper matmul takes host-side TensorDescriptors: the stand-in of each descriptor's base tensor
    answers what the descriptor checks of its dtype (its element size), so each arch compiles it."""
    cap_file = capture(tmp_path, "run_host_tma.py")
    (x,) = load_capture(cap_file).launches
    assert [a["type"].split("<")[0] for a in x.args[:3]] == ["tensordesc"] * 3
    records = vgprscope.analyze(capture=cap_file, arch=[*ARCHS, "gfx950"], jobs=2).records
    assert [(r.arch, r.status) for r in records] == [("gfx942", "ok"), ("sm_90", "ok"), ("gfx950", "ok")]


def test_a_generated_kernel_reads_the_globals_its_generator_bound(tmp_path):
    """FlagGems' pointwise_dynamic writes a kernel module with a copy of the scalar function, then copies that
    function's module globals (``erf``, ``pow``) into the loaded module: the file alone does not define them,
    the capture's snapshot recorded them (libdevice's own functions, also under the interpreter's stand-ins)."""
    cap_file = capture(tmp_path, "run_codegen_globals.py", str(tmp_path / "generated"))
    (kernel,) = load_capture(cap_file).kernels
    snap = json.loads(kernel.snapshot)
    assert not snap["problems"]
    names = snap["functions"]["pointwise_scalar_ops:gelu_none"]["names"]
    # pow shadows Python's builtin, which Triton does not take: the module's own binding is what the kernel reads
    assert {n: names[n] for n in ("erf", "pow")} == {
        n: {"import": ["triton.language.extra.libdevice", n]} for n in ("erf", "pow")}
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2).records
    assert [r.status for r in records] == ["ok", "ok"]
    assert all("note" not in dict(r.extras) for r in records)  # compiled from the generated file itself


def test_each_autotune_config_keeps_the_descriptors_its_pre_hook_set(tmp_path):
    """FlagGems' Hopper matmul builds its descriptors with a dummy block and each config's pre_hook sets the
    config's block shape: the launches derived from the current source (the module imports here) take each
    config's descriptors from that config's recorded launch, not the call's first one (which gave
    "accumulator shape is incompatible" on every other config)."""
    cap_file = capture(tmp_path, "run_tma_tuned.py")
    launches = load_capture(cap_file).launches
    assert [a["descriptor"]["fields"]["block_shape"] for a in launches[1].args[:3]] == [
        {"list": [64, 32]}, {"list": [32, 32]}, {"list": [64, 32]}]
    records = vgprscope.analyze(capture=cap_file, arch=ARCHS, jobs=2).records
    assert len(records) == 6 and [r.status for r in records] == ["ok"] * 6

