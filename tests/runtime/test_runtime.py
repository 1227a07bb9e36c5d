"""The runtime (``vgprscope/runtime``): what runs where vgprscope is not installed, a user's process (the capture
hook) and another Triton release's Python (the compile worker).

- It imports only itself (relatively), Triton and the standard library, and it is the only code of
  vgprscope that the capture's boot and a toolchain's worker load, as a package (read statically, and from
  what the processes import).
- A launch is written as facts once and a constexpr encoded once: a ``@triton.jit`` function passed as a
  constexpr (an activation, as Liger and FLA pass them) captured from a launch and planned from a kernel
  directory is one job and one cache entry; the integer types' bounds are one table.
- The interpreter's fixes are one set: a bf16 ``tl.dot`` captured under ``TRITON_INTERPRET=1`` computes the
  right product.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from capture_helpers import cli

from vgprscope import runtime
from vgprscope.captures.model import load_capture
from vgprscope.captures.run import capture_env
from vgprscope.compile.cache import CompileCache
from vgprscope.compile.engine import Engine
from vgprscope.core.archs import get_arch
from vgprscope.flashattn.config import ConfigRequest
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import load_variants, resolve_config
from vgprscope.sources.capture import capture_tasks

PKG = Path(__file__).resolve().parents[2] / "vgprscope"
RUNTIME = PKG / "runtime"
BOOT = RUNTIME / "boot"
MAX_LINES = 600
# Triton's interpreter needs numpy (its own dependency); the fixes for it import numpy, nothing else does.
NUMPY_HOMES = {"interp.py"}


def runtime_files() -> list[Path]:
    return sorted(RUNTIME.rglob("*.py"))


def foreign_imports(file: Path) -> list[str]:
    """Each import of a runtime module that is neither of its own package (``from . import x``, ``from .x
    import y``), Triton, nor the standard library (numpy: the interpreter fixes alone)."""
    tree = ast.parse(file.read_text(), str(file))
    allowed = set(sys.stdlib_module_names) | {"triton"} | ({"numpy"} if file.name in NUMPY_HOMES else set())
    if file.parent.name == "boot" or file.name == "__main__.py":
        allowed.add("_vgprscope_boot")  # the boot's loader (on sys.path where the runtime is no package yet)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and file.parent.name != "boot":
                continue
            name = "." * node.level + (node.module or "")
            if node.level or name.split(".")[0] not in allowed:
                out.append(f"{file.name}:{node.lineno} from {name} import ...")
        elif isinstance(node, ast.Import):
            out += [f"{file.name}:{node.lineno} import {a.name}" for a in node.names
                    if a.name.split(".")[0] not in allowed]
    return out


@pytest.mark.parametrize("file", runtime_files(), ids=lambda f: str(f.relative_to(RUNTIME)))
def test_the_runtime_imports_only_itself_triton_and_the_standard_library(file):
    assert foreign_imports(file) == []
    assert len(file.read_text().splitlines()) <= MAX_LINES


def test_the_import_walk_sees_what_it_is_for(tmp_path):
    """The walk fails on each way out of the runtime: vgprscope absolutely or relatively above the package,
    a third-party package, numpy outside the interpreter's fixes; its own modules, Triton and the standard
    library pass."""
    (tmp_path / "boot").mkdir()
    bad = ["from ..errors import UsageError", "import vgprscope.records", "from vgprscope.compile import engine",
           "def f():\n    import torch", "import numpy as np", "from .. import archs"]
    for text in bad:
        f = tmp_path / "mod.py"
        f.write_text(text + "\n")
        assert len(foreign_imports(f)) == 1, text
    fine = tmp_path / "fine.py"
    fine.write_text("from . import facts\nfrom .loader import is_jit\nimport json, os.path\nimport triton.language\n")
    assert foreign_imports(fine) == []
    boot = tmp_path / "boot" / "sitecustomize.py"
    boot.write_text("from . import hook\n")  # the boot is no module of the package: it loads the package
    assert len(foreign_imports(boot)) == 1


def _loads_by_path() -> list[str]:
    """The package's files that load a Python file by its path (``spec_from_file_location``, ``run_path``,
    ``SourceFileLoader``)."""
    out = []
    for f in sorted(PKG.rglob("*.py")):
        text = f.read_text()
        if any(w in text for w in ("spec_from_file_location", "run_path(", "SourceFileLoader")):
            out.append(f.relative_to(PKG).as_posix())
    return out


def test_no_code_of_vgprscope_is_loaded_by_path():
    """Only users' files are loaded by path (their kernels, kernel directories, the sitecustomize the boot
    shadows); the runtime package by the boot's loader, as a package."""
    assert _loads_by_path() == ["flashattn/loader.py", "runtime/boot/_vgprscope_boot.py",
                                "runtime/boot/sitecustomize.py", "runtime/loader.py"]


