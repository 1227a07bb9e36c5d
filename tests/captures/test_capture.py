"""vgprscope capture on kernels nobody here wrote: a user's own autotuned kernel, and liger-kernel from
PyPI, launched by their own scripts under TRITON_INTERPRET=1, captured, then compiled for AMD and NVIDIA
with counts equal to a direct triton.compile of the same launch."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from capture_helpers import ROOT, USER_KERNELS, cli, direct_compile, usage_counts

import vgprscope
from vgprscope.captures.model import CaptureFileError, load_capture

ARCHS = ["gfx942", "sm_90"]


@pytest.fixture(scope="module")
def user_capture(ops_capture) -> Path:
    """run_ops.py captured (tests/conftest.py: once per test process)."""
    assert "ok" in ops_capture.stdout  # the user's own script ran to its end, its checks included
    assert "2 kernels, 1 specialisation, 2 autotune configs" in ops_capture.stderr
    return ops_capture.path


def test_capture_records_pruned_autotune_configs_and_heuristics(user_capture):
    cap = load_capture(user_capture)
    tuned = [x for x in cap.launches if x.autotune]
    # the 4 declared configs pruned to the two with BLOCK 128; @heuristics saw each (200 % 128: EVEN false)
    assert [(x.constexprs, x.options["num_warps"], x.autotune["index"]) for x in tuned] == [
        ({"BLOCK": 128, "EVEN": False}, 2, 0), ({"BLOCK": 128, "EVEN": False}, 4, 1)]
    assert all(x.autotune["count"] == 2 and x.autotune["declared"] == 4 for x in tuned)
    assert tuned[0].autotune["key"] == ["200", "torch.float32", "torch.float32"]
    # the launch as facts, each release's binder derives its specialisation from them: the pointers are
    # 16-byte aligned and within 2 GiB (AMD buffer ops); 200 is not divisible by 16
    args = {a["name"]: a for a in tuned[0].args}
    assert args["X"] == {"name": "X", "type": "*fp32", "aligned": True, "small": True}
    assert args["stride"] == {"name": "stride", "type": "i32"}
    assert args["alpha"] == {"name": "alpha", "type": "fp32"}
    (plain,) = [x for x in cap.launches if not x.autotune]
    assert plain.kernel.qualname == "add" and plain.constexprs == {"BLOCK": 256}
    assert plain.options == {"num_warps": 4}


def test_captured_launch_compiles_to_the_counts_of_a_direct_compile(user_capture):
    records = vgprscope.analyze(capture=user_capture, arch=ARCHS, jobs=2).records
    tuned = [r for r in records if r.kernel == "scale_rows" and r.config.num_warps == 4]
    assert [r.status for r in tuned] == ["ok", "ok"]
    direct = direct_compile(USER_KERNELS, {
        "module": "my_ops", "name": "scale_rows",
        "signature": {"X": "*fp32", "Y": "*fp32", "stride": "i32", "n_cols": "i32", "alpha": "fp32",
                      "BLOCK": "constexpr", "EVEN": "constexpr"},
        "constexprs": {"BLOCK": 128, "EVEN": False},
        "attrs": {"hip": {"X": [["tt.divisibility", 16], ["tt.pointer_range", 32]],
                          "Y": [["tt.divisibility", 16], ["tt.pointer_range", 32]]},
                  "cuda": {"X": [["tt.divisibility", 16]], "Y": [["tt.divisibility", 16]]}},
        "options": {"num_warps": 4, "num_stages": 1, "num_ctas": 1}})
    for rec in tuned:
        assert usage_counts(rec) == direct[rec.arch], rec.arch


def test_each_autotune_config_is_its_own_row(user_capture):
    records = vgprscope.analyze(capture=user_capture, arch=["gfx942"], jobs=2).records
    rows = [(r.kernel, r.config.short()) for r in records]
    assert rows == [("scale_rows", "fp32 BLOCK=128 w2 s1 cfg 1/2"), ("scale_rows", "fp32 BLOCK=128 w4 s1 cfg 2/2"),
                    ("add", "fp32 BLOCK=256 w4")]
    assert all(r.ok and r.source == "capture" and r.identity.module == "my_ops" for r in records)


def test_the_current_source_is_compiled_with_the_recorded_launch(tmp_path):
    """A comment gives the same numbers, a body change is compiled (the gate sees its registers), and only a
    change of the kernel's parameters makes a launch stale, with a row saying so ("capture again")."""
    work = tmp_path / "k"
    shutil.copytree(USER_KERNELS, work)
    cap = tmp_path / "cap.json"
    assert cli("capture", "-o", str(cap), "--", sys.executable, str(work / "run_ops.py"),
               env={"TRITON_INTERPRET": "1"}).returncode == 0
    before = vgprscope.analyze(capture=cap, arch=["gfx942"], jobs=1).records
    assert [r.status for r in before] == ["ok"] * 3
    source = (work / "my_ops.py").read_text()
    (work / "my_ops.py").write_text(source + "\n# a comment\n")
    commented = vgprscope.analyze(capture=cap, arch=["gfx942"], jobs=1).records
    assert [r.usage for r in commented] == [r.usage for r in before]
    assert not any(r.cached for r in commented)  # the file changed: compiled again, same numbers
    # a body change: the add kernel now keeps a (BLOCK, 32) tile live
    heavier = source.replace(
        "    tl.store(Z + offs, tl.load(X + offs, mask=mask) + tl.load(Y + offs, mask=mask), mask=mask)",
        "    x = tl.load(X + offs, mask=mask)\n"
        "    t = x[:, None] + tl.arange(0, 32)[None, :].to(tl.float32)\n"
        "    tl.store(Z + offs, tl.sum(tl.exp(t), axis=1) + tl.load(Y + offs, mask=mask), mask=mask)")
    assert heavier != source
    (work / "my_ops.py").write_text(heavier)
    after = {r.kernel: r for r in vgprscope.analyze(capture=cap, arch=["gfx942"], jobs=1).records}
    assert after["add"].ok and after["add"].usage.vgpr_total > before[2].usage.vgpr_total
    # a parameter renamed: the recorded launch no longer fits the kernel
    (work / "my_ops.py").write_text(source.replace("def add(X, Y, Z, n", "def add(X, Y, Z, count").replace(
        "mask = offs < n", "mask = offs < count"))
    stale = {r.kernel: r for r in vgprscope.analyze(capture=cap, arch=["gfx942"], jobs=1).records}
    assert stale["add"].status.startswith("the kernel's parameters changed since the launch was recorded (")
    assert stale["add"].status.endswith("): capture again") and stale["scale_rows"].ok
    (work / "my_ops.py").unlink()
    # gone, and its module nowhere on the path: the capture's snapshot is compiled, and each row says so
    records = vgprscope.analyze(capture=cap, arch=["gfx942"], jobs=1).records
    assert [r.status for r in records] == ["ok"] * 3
    assert all(dict(r.extras)["note"].startswith("compiled from the capture's snapshot") for r in records)
    doc = json.loads(cap.read_text())
    for k in doc["kernels"]:
        del k["snapshot"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    records = vgprscope.analyze(capture=bare, arch=["gfx942"], jobs=1).records
    assert all(r.status.endswith("does not exist (moved or deleted since the capture) and my_ops is not on "
                                 "this Python's path: install it, or capture again") for r in records), records[0].status
    # moved (a capture from another machine's checkout): found by module on the recorded root, compiled
    cap_doc = json.loads(cap.read_text())
    for k in cap_doc["kernels"]:
        k["file"], k["root"] = str(tmp_path / "elsewhere" / "my_ops.py"), str(USER_KERNELS)
    cap.write_text(json.dumps(cap_doc))
    assert [r.status for r in vgprscope.analyze(capture=cap, arch=["gfx942"], jobs=1).records] == ["ok"] * 3


def test_liger_kernel_ops_captured_and_analysed_for_amd_and_nvidia(tmp_path):
    cap = tmp_path / "liger.json"
    done = cli("capture", "-o", str(cap), "--", sys.executable, str(ROOT / "tools" / "reports" / "workloads" / "liger_ops.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    capture = load_capture(cap)
    names = {k.qualname for k in capture.kernels}
    assert {"_rms_norm_forward_kernel", "_rms_norm_backward_kernel", "_layer_norm_forward_kernel",
            "_swiglu_forward_kernel", "_geglu_tanh_forward_kernel", "liger_cross_entropy_kernel",
            "_dyt_fwd_kernel"} <= names
    dyt = [x for x in capture.launches if x.kernel.qualname == "_dyt_fwd_kernel"]
    assert len(dyt) == 18 and all(x.autotune["count"] == 18 for x in dyt)  # every config, not the winner
    records = vgprscope.analyze(capture=cap, arch=ARCHS, jobs=2).records
    assert len(records) == 2 * len(capture.launches)
    bad = [(r.kernel, r.arch, r.status) for r in records if not r.ok]
    # liger launches its cross-entropy kernel with 32 warps: 1024 threads on NVIDIA, 2048 on AMD's wave64
    assert bad == [("liger_cross_entropy_kernel", "gfx942",
                    "num_warps 32 is 2048 threads (32 waves of 64); gfx942 allows 1024 per workgroup")]
    rms = [r for r in records if r.kernel == "_rms_norm_forward_kernel"]
    direct = direct_compile(Path("."), {
        "module": "liger_kernel.ops.rms_norm", "name": "_rms_norm_forward_kernel",
        "signature": {"Y_ptr": "*fp16", "Y_row_stride": "i32", "X_ptr": "*fp16", "X_row_stride": "i32",
                      "W_ptr": "*fp16", "W_row_stride": "constexpr", "RSTD_ptr": "*fp32",
                      "RSTD_row_stride": "constexpr", "n_cols": "i32", "eps": "fp32", "offset": "fp32",
                      "casting_mode": "constexpr", "elementwise_affine": "constexpr", "BLOCK_SIZE": "constexpr"},
        "constexprs": {"W_row_stride": 1, "RSTD_row_stride": 1, "casting_mode": 0, "elementwise_affine": True,
                       "BLOCK_SIZE": 4096},
        "attrs": {v: {n: ([["tt.divisibility", 16]] + ([["tt.pointer_range", 32]] if n.endswith("_ptr") and v == "hip"
                                                        else [])) for n in ("Y_ptr", "Y_row_stride", "X_ptr",
                                                                           "X_row_stride", "W_ptr", "RSTD_ptr", "n_cols")}
                  for v in ("hip", "cuda")},
        "options": {"num_warps": 8}})  # liger's choice for 4096 columns
    assert {r.arch: usage_counts(r) for r in rms} == direct


# ---- bad input --------------------------------------------------------------------------------------

def test_corrupt_truncated_or_foreign_capture_is_one_line_exit_2(tmp_path, user_capture):
    text = user_capture.read_text()
    cases = {"truncated.json": text[: len(text) // 2], "other.json": json.dumps({"schema": "something-else"}),
             "future.json": text.replace('"schema_version": 3', '"schema_version": 99')}
    for name, body in cases.items():
        (tmp_path / name).write_text(body)
        done = cli("analyze", "--capture", str(tmp_path / name), "--arch", "gfx942")
        assert done.returncode == 2, (name, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    with pytest.raises(CaptureFileError, match="not valid JSON"):
        load_capture(tmp_path / "truncated.json")
    with pytest.raises(CaptureFileError, match="schema version 99"):
        load_capture(tmp_path / "future.json")


def test_a_schema_1_capture_is_refused_with_one_line_that_says_to_capture_again(tmp_path):
    """Schema 1 (each backend's descriptor strings, constexprs apart) is not read: one line naming the file,
    its version and what to do."""
    doc = json.loads((ROOT / "tests" / "fixtures" / "capture_v1.json").read_text())
    assert doc["schema_version"] == 1
    with pytest.raises(CaptureFileError) as info:
        load_capture(ROOT / "tests" / "fixtures" / "capture_v1.json")
    (line,) = str(info.value).splitlines()
    assert "schema version 1" in line and line.endswith("capture again (`vgprscope capture -o FILE -- COMMAND`)")


def test_every_committed_capture_is_read():
    """The captures under reports/ are in a schema this vgprscope reads, each with its launches."""
    files = sorted((ROOT / "reports").rglob("*.json"))
    docs = {f: json.loads(f.read_text()) for f in files}
    captures = [f for f, d in docs.items() if isinstance(d, dict) and d.get("schema") == "vgprscope-capture"]
    assert len(captures) >= 7
    for f in captures:
        assert load_capture(f).launches, f


def test_missing_command_exit_2_naming_it(tmp_path):
    done = cli("capture", "-o", str(tmp_path / "c.json"), "--", "no-such-command-xyz", "arg")
    assert done.returncode == 2
    assert done.stderr.strip() == "vgprscope: error: command not found: no-such-command-xyz"
    assert not (tmp_path / "c.json").exists()


def test_no_triton_launch_exit_1_file_written_and_exit_code_passed_on(tmp_path):
    out = tmp_path / "c.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, "-c", "print('hi')")
    assert done.returncode == 1 and "launched no Triton kernel" in done.stderr
    assert load_capture(out).launches == ()
    done = cli("capture", "-o", str(out), "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert done.returncode == 3


def test_ctrl_c_leaves_the_previous_capture_intact(tmp_path, user_capture):
    out = tmp_path / "c.json"
    shutil.copy(user_capture, out)
    before = out.read_bytes()
    started = tmp_path / "started"
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", "capture", "-o", str(out), "--", sys.executable,
                             "-c", f"import time; open({str(started)!r}, 'w').close(); time.sleep(60)"],
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            # a shell's background job ignores SIGINT, and an ignored SIGINT is inherited: give the
                            # command the terminal's default, so this test runs the same however it was started
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Ctrl-C once the command runs (a fixed sleep raced a cold start: the signal came during imports)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert started.exists(), "the captured command never started"
    import os

    os.killpg(proc.pid, signal.SIGINT)  # the terminal sends it to the whole foreground group
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert out.read_bytes() == before
    assert "left as it was" in stderr


def test_kernel_for_one_vendor_is_a_row_with_the_reason_and_a_failing_command_still_captures(tmp_path):
    cap = tmp_path / "c.json"
    done = cli("capture", "-o", str(cap), "--", sys.executable, str(USER_KERNELS / "run_nv_only.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 1  # the command's own exit code: the interpreter cannot run inline assembly
    assert "inline_asm not supported in interpreter mode" in done.stderr
    assert "hint:" not in done.stderr  # a failure that is not a missing driver or numpy gets no hint
    records = vgprscope.analyze(capture=cap, arch=ARCHS, jobs=2).records
    by_arch = {r.arch: r.status for r in records}
    assert by_arch["sm_90"] == "ok"
    assert by_arch["gfx942"].endswith("the kernel uses inline assembly (tl.inline_asm_elementwise), which "
                                      "gfx942's backend cannot take if it was written for another")


# ---- the output path, signals and exit codes -------------------------------------------------------

def test_an_unwritable_output_is_refused_before_the_command_runs(tmp_path):
    ran = tmp_path / "ran"
    blocker = tmp_path / "afile"
    blocker.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for out, needle in ((blocker / "x.json", f"{blocker} is a file, not a directory"),
                        (fifo, "it is a named pipe (FIFO), not a regular file"),
                        (Path("-"), "the capture is a file")):
        done = cli("capture", "-o", str(out), "--", sys.executable, "-c", f"open({str(ran)!r}, 'w').close()")
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and needle in done.stderr, done.stderr
        assert not ran.exists(), "the command ran although its capture could not be written"


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGUSR1])  # no core dump
def test_a_command_killed_by_a_signal_makes_capture_exit_128_plus_n(tmp_path, signum):
    out = tmp_path / "c.json"
    reset = "" if signum == signal.SIGKILL else f"signal.signal({int(signum)}, signal.SIG_DFL); "
    done = cli("capture", "-o", str(out), "--", sys.executable, "-c",
               f"import os, signal; {reset}os.kill(os.getpid(), {int(signum)})")
    assert done.returncode == 128 + signum, done.stderr
    assert f"killed by {signal.Signals(signum).name}" in done.stderr
    assert load_capture(out).exit_code == -signum  # the file records what the command did


def _default_signals():
    # a shell's background job ignores SIGINT (and nohup SIGHUP), and an ignored signal is inherited: give
    # capture the terminal's defaults, so these tests run the same however pytest was started
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


# the command: says where it runs and its pid, then sleeps; on a stop signal it notes it and exits
SLEEPER = """
import os, signal, sys, time
notes = sys.argv[1]
def stop(signum, frame):
    with open(notes, "a") as f:
        f.write(signal.Signals(signum).name + "\\n")
    time.sleep(1)  # a second signal, if capture sent one, would land in this second
    sys.exit(3)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, stop)
with open(notes + ".started", "w") as f:
    f.write(f"{os.getpid()} {os.environ['VGPRSCOPE_CAPTURE_DIR']}")
time.sleep(60)
"""


def _wait_started(notes: Path, proc) -> tuple[int, Path]:
    started = Path(str(notes) + ".started")
    deadline = time.monotonic() + 60
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert started.exists(), "the captured command never started"
    pid, tmp = started.read_text().split(" ", 1)
    return int(pid), Path(tmp)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_capture_alone_is_passed_on_and_cleaned_up(tmp_path, signum):
    """`kill PID` (a CI timeout, a closed session): the command gets the signal, the temporary directory
    goes, the previous capture file stays, and capture exits 128+N."""
    out, notes = tmp_path / "c.json", tmp_path / "notes"
    out.write_text("previous")
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", "capture", "-o", str(out), "--", sys.executable,
                             "-c", SLEEPER, str(notes)], stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_signals)
    child, tmp = _wait_started(notes, proc)
    assert tmp.is_dir()
    os.kill(proc.pid, signum)  # capture alone, not its group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, stderr
    assert notes.read_text().split() == [signal.Signals(signum).name]
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    assert not tmp.exists()
    assert out.read_text() == "previous" and "left as it was" in stderr and "Traceback" not in stderr


def test_sigkill_to_capture_ends_the_command_and_the_next_run_removes_its_directory(tmp_path):
    """SIGKILL cannot be caught or passed on: the command dies with capture (it does not run on, orphaned),
    its watchdog removes the temporary directory, and the next capture removes one a capture whose process
    is gone left anyway (and no other)."""
    out, notes = tmp_path / "c.json", tmp_path / "notes"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", "capture", "-o", str(out), "--", sys.executable,
                             "-c", SLEEPER, str(notes)], stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True, preexec_fn=_default_signals)
    child, tmp = _wait_started(notes, proc)
    os.kill(proc.pid, signal.SIGKILL)  # capture alone
    proc.wait(timeout=60)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and subprocess.run(["ps", "-o", "stat=", "-p", str(child)],
                                                         capture_output=True, text=True).stdout.strip():
        time.sleep(0.1)
    try:
        with pytest.raises(ProcessLookupError):
            os.kill(child, 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    assert tmp.parent == temp
    deadline = time.monotonic() + 10
    while tmp.exists() and time.monotonic() < deadline:  # the watchdog's
        time.sleep(0.1)
    assert not tmp.exists()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    tmp = temp / f"vgprscope-capture-{gone.pid}-x"  # a capture whose process is gone left it
    tmp.mkdir()
    live = temp / f"vgprscope-capture-{os.getpid()}-x"  # a directory of a capture still running (this process)
    live.mkdir()
    done = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", str(tmp_path / "d.json"), "--",
                           sys.executable, "-c", "pass"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and "launched no Triton kernel" in done.stderr, done.stderr
    assert not tmp.exists() and live.is_dir()


# the command: starts three processes that sleep (one in a session of its own, one that ignores SIGTERM),
# writes their pids, then sleeps itself
FAMILY = """
import os, signal, subprocess, sys, time
sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
stubborn = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"]
kids = [subprocess.Popen(sleep), subprocess.Popen(sleep, start_new_session=True), subprocess.Popen(stubborn)]
time.sleep(1)
with open(sys.argv[1] + ".started", "w") as f:
    f.write(" ".join(str(k.pid) for k in kids) + " " + os.environ["VGPRSCOPE_CAPTURE_DIR"])
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command's processes are found in /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_stop_ends_every_process_of_the_command_and_leaves_no_directory(tmp_path, signum):
    """SIGTERM to capture reaches the command's children too (whatever their process group or session; one
    that ignores it is killed after the grace period); SIGKILL to capture leaves no orphan and no temporary
    directory (its watchdog's work)."""
    notes = tmp_path / "notes"
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "vgprscope", "capture", "-o", str(tmp_path / "c.json"), "--",
                             sys.executable, "-c", FAMILY, str(notes)], stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(temp)}, start_new_session=True,
                            preexec_fn=_default_signals)
    started = Path(str(notes) + ".started")
    deadline = time.monotonic() + 60
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    *kids, tmp = started.read_text().split(" ")
    pids = [int(k) for k in kids]
    try:
        os.kill(proc.pid, signum)  # capture alone
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (any(map(_alive, pids)) or Path(tmp).exists()):
            time.sleep(0.2)
        assert [p for p in pids if _alive(p)] == []
        assert not Path(tmp).exists() and list(temp.iterdir()) == []
    finally:
        for p in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def test_ctrl_c_at_a_terminal_reaches_the_command_once(tmp_path):
    """The terminal sends Ctrl-C to the whole foreground group: capture must not send the command a second
    SIGINT (pytest, say, would abandon its own clean-up)."""
    import pty

    out, notes = tmp_path / "c.json", tmp_path / "notes"
    pid, master = pty.fork()
    if pid == 0:  # the child: a session of its own on the pty, as in a terminal
        try:
            _default_signals()
            os.execv(sys.executable, [sys.executable, "-m", "vgprscope", "capture", "-o", str(out), "--",
                                      sys.executable, "-c", SLEEPER, str(notes)])
        finally:
            os._exit(127)

    class Proc:
        def poll(self):
            return None

    try:
        _wait_started(notes, Proc())
        os.write(master, b"\x03")  # Ctrl-C: the kernel signals the pty's foreground process group
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            try:  # drain the pty so that nothing blocks on a full terminal
                os.read(master, 65536) if select_ready(master) else time.sleep(0.1)
            except OSError:
                time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError("capture did not end after Ctrl-C")
    finally:
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 130
    assert notes.read_text().split() == ["SIGINT"]


