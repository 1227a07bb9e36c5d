"""Where output goes: --output writes regular files only, keeps an
existing file's mode and follows symlinks; ``-`` is stdout; stdout on a full device, closed, or a pipe whose
reader went away is one stderr line and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app
from vgprscope.core.errors import OutputError
from vgprscope.core.fsutil import atomic_write, check_writable

_register()


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_error_line(res_or_stderr, code: int | None = None) -> str:
    stderr = res_or_stderr if isinstance(res_or_stderr, str) else res_or_stderr.stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# ---- --output: regular files only ----

def test_output_to_a_fifo_is_refused_and_the_fifo_stays(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "to-pipe"
    link.symlink_to(fifo)
    for target in (fifo, link):
        res = run("archs", "--output", str(target))
        assert res.exit_code == 2
        line = one_error_line(res)
        assert "it is a named pipe (FIFO), not a regular file" in line and "or - for stdout" in line
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert link.is_symlink()


def test_a_device_node_is_never_replaced(tmp_path):
    with pytest.raises(OutputError, match="it is a character device, not a regular file"):
        check_writable("/dev/null")  # only looks; nothing below writes near the system's /dev/null
    # a device node of its own (root only: mknod), so that a regression cannot replace the system's
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    res = run("archs", "--output", str(node))
    assert res.exit_code == 2 and "it is a character device" in one_error_line(res)
    with pytest.raises(OutputError, match="it is a character device, not a regular file"):
        atomic_write(node, "x")
    assert stat.S_ISCHR(os.stat(node).st_mode)


def test_a_symlink_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    res = run("archs", "--format", "csv", "--output", str(link))
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().startswith("arch,")


def test_dash_is_stdout():
    res = run("archs", "--format", "csv", "--output", "-")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("arch,") and "wrote" not in res.stderr
    assert not Path("-").exists()


# ---- modes ----

@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_an_existing_file_keeps_its_mode(tmp_path, mode):
    out = tmp_path / "out.json"
    out.write_text("{}")
    out.chmod(mode)
    res = run("archs", "--format", "json", "--output", str(out))
    assert res.exit_code == 0, res.output
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert out.read_text().startswith("[") and "gfx942" in out.read_text()


def test_a_new_file_gets_the_umask_default(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    out = tmp_path / "new.json"
    atomic_write(out, "{}")  # every output, baseline, capture and cache file is written by it
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    res = run("archs", "--output", str(tmp_path / "table.txt"))
    assert res.exit_code == 0
    assert stat.S_IMODE((tmp_path / "table.txt").stat().st_mode) == 0o666 & ~mask


# ---- stdout that cannot be written ----

def _cli(stdout, preexec=None, args=("variants", "--wide")) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vgprscope", *args], stdout=stdout,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec)


def test_stdout_on_a_full_device():
    with open("/dev/full", "w") as full:
        proc = _cli(full)
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr
    assert "cannot write to stdout: No space left on device" in one_error_line(stderr)


def test_stdout_closed():
    proc = _cli(None, preexec=lambda: os.close(1))
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr
    assert "cannot write to stdout: it is closed" in one_error_line(stderr)


@pytest.mark.parametrize("args", [("variants", "--wide"), ("--version",)])
def test_stdout_a_pipe_whose_reader_went_away(args):
    """`vgprscope ... | head -1` with a table longer than the pipe holds: the reader is gone when it writes
    (a table through emit, or a print() such as --version's, which click would end with a silent exit 1)."""
    proc = _cli(subprocess.PIPE, args=args)
    proc.stdout.close()  # the reader exits before the table comes
    stderr = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 2, stderr
    assert "cannot write to stdout: the reader closed the pipe" in one_error_line(stderr)


# ---- a directory that does not exist is refused, not made ----

@pytest.mark.parametrize("args", [
    ["analyze", "--variant", "baseline", "--arch", "gfx942", "-o", "{missing}"],
    ["baseline", "save", "--variant", "baseline", "--arch", "gfx942", "--baseline", "{missing}"],
    ["analyze", "--variant", "baseline", "--arch", "gfx942", "--triton", "3.8.0", "--triton", "3.9.0",
     "--plot", "{missing}"],
], ids=["output", "baseline-save", "plot"])
def test_a_missing_directory_is_refused_before_anything_compiles(tmp_path, args):
    """A typo'd directory is refused, not created (as root, under sudo, the file would land where nobody
    looks)."""
    missing = tmp_path / "no" / "such" / "dir" / "x.out"
    done = subprocess.run([sys.executable, "-m", "vgprscope", *(a.format(missing=missing) for a in args)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache"),
                               "VGPRSCOPE_TOOLCHAIN_DIR": str(tmp_path / "tc")})
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr)
    assert f"the directory {missing.parent} does not exist" in line
    assert not (tmp_path / "no").exists() and not (tmp_path / "cache").exists()


# ---- stderr closed, stdout in an encoding without the table's marks ----

