"""Where CI's test run spends its CPU: CI's own pytest command, every process and compile of it accounted, written
into reports/ci-time.md.

    python scripts/profile_ci_tests.py [--seed 12345] [--ci-log CI_OUTPUT] [--out reports/ci-time.md] [-- PYTEST_ARGS]

It runs `.ci/run`'s pytest line (two workers, random order with ``--seed``, ``-m "not exhaustive"``) from this
checkout with an empty compile cache and toolchain store, as CI does, under a child subreaper, so that the run's CPU
time is that of every process it started. For the run, a ``.pth`` file in the environment's site-packages (removed
after, however the run ends; inert once its directory is gone) makes each Python process of the environment that
descends from the run write one line as it exits (its own CPU time, its command, whether it imported torch) and
one per compile job (the job's CPU time, its compiler tools included). A process of another environment (a fresh
virtual environment, another Triton release's worker) writes nothing: its CPU time is in its parent's
"unrecorded children".

With ``--ci-log`` (what `bash .ci/run` printed), the report adds the budget: 10 minutes less the other steps'
times, as many cores as the run's CPU time kept busy, against what the run needs. PYTEST_ARGS replace the test
selection (a file or a ``-k``), for a partial run.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _speed import ROOT, write_section  # noqa: E402

OUT = ROOT / "reports" / "ci-time.md"
PTH = "_vgprscope_ci_profile_"
# CI's time limit (the "done when") and the pytest line of .ci/run
CI_LIMIT_S = 600
# Run as ``python -c REAPER ROOT_FILE CMD...``: the command as a child of a subreaper that reaps every process as it ends,
# as init does (a test waits for an orphan it killed to be gone), so that RUSAGE_CHILDREN is the CPU time of the
# whole tree; printed last on stderr as JSON.
REAPER = r"""
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
with open(sys.argv[1], "w") as f:  # the root the hooked processes look for among their ancestors
    f.write(str(os.getpid()))
t0 = time.perf_counter()
main = subprocess.Popen(sys.argv[2:], stdout=sys.stdout, stderr=sys.stderr)
rc = wall = None
while True:
    try:
        pid, status, _ = os.wait4(-1, 0)
    except ChildProcessError:
        break
    if pid == main.pid:
        rc, wall = os.waitstatus_to_exitcode(status), time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("\n" + json.dumps({"rc": rc, "wall": wall, "cpu": r.ru_utime + r.ru_stime}), file=sys.stderr)
"""
PYTEST = ["-m", "pytest", "-q", "-n", "2", "-p", "randomly", "--dist", "worksteal", "-m", "not exhaustive"]

# Run by the .pth in each Python process of the environment while its file is there (``_HERE``: its directory, with
# the log and the root's pid). A forked worker leaves
# through os._exit (no atexit): the fork handler wraps it. The compile module of the runtime (the installed
# package's, or another interpreter's copy loaded by the runtime's boot) has its compile_job wrapped as it loads.
HOOK = r'''
import os, sys, atexit


def _cpu(who):
    import resource
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _mine():
    """Whether this process descends from the run's root (the subreaper): another process of the environment
    that starts while the .pth is there (a test session beside the run) writes nothing."""
    pid = os.getpid()
    if pid not in _mine_of:
        try:
            with open(os.path.join(_HERE, "root")) as f:
                root = int(f.read())
        except (OSError, ValueError):
            return False
        _mine_of[pid], walk = False, pid
        for _ in range(64):
            if walk == root:
                _mine_of[pid] = True
                break
            try:
                with open(f"/proc/{walk}/stat") as f:
                    walk = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
            if walk <= 1:
                break
    return _mine_of[pid]


def _write(rec):
    if not _mine():
        return
    import json
    rec["pid"] = os.getpid()
    fd = os.open(_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(rec) + "\n").encode())
    finally:
        os.close(fd)


def _exit():
    if _state["pid"] != os.getpid() or _state["done"]:
        return
    _state["done"] = True
    import resource
    mp = sys.modules.get("multiprocessing")
    role = "mp" if mp is not None and mp.parent_process() is not None else ""
    _write({"kind": "process", "ppid": os.getppid(), "argv": [str(a)[-120:] for a in sys.argv[:4]],
            "self": _cpu(resource.RUSAGE_SELF), "children": _cpu(resource.RUSAGE_CHILDREN),
            "torch": "torch" in sys.modules, "role": role})


def _exit_now(code):
    try:
        _exit()
    finally:
        _real_exit(code)


def _after_fork():
    _state.update(pid=os.getpid(), done=False)
    os._exit = _exit_now


def _name(pid):
    """A child's command as it runs (its program, and the script or module a Python runs), else its name."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        if argv:
            return _argv_name(argv)
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat[stat.index("(") + 1:stat.rindex(")")]
    except (OSError, ValueError):
        return "?"