def select_ready(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0.1)[0])


# ---- hints for a CPU run -----------------------------------------------------------------------------

def test_a_cpu_run_without_the_interpreter_is_told_to_set_triton_interpret(tmp_path):
    done = cli("capture", "-o", str(tmp_path / "c.json"), "--", sys.executable, str(USER_KERNELS / "run_ops.py"),
               env={"TRITON_INTERPRET": "0"})
    if done.returncode == 0:
        pytest.skip("a GPU driver is active here: the JIT ran the kernels")
    assert "0 active drivers" in done.stderr  # the command's own traceback
    hints = [ln for ln in done.stderr.splitlines() if "hint:" in ln]
    assert hints == ['vgprscope: hint: Triton found no GPU driver ("0 active drivers"); on a machine without a '
                     "GPU, run the command under Triton's interpreter: TRITON_INTERPRET=1 vgprscope capture -- ..."]


def test_the_interpreter_without_numpy_is_named(tmp_path):
    """A Python without numpy (the bench extra brings it; a bare triton + torch has none): the interpreter's
    import fails, and capture says what is missing."""
    fake = tmp_path / "no_numpy" / "numpy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    done = cli("capture", "-o", str(tmp_path / "c.json"), "--", sys.executable, str(USER_KERNELS / "run_ops.py"),
               env={"TRITON_INTERPRET": "1", "PYTHONPATH": str(fake.parent)})
    assert done.returncode == 1 and "launched no Triton kernel" in done.stderr
    hints = [ln for ln in done.stderr.splitlines() if "hint:" in ln]
    assert hints == ["vgprscope: hint: Triton's interpreter (TRITON_INTERPRET=1) needs numpy, which the command's "
                     "Python lacks: pip install numpy (vgprscope's bench extra has it)"]