def _imported(command: list[str], env: dict[str, str], stdin: str | None = None) -> set[str]:
    """The modules a Python command imports, named by ``-X importtime`` on its stderr."""
    done = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True,
                          env=env, timeout=300, cwd="/", input=stdin)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def _ours(names: set[str]) -> list[str]:
    """The modules of vgprscope among ``names`` but the runtime's and its loader's (the finder of an editable
    install, which site runs in every process of its environment, is no code of vgprscope)."""
    return sorted(n for n in names if "vgprscope" in n and n != "_vgprscope_boot"
                  and n.split(".")[0] != "_vgprscope_runtime" and not n.startswith("__editable__"))


def test_the_capture_boot_loads_the_runtime_alone_as_a_package(tmp_path):
    """A process ``vgprscope capture`` starts (its environment: the boot first on PYTHONPATH) installs the hook
    from the runtime package, loaded as ``_vgprscope_runtime``, and imports no other module of vgprscope."""
    env = capture_env(tmp_path)
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(BOOT)
    assert sorted(p.name for p in BOOT.glob("*.py")) == ["_vgprscope_boot.py", "sitecustomize.py"]
    code = ("import sys; h = sys.modules['_vgprscope_runtime.hook']; h.install\n"
            "print(h.__file__, h.DIR_ENV in __import__('os').environ)\n"
            "print(*sorted(n for n in sys.modules if 'vgprscope' in n))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    first, modules = done.stdout.splitlines()
    assert first.split() == [str(RUNTIME / "hook.py"), "True"]
    assert {"_vgprscope_runtime", "_vgprscope_runtime.hook", "_vgprscope_runtime.record"} <= set(modules.split())
    assert _ours(set(modules.split())) == []


def test_a_toolchain_worker_loads_the_runtime_alone_as_a_package():
    """A toolchain's compile worker is the runtime directory run by another Python; it loads that directory as
    the package ``_vgprscope_runtime`` and no other module of vgprscope (here: the probe every toolchain
    answers first, then a plan and a compile request served)."""
    command = runtime.worker_command(sys.executable, "--version")
    assert command == [sys.executable, str(RUNTIME), "--version"]
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": ""}
    names = _imported(command, env)
    # (the modules the loader imports by name are not timed, those they import are)
    assert "_vgprscope_runtime.protocol" in names and _ours(names) == []
    # compiling and planning load with the first request that needs them, from the same package
    served = _imported(runtime.worker_command(sys.executable, "--serve"), env,
                       stdin='{"op": "plan", "id": 1}\n{"op": "compile", "id": 2, "job": {}}\n')
    assert {"_vgprscope_runtime.compile", "_vgprscope_runtime.plan", "_vgprscope_runtime.protocol"} <= served
    assert _ours(served) == []


# ---- one launch, one job ------------------------------------------------------------------------------

ACT = '''
import triton
import triton.language as tl


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)
'''

KERNEL = '''
import triton
import triton.language as tl

from ._act import relu

VARIANT = {"name": "act", "strategy": "an activation passed as a constexpr", "seed": "-", "trades": "-",
           "kernels": ["act_fwd"], "defaults": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 1}}


@triton.jit
def act_fwd(X, Y, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < n, other=0.0)
    tl.store(Y + i, ACT(x), mask=i < n)


def check_config(cfg):
    return None


def kernel_specs(cfg):
    return [{"name": "act_fwd", "fn": act_fwd, "args": {"X": "*fp32", "Y": "*fp32", "n": 1024},
             "constexprs": {"ACT": relu, "BLOCK": 128}}]
'''

LAUNCH = '''
import sys
sys.path.insert(0, {root!r})
import torch
from kd._act import relu
from kd.act import act_fwd

x = torch.randn(1024)
y = torch.empty_like(x)
act_fwd[(8,)](x, y, 1024, ACT=relu, BLOCK=128, num_warps=4, num_stages=1)
assert torch.equal(y, x.clamp(min=0))
print("launched")
'''


def test_a_jit_function_constexpr_captured_and_planned_is_one_job_and_one_cache_entry(tmp_path):
    """An activation passed as a constexpr, launched by the user's code and planned from the same kernel
    directory: the same CompileJob (key included), and the second compile is the first's cache entry."""
    kd = tmp_path / "kd"
    kd.mkdir()
    (kd / "__init__.py").write_text("")
    (kd / "_act.py").write_text(ACT)
    (kd / "act.py").write_text(KERNEL)
    (tmp_path / "launch.py").write_text(LAUNCH.format(root=str(tmp_path)))
    out = tmp_path / "cap.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, str(tmp_path / "launch.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0 and "launched" in done.stdout, done.stderr

    a = get_arch("gfx942")
    load_variants.cache_clear()
    v = load_variants(kd.resolve())["act"]
    engine = Engine(1, CompileCache(tmp_path / "cache"))
    (planned,) = variant_tasks([(v, resolve_config(v, a, ConfigRequest()), a, "")], engine)
    (captured,) = capture_tasks(load_capture(out), [a], engine)
    act = {x.name: x for x in captured.job.args}["ACT"]
    assert act.value == {"jit": {"file": str((kd / "_act.py").resolve()), "qualname": "relu"}}
    assert captured.job == planned.job and captured.job.key() == planned.job.key()
    first, second = engine.compile([planned]), engine.compile([captured])
    assert first[0].ok, first[0].status
    assert not first[0].cached and second[0].cached  # one cache entry, shared
    assert first[0].usage == second[0].usage


def test_a_jit_constexpr_is_found_by_its_file_wherever_it_was_imported_from(tmp_path, monkeypatch):
    """A JIT function named by file and qualified name is the one its module defines: from a module already
    loaded, or imported by the name this Python's path gives its file (the kernel's module need not import
    it); the encoding written before (``module:qualname``) still reads."""
    from vgprscope.runtime import constexpr

    pkg = tmp_path / "acts_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "acts.py").write_text(ACT)
    monkeypatch.syspath_prepend(str(tmp_path))
    ref = {"jit": {"file": str((pkg / "acts.py").resolve()), "qualname": "relu"}}
    fn = constexpr.decode(ref)
    assert fn.fn.__module__ == "acts_pkg.acts" and fn.fn.__qualname__ == "relu"
    assert constexpr.encode(fn) == ref and constexpr.decode(ref) is fn
    assert constexpr.decode({"jit": "acts_pkg.acts:relu"}) is fn


def test_the_integer_types_bounds_are_one_table():
    """A launch's integer is typed by one rule, whichever side writes its facts: a variant's example value
    (planning), a captured launch (the hook) and a default or heuristic's value (derivation) agree at
    every bound, Triton's own (i32 to 2**31 - 1, i64 from -2**63, u64 above 2**63 - 1)."""
    from vgprscope.runtime import derive, facts

    cases = {-(2**63) - 1: "u64", -(2**63): "i64", -(2**31) - 1: "i64", -(2**31): "i32", 2**31 - 1: "i32",
             2**31: "i64", 2**63 - 1: "i64", 2**63: "u64"}
    for value, typ in cases.items():
        planned = facts.example_fact("n", value)
        captured, why = facts.launch_fact("n", False, value, "i32")
        derived = derive._value_fact("n", value)
        assert why is None and planned == captured == derived and planned["type"] == typ, value
    # the bounds are written once: no other module of the runtime spells them
    for f in runtime_files():
        if f.name != "facts.py":
            text = f.read_text().replace(" ", "")
            assert not any(b in text for b in ("2**63", "2**31", "1<<63", "1<<31")), f.name


# ---- one set of interpreter fixes ---------------------------------------------------------------------

BF16_DOT = '''
import torch
import triton
import triton.language as tl


@triton.jit
def mm(A, B, C, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(A + r[:, None] * N + r[None, :])
    b = tl.load(B + r[:, None] * N + r[None, :])
    tl.store(C + r[:, None] * N + r[None, :], tl.dot(a, b))


torch.manual_seed(0)
a, b = (torch.randn(16, 16, dtype=torch.bfloat16) for _ in range(2))
c = torch.empty(16, 16)
mm[(1,)](a, b, c, N=16)
print("error", (c - a.float() @ b.float()).abs().max().item())
'''


def test_a_bf16_kernel_captured_under_the_interpreter_gets_the_bf16_fix(tmp_path):
    """Triton's interpreter multiplies bf16 operands as their raw bits; the capture hook applies the same fix
    as ``vgprscope.attention`` on the CPU, so the user's command computes the right product under capture."""
    script = tmp_path / "mm.py"
    script.write_text(BF16_DOT)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert float(plain.stdout.split()[-1]) > 1.0  # the interpreter alone: the integers' product
    done = cli("capture", "-o", str(tmp_path / "cap.json"), "--", sys.executable, str(script),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) < 1e-3, done.stdout
    (kernel,) = load_capture(tmp_path / "cap.json").kernels
    assert kernel.qualname == "mm"


def test_the_interpreter_fixes_mark_what_they_replaced():
    """Two copies of the runtime in one process (the CLI's boot and the library) fix the interpreter once."""
    pytest.importorskip("numpy")
    from triton.runtime import interpreter

    from vgprscope.runtime import interp

    replaced: list[str] = []

    def record(owner, name, value):
        replaced.append(name)
        setattr(owner, name, value)

    saved = interpreter.InterpreterBuilder.create_dot, interpreter._implicit_cvt
    try:
        for _ in range(2):
            interp.patch_bf16_dot(interpreter, record)
            interp.fix_float_args(interpreter, record)
        assert replaced.count("create_dot") <= 1 and replaced.count("_implicit_cvt") <= 1
    finally:
        interpreter.InterpreterBuilder.create_dot, interpreter._implicit_cvt = saved


_REDUCING_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def row_max(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for b in range(tl.cdiv(n, BLOCK)):
        acc = tl.maximum(acc, tl.load(X + b * BLOCK + offs, mask=b * BLOCK + offs < n, other=0.0))
    tl.store(Y, tl.max(acc, axis=0))
"""

_RUN_THEN_GLUON = """
import sys
import torch
import triton.language as tl
from vgprscope.runtime.interp import fix_interpreter

fix_interpreter()
import reducing

before = {name: value for name, value in vars(tl.core).items() if tl.core.is_builtin(value)}
x, y = torch.arange(100, dtype=torch.float32), torch.zeros(1)
reducing.row_max[(1,)](x, y, 100, BLOCK=32)
assert y.item() == 99.0, y
changed = sorted(name for name in before if vars(tl.core)[name] is not before[name])
from triton.experimental.gluon import language as gl
bound = sorted(n for n, v in vars(gl).items() if getattr(v, "__module__", "") == "triton.runtime.interpreter")
print(changed, bound)
"""


def test_a_kernel_run_under_the_interpreter_leaves_the_language_as_it_found_it(tmp_path):
    """In a fresh process (what a first launch imports is the point): tl.cdiv, tl.zeros and tl.max are @jit
    helpers whose module sees ``triton.language.core``, and the interpreter restored none of the builtins they
    patched; Triton imports Gluon's language inside a kernel's first launch, where Gluon kept the interpreter's
    builtins, and every later Gluon compile in the process failed ("'value' object has no attribute 'dtype'")."""
    (tmp_path / "reducing.py").write_text(_REDUCING_KERNEL)
    done = subprocess.run([sys.executable, "-c", _RUN_THEN_GLUON], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "[] []"


def test_the_worker_runs_by_its_package_name_as_by_its_directory():
    """``python -m vgprscope.runtime`` (where vgprscope is installed) answers as ``python <runtime directory>``
    does: the probe's JSON line, and a usage error as one line with exit 2."""
    import json

    env = {**os.environ, "TRITON_INTERPRET": "0"}
    answers = []
    for command in ([sys.executable, "-m", "vgprscope.runtime"], runtime.worker_command(sys.executable)):
        probe = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=120, env=env)
        assert probe.returncode == 0, probe.stderr
        answers.append(json.loads(probe.stdout.strip().splitlines()[-1]))
        bad = subprocess.run([*command, "--bogus"], capture_output=True, text=True, timeout=120, env=env)
        assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1 and "usage:" in bad.stderr
    assert answers[0] == answers[1] and answers[0]["triton_version"] and answers[0]["protocol"] == 1