def _argv_name(argv):
    head = os.path.basename(str(argv[0]))
    if head.startswith("python") and len(argv) > 1:
        if argv[1] == "-c":
            head += " -c"
        elif argv[1] == "-m" and len(argv) > 2:
            head += " -m " + str(argv[2])
        else:
            head += " " + os.path.basename(str(argv[1]).rstrip("/"))
    return head


def _tap(subprocess):
    """Popen remembers each child's command as it starts (it may be gone by the time it is reaped)."""
    real = subprocess.Popen._execute_child

    def _execute_child(self, args, *rest, **kwargs):
        real(self, args, *rest, **kwargs)
        try:
            _names[self.pid] = "shell" if isinstance(args, (str, bytes)) else _argv_name(list(args))
        except Exception:
            pass

    subprocess.Popen._execute_child = _execute_child


def _waitpid(pid, options):
    """os.waitpid, through wait4: a child reaped here is written with its CPU time (its own waited-for
    descendants' included), for the report's account of what no record of its own holds."""
    name = _names.get(pid) or (_name(pid) if pid > 0 else "?")
    got, status, usage = os.wait4(pid, options)
    if got > 0:
        name = _names.pop(got, None) or name
        _write({"kind": "child", "child": got, "name": name, "in_job": _in_job[0] > 0,
                "cpu": usage.ru_utime + usage.ru_stime})
    return got, status


def _wrap(module):
    inner = module.compile_job

    def compile_job(job, *args, **kwargs):
        import resource
        import time
        s0, c0, t0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
        out = None
        _in_job[0] += 1
        try:
            out = inner(job, *args, **kwargs)
            return out
        finally:
            _in_job[0] -= 1
            import hashlib
            import json
            target = job.get("target") or {}
            _write({"kind": "compile", "self": _cpu(resource.RUSAGE_SELF) - s0,
                    "children": _cpu(resource.RUSAGE_CHILDREN) - c0, "wall": time.perf_counter() - t0,
                    "stored": "stored" in (job.get("source") or {}), "error": bool(out and "error" in out),
                    "arch": str(target.get("arch", "?")),
                    "job": hashlib.md5(json.dumps(job, sort_keys=True, default=str).encode()).hexdigest()})

    module.compile_job = compile_job


class _Loader:
    """The loader a finder gave, the module's compile_job wrapped once it has run."""

    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        self.real.exec_module(module)
        if module.__name__ == "subprocess":
            _tap(module)
        elif hasattr(module, "compile_job"):
            _wrap(module)

    def __getattr__(self, name):
        return getattr(self.real, name)


class _Finder:
    """First on sys.meta_path (pytest puts its assertion rewriter there, and rewrites the modules of a package
    with a pytest plugin, vgprscope's: this finder moves back in front at the next import it sees), asking the
    others for the compile module's spec."""

    def find_spec(self, name, path=None, target=None):
        if sys.meta_path and sys.meta_path[0] is not self:
            sys.meta_path.remove(self)
            sys.meta_path.insert(0, self)
        if not (name.endswith(".runtime.compile") or name in ("_vgprscope_runtime.compile", "subprocess")):
            return None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _Loader(spec.loader)
            return spec
        return None


# a venv's site-packages is read twice where lib64 links to lib: the hook is set up once per process, and only in
# a process of the run (another process of the environment starting meanwhile is left as it is)
_mine_of = {}
if not hasattr(sys, "_vgprscope_ci_profile") and _mine():
    sys._vgprscope_ci_profile = True
    _log = os.path.join(_HERE, "records.jsonl")
    _in_job = [0]
    _names = {}
    os.waitpid = _waitpid
    if "subprocess" in sys.modules:
        _tap(sys.modules["subprocess"])
    _state = {"pid": os.getpid(), "done": False}
    _real_exit = os._exit
    atexit.register(_exit)
    os.register_at_fork(after_in_child=_after_fork)
    sys.meta_path.insert(0, _Finder())