def _check(tmp_path, *args: str, cold: bool = True, **kw) -> subprocess.CompletedProcess:
    """``vgprscope check`` of the committed baseline's gfx942 entries: compiled on a cold cache of the test's own
    (the compile workers and the progress run with the stream as the test left it), or (``cold=False``) read from
    the session's cache where only what is printed matters."""
    root = Path(__file__).resolve().parents[2]
    cache = {"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")} if cold else {}
    return subprocess.run([sys.executable, "-m", "vgprscope", "check", "--variant", "baseline", "--arch", "gfx942",
                           *args], stdout=subprocess.PIPE, text=True, timeout=600, cwd=root,
                          env={**os.environ, **cache, **kw.pop("env", {})}, **kw)


@pytest.mark.parametrize("to_file", [False, True], ids=["stdout", "output"])
def test_check_with_stderr_closed_writes_its_output_and_exits_by_its_verdict(tmp_path, to_file):
    """`vgprscope check 2>&-` exited 1 and wrote nothing, with -o too: output must not depend on stderr."""
    out = tmp_path / "check.txt"
    done = _check(tmp_path, *(["-o", str(out)] if to_file else []), preexec_fn=lambda: os.close(2))
    assert done.returncode == 0
    text = out.read_text() if to_file else done.stdout
    assert "vgprscope check" in text and "baseline" in text


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_check_on_a_stdout_without_the_marks_degrades_them_to_ascii(tmp_path, encoding):
    """`PYTHONIOENCODING=latin-1 vgprscope check` was a UnicodeEncodeError traceback: the marks (✓ ✗, the
    rules) become ASCII look-alikes, each one character, so the columns keep their widths."""
    done = _check(tmp_path, stderr=subprocess.PIPE, encoding=encoding, cold=False,
                  env={"PYTHONIOENCODING": encoding, "PYTHONUTF8": "0"})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "vgprscope check" in done.stdout
    done.stdout.encode(encoding)  # nothing the encoding lacks
    utf8 = _check(tmp_path, stderr=subprocess.PIPE, cold=False, env={"PYTHONIOENCODING": "utf-8"})
    assert [len(ln) for ln in done.stdout.splitlines()] == [len(ln) for ln in utf8.stdout.splitlines()]
    assert any(not ch.isascii() for ch in utf8.stdout)  # the marks the other encodings lack


def test_the_ascii_marks_are_one_character_each():
    from vgprscope.cli.common import ascii_marks

    assert ascii_marks("274 (+4 ✗) ─┼─ 3 ± 1 Δ ✓ é", "ascii") == "274 (+4 X) -+- 3 ~ 1 d v ?"
    assert ascii_marks("3 ± 1 ✓ é", "latin-1") == "3 ± 1 v é"


# ---- issue 35 item 12: the message names the real cause ----

def test_a_cache_on_a_read_only_mount_says_read_only_not_missing(tmp_path):
    """A compile cache that cannot be made on a read-only mount: the warning says read-only, not "the directory
    does not exist; create it first" (there is nothing to create it on)."""
    from tests.compile.test_toolchains import _in_read_only, _read_only

    ro = _read_only(tmp_path)
    done = _in_read_only(ro, "analyze", "--variant", "baseline", "--arch", "gfx942", "--block-m", "64",
                         "--block-n", "32", "--head-dim", "64", env={"VGPRSCOPE_CACHE_DIR": str(ro / "cache")})
    assert done.returncode == 0, done.stderr
    warning = [ln for ln in done.stderr.splitlines() if "compile cache" in ln]
    assert len(warning) == 1 and "read-only file system" in warning[0], done.stderr
    assert "does not exist" not in warning[0] and "create it first" not in warning[0]


@pytest.mark.parametrize("flag, words", [("+i", "the file is immutable"), ("+a", "the file is append-only")])
def test_an_immutable_output_file_says_so_not_permission_in_its_directory(tmp_path, flag, words):
    import shutil

    out = tmp_path / "regs.sarif"
    out.write_text("previous")
    if shutil.which("chattr") is None or subprocess.run(["chattr", flag, str(out)], capture_output=True).returncode:
        pytest.skip("chattr cannot set inode flags here")
    try:
        with pytest.raises(OutputError) as err:
            check_writable(out)
        assert words in str(err.value) and "permission to write in" not in str(err.value)
        with pytest.raises(OutputError) as err:
            atomic_write(out, "new")
        assert words in str(err.value)
    finally:
        subprocess.run(["chattr", "-" + flag[1], str(out)], check=True)
    assert out.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["regs.sarif"]


def test_a_kernel_file_that_is_not_utf8_is_said_so(tmp_path):
    """Triton reads a kernel's source as UTF-8: a latin-1 byte in its file was 'ValueError: OSError: could not
    get source code'; the row (and the one stderr line) names the file, the byte and its line."""
    (tmp_path / "ops.py").write_bytes(b"# caf\xe9\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                                      b"def scale(x, out, n, BLOCK: tl.constexpr):\n"
                                      b"    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                                      b"    tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)\n")
    (tmp_path / "run.py").write_text("import torch\nfrom ops import scale\nx = torch.ones(64)\n"
                                     "scale[(1,)](x, torch.empty_like(x), 64, BLOCK=64)\n")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    cap = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", "cap.json", "--", sys.executable,
                          "run.py"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert cap.returncode == 0, cap.stderr
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", "--capture", "cap.json", "--arch", "gfx942"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    line = one_error_line(done.stderr)
    assert done.returncode == 1
    assert "ops.py is not UTF-8 text (byte 0xe9 on line 1)" in line and "could not get source code" not in line