'''


def _purelib(python: str) -> Path:
    out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, cwd="/")
    return Path(out.stdout.strip())


def _stop_on_term(*_: Any) -> None:
    raise KeyboardInterrupt  # the .pth comes out in the finally below


def run(python: str, seed: int, pytest_args: list[str], log: Path) -> dict[str, Any]:
    """CI's pytest command under the accounting; its wall and CPU time, its summary line."""
    hook = log.parent / "hook.py"
    hook.write_text(HOOK)
    pth = _purelib(python) / f"{PTH}{os.getpid()}.pth"  # a run inside a run (this script's test) has its own
    pth.write_text(f"import os; exec(compile(open({str(hook)!r}).read(), {str(hook)!r}, 'exec'), "
                   f"{{'__name__': '_vgprscope_ci_profile', '_HERE': {str(log.parent)!r}}}) "
                   f"if os.path.exists({str(hook)!r}) else None\n")
    with tempfile.TemporaryDirectory(prefix="vgprscope-ci-cache-") as cache, \
            tempfile.TemporaryDirectory(prefix="vgprscope-ci-toolchains-") as store:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "TRITON_INTERPRET")} | {
            "VGPRSCOPE_CACHE_DIR": cache, "VGPRSCOPE_TOOLCHAIN_DIR": store,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        cmd = [python, *PYTEST, f"--randomly-seed={seed}", *pytest_args]
        previous = signal.signal(signal.SIGTERM, _stop_on_term)
        try:
            with subprocess.Popen([sys.executable, "-c", REAPER, str(log.parent / "root"), *cmd], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT) as proc:
                stdout, stderr = proc.communicate()
        finally:
            pth.unlink(missing_ok=True)
            signal.signal(signal.SIGTERM, previous)
    try:
        figures = json.loads(stderr.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"the test run was not measured (exit {proc.returncode}):\n{stderr[-3000:]}") from None
    (log.parent / "pytest.txt").write_text(stdout)
    summary = [ln for ln in stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    failed = [ln.split()[1] for ln in stdout.splitlines() if ln.startswith(("FAILED ", "ERROR "))]
    return figures | {"wrapper": proc.pid, "summary": summary[-1].strip("= ") if summary else "no summary line",
                      "failed": failed,
                      "command": shlex.join(["python", *PYTEST, f"--randomly-seed={seed}", *pytest_args])}


def _kind(rec: dict[str, Any], controller: int | None) -> str:
    argv = " ".join(rec["argv"])
    if rec["ppid"] == controller and rec["argv"] == ["-c"]:  # execnet's bootstrap
        return "pytest workers (the tests' own work, in-process compiles aside)"
    if rec["role"] == "mp" or "--serve" in argv:
        return "compile workers, outside their jobs (start-up, imports)"
    if re.search(r"vgprscope/__main__\.py|bin/vgprscope$", rec["argv"][0] if rec["argv"] else ""):
        return "vgprscope commands (CLI processes)"
    if rec["torch"]:
        return "scripts that import torch (users' programs, examples)"
    if "pytest" in argv:
        return "nested pytest runs (the plugin's, the examples')"
    return "other Python processes (pip, venv, tools)"


def analyse(log: Path, figures: dict[str, Any]) -> dict[str, Any]:
    """The log's records -> the report's figures."""
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    procs = [r for r in recs if r["kind"] == "process" and r["pid"] != figures["wrapper"]]
    jobs = [r for r in recs if r["kind"] == "compile"]
    # the command's own process (a process whose parent ended is the subreaper's too)
    controller = next((p["pid"] for p in procs if p["ppid"] == figures["wrapper"] and p["argv"]
                       and p["argv"][0].endswith(os.path.join("pytest", "__main__.py"))), None)
    job_cpu: collections.Counter[int] = collections.Counter()
    for j in jobs:
        job_cpu[j["pid"]] += j["self"]  # the compiler's tools (ptxas, nvdisasm) are the process's children
    seen: set[str] = set()
    fresh = repeated = stored = tools = 0.0
    fresh_n = repeated_n = stored_n = 0
    by_arch: collections.Counter[str] = collections.Counter()
    for j in jobs:
        cpu = j["self"] + j["children"]
        tools += j["children"]
        if j["stored"]:
            stored, stored_n = stored + cpu, stored_n + 1
        elif j["job"] in seen:
            repeated, repeated_n = repeated + cpu, repeated_n + 1
        else:
            seen.add(j["job"])
            fresh, fresh_n = fresh + cpu, fresh_n + 1
            by_arch[j["arch"] if not j["arch"].isdigit() else f"sm_{j['arch']}"] += cpu
    job_tools: collections.Counter[int] = collections.Counter()
    for j in jobs:
        job_tools[j["pid"]] += j["children"]
    recorded_children: collections.Counter[int] = collections.Counter()
    for p in procs:
        recorded_children[p["ppid"]] += p["self"] + p["children"]
    kinds: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    unrecorded: collections.Counter[str] = collections.Counter()
    for p in procs:
        kind = "pytest's controller" if p["pid"] == controller else _kind(p, controller)
        kinds[kind] += p["self"] - job_cpu.get(p["pid"], 0.0)  # its compile jobs are the line above
        counts[kind] += 1
        # what its children used that no record holds (a process reaped by its parent counts in the parent's
        # children): other environments' processes, tools run outside a compile job
        unrecorded[kind] += max(0.0, p["children"] - recorded_children[p["pid"]] - job_tools[p["pid"]])
    # the children no record holds, by command: reaped outside a compile job (whose tools are its own line), and
    # not a process that wrote its own record
    recorded = {p["pid"] for p in procs}
    by_name: collections.Counter[str] = collections.Counter()
    for c in recs:
        if c["kind"] == "child" and not c["in_job"] and c["child"] not in recorded:
            by_name[c["name"]] += c["cpu"]
    total = figures["cpu"]
    compile_cpu = fresh + repeated + stored
    attributed = compile_cpu + sum(kinds.values()) + sum(unrecorded.values())
    return {"total": total, "wall": figures["wall"], "fresh": fresh, "fresh_n": fresh_n, "repeated": repeated,
            "repeated_n": repeated_n, "stored": stored, "stored_n": stored_n, "tools": tools,
            "by_arch": by_arch, "kinds": kinds, "counts": counts, "unrecorded": unrecorded, "by_name": by_name,
            "unattributed": max(0.0, total - attributed)}


def ci_steps(path: Path) -> dict[str, float]:
    """`.ci/run`'s step stamps (``== HH:MM:SS name``) -> seconds per step."""
    stamps = []
    for line in path.read_text(errors="replace").splitlines():
        if m := re.match(r"== (\d\d):(\d\d):(\d\d) (.+)$", line.strip()):
            h, mi, s, name = int(m[1]), int(m[2]), int(m[3]), m[4]
            stamps.append((h * 3600 + mi * 60 + s, name))
    steps: dict[str, float] = {}
    for (t0, name), (t1, _) in zip(stamps, stamps[1:]):
        steps[name] = (t1 - t0) % 86400
    return steps


def _s(x: float) -> str:
    return f"{x:,.0f} s"


def report(a: dict[str, Any], figures: dict[str, Any], seed: int, steps: dict[str, float] | None) -> str:
    cores = os.cpu_count() or 1
    busy = a["total"] / a["wall"] if a["wall"] else 0.0
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    compile_cpu = a["fresh"] + a["repeated"] + a["stored"]
    lines = [
        "## Where CI's test run spends its CPU (issue 36)",
        "",
        f"`python scripts/profile_ci_tests.py --seed {seed}` at {commit}, "
        f"{datetime.date.today().isoformat()}, on {cores} cores: `{figures['command']}` with an empty compile "
        f"cache, as `.ci/run` runs it. {figures['summary']}"
        + (f" (failed: {', '.join(f'`{t}`' for t in figures['failed'])})" if figures["failed"] else "") + ".",
        "",
        f"- **Wall time {_s(a['wall'])}, CPU time {_s(a['total'])}** (every process the run started): "
        f"{busy:.2f} cores busy on average of {cores}.",
        f"- **Compile jobs {_s(compile_cpu)}** ({compile_cpu / a['total']:.0%} of the CPU), their compiler tools "
        f"(ptxas, cuobjdump, nvdisasm) included ({_s(a['tools'])} of it):",
        f"  - first compiles of distinct jobs: {a['fresh_n']:,}, {_s(a['fresh'])};",
        f"  - the same jobs compiled again (a test's own empty cache, a killed run, two workers asking at once): "
        f"{a['repeated_n']:,}, {_s(a['repeated'])};",
        f"  - stored binaries read (scan): {a['stored_n']:,}, {_s(a['stored'])}.",
        "",
        "Every other process, by what it is: its own CPU time (its compile jobs are the line above), and that of "
        "its children that no record holds (a process of another environment: another Triton release's compile "
        "worker, a fresh virtual environment's pip; a tool run outside a compile job: Chromium, nvdisasm for the "
        "loop figures read later, git).",
        "",
        "| what | processes | own CPU | unrecorded children |",
        "|---|---:|---:|---:|",
        f"| compile jobs (above) | | {_s(compile_cpu)} | |",
    ]
    for kind, cpu in sorted(a["kinds"].items(), key=lambda kv: -(kv[1] + a["unrecorded"][kv[0]])):
        lines.append(f"| {kind} | {a['counts'][kind]:,} | {_s(cpu)} | {_s(a['unrecorded'][kind])} |")
    lines += [f"| not attributed (a process whose parent did not wait for it, a killed one) | | "
              f"{_s(a['unattributed'])} | |", ""]
    named = sorted(a["by_name"].items(), key=lambda kv: -kv[1])
    lines += ["The unrecorded children, by command (their own waited-for children included; the largest): "
              + ", ".join(f"`{name}` {_s(cpu)}" for name, cpu in named[:12]) + ".", ""]
    lines += ["The distinct jobs' CPU by arch: " + ", ".join(
        f"{arch} {_s(cpu)}" for arch, cpu in sorted(a["by_arch"].items(), key=lambda kv: -kv[1])) + "."]
    if steps:
        other = sum(v for k, v in steps.items() if k != "pytest")
        allowance = CI_LIMIT_S - other
        lines += [
            "", f"**The budget** (the CI log given): the other steps took {_s(other)} ("
            + ", ".join(f"{k} {_s(v)}" for k, v in steps.items() if k != "pytest")
            + f"), so pytest has {_s(allowance)} of CI's {CI_LIMIT_S // 60} minutes; at this run's {busy:.2f} busy "
            f"cores that holds {_s(allowance * busy)} of CPU. The distinct compile jobs alone take "
            f"{_s(a['fresh'])}, the whole run {_s(a['total'])}: "
            + (f"{a['total'] / max(allowance * busy, 1):.1f} times the budget." if allowance > 0
               else "the other steps alone are over the limit.")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pytest_args: list[str] = []
    if "--" in args:
        i = args.index("--")
        args, pytest_args = args[:i], args[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=12345, help="pytest-randomly's seed (CI prints its own)")
    ap.add_argument("--python", default=sys.executable, help="the environment's interpreter (this one)")
    ap.add_argument("--ci-log", type=Path, help="what `bash .ci/run` printed: its steps' times for the budget")
    ap.add_argument("--out", type=Path, default=OUT, help="the report (its section is replaced)")
    ap.add_argument("--log", type=Path, help="keep the raw records here (one JSON line each)")
    opts = ap.parse_args(args)
    if opts.ci_log is not None and not opts.ci_log.is_file():
        ap.error(f"--ci-log {opts.ci_log}: no such file")
    with tempfile.TemporaryDirectory(prefix="vgprscope-ci-profile-") as tmp:
        log = Path(tmp) / "records.jsonl"
        figures = run(opts.python, opts.seed, pytest_args, log)
        if not log.exists():
            raise SystemExit("no process wrote a record: the environment's site-packages did not load the .pth")
        if opts.log:
            opts.log.write_bytes(log.read_bytes())
            opts.log.with_suffix(".pytest.txt").write_bytes((log.parent / "pytest.txt").read_bytes())
        a = analyse(log, figures)
    text = report(a, figures, opts.seed, ci_steps(opts.ci_log) if opts.ci_log else None)
    write_section("ci-tests", text, out=opts.out)
    print(text)
    return 0 if figures["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
