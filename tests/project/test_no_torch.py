"""The register gate runs where torch is not installed.

Each command runs in a subprocess whose ``sitecustomize`` (first on PYTHONPATH) puts a finder on
``sys.meta_path`` that refuses ``torch``: ``import torch`` raises ModuleNotFoundError there, as in an
environment installed without the ``bench`` extra. Compile workers inherit it (forked, or spawned with
the same PYTHONPATH). The commands that need torch say so in one line naming the extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BLOCKER = '''
import sys

class _NoTorch:
    """No torch here: the environment of `pip install vgprscope` without the bench extra."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoTorch())
'''
SMALL = ["--variant", "baseline", "--block-m", "64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4",
         "--num-stages", "1"]


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("no_torch_site")
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("TRITON_INTERPRET", None)  # an installed gate compiles; it does not interpret
    env["VGPRSCOPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("no_torch_cache"))  # compile for real here
    return env


def vgprscope(env, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vgprscope", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_the_blocker_blocks(env):
    out = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "No module named 'torch'" in out.stderr


def test_bundled_kernel_files_import_without_torch(env):
    code = ("import sys; from vgprscope.flashattn import loader\n"
            "for f in loader.variant_files(loader.BUNDLED_DIR): loader.load_file(loader.BUNDLED_DIR, f.name)\n"
            "import vgprscope.kernels._launch, vgprscope.kernels._fa_common, vgprscope.kernels.reference\n"
            "print(sorted(m.rsplit('.', 1)[-1] for m in sys.modules if m.startswith('vgprscope.kernels.')))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    loaded = set(eval(out.stdout))  # noqa: S307 (our own print of a list of names)
    assert {p.stem for p in (ROOT / "kernels").glob("*.py") if p.stem != "__init__"} <= loaded


def test_analyze_compiles_for_amd_and_nvidia_without_torch(env):
    out = vgprscope(env, "analyze", *SMALL, "--arch", "gfx942,sm_80", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(r["arch"], r["status"]) for r in doc["rows"]] == [("gfx942", "ok"), ("sm_80", "ok")]
    assert doc["rows"][0]["usage"]["vgpr_total"] > 0 and doc["rows"][1]["usage"]["regs"] > 0


def test_one_compile_runs_in_this_process_without_torch(env, tmp_path):
    """One compile runs in the command's own process (no worker pool), where the blocker's finder answers
    the question whether torch is there by raising: a row of its own, never "No module named 'torch'"."""
    private = {**env, "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")}  # nothing cached: it compiles here
    for arch, count in (("sm_80", "regs"), ("gfx942", "vgpr_total")):
        out = vgprscope(private, "analyze", *SMALL, "--arch", arch, "--format", "json")
        assert out.returncode == 0, out.stderr
        (row,) = json.loads(out.stdout)["rows"]
        assert (row["arch"], row["status"]) == (arch, "ok") and row["usage"][count] > 0


def test_compare_and_occupancy_without_torch(env):
    out = vgprscope(env, "compare", "--strategies", "baseline,remat-q", "--arch", "gfx942", *SMALL[2:],
                    "--format", "json")
    assert out.returncode == 0, out.stderr
    assert [ln["variant"] for ln in json.loads(out.stdout)["archs"]["gfx942"]] == ["baseline", "remat-q"]
    occ = vgprscope(env, "occupancy", "--arch", "gfx942", "--vgprs", "128", "--agprs", "64", "--format", "json")
    assert occ.returncode == 0, occ.stderr
    assert json.loads(occ.stdout)["waves_per_simd"] == 2


def test_baseline_save_and_check_without_torch(env, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vgprscope]\nbaseline = "b.json"\nvariants = ["baseline"]\narchs = ["gfx942"]\n'
        'configs = [{head_dim = 64, block_m = 64, block_n = 32, num_warps = 4, num_stages = 1}]\n')
    save = vgprscope(env, "baseline", "save", cwd=tmp_path)
    assert save.returncode == 0, save.stderr
    assert json.loads((tmp_path / "b.json").read_text())["entries"]
    check = vgprscope(env, "check", cwd=tmp_path)
    assert check.returncode == 0, check.stderr + check.stdout


@pytest.mark.parametrize("args", [["bench", "--strategies", "baseline"], ["bench"]])
def test_bench_names_the_extra(env, args):
    out = vgprscope(env, *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert "needs torch, which is not installed" in lines[0] and "install the 'bench' extra" in lines[0]
    # from where it was installed (this clone: the working directory), never an index it is not on
    assert "'.[bench]' torch==2.13.0" in lines[0] and "vgprscope[bench]" not in lines[0], lines[0]
    assert out.stdout == ""


def test_importing_vgprscope_needs_no_torch(env):
    """``vgprscope.attention`` runs on torch tensors, so torch is there when it is called; the package and
    its API module import without it."""
    out = subprocess.run([sys.executable, "-c", "import vgprscope, vgprscope.flashattn.run; print(callable(vgprscope.attention))"],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


def test_install_commands_agree():
    """The README's test command is what CI runs (quiet, on two pytest-xdist workers, in random order); the
    gate's workflow installs no torch."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```console", 1)[1].split("```", 1)[0]
    tool_cmd, test_cmd = [ln.strip() for ln in block.strip().splitlines()]
    assert "torch" not in tool_cmd and tool_cmd.endswith("vgprscope analyze")
    install, run_tests = test_cmd.split(" && ")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install.replace("pip install ", "pip install -q ", 1) in ci
    # CI's run: quiet, two workers, in random order (a seed it prints), with what a plain run leaves out
    # (pyproject's addopts: slow, install) but the exhaustive sweep; the docs extra installed before it, so the
    # site's strict build (tests/project/test_docs_site.py) runs rather than skips
    [run] = [ln for ln in ci if ln.startswith(run_tests.replace("pytest", "pytest -q -n 2 -p randomly --randomly-seed="))]
    assert run.endswith(' -m "not exhaustive"') and ci.index('pip install -q -e ".[docs]"') < ci.index(run)
    workflow = (ROOT / ".github" / "workflows" / "vgprscope.yml").read_text()
    installs = [ln for ln in workflow.splitlines() if "pip install" in ln]
    assert installs and not any("torch" in ln for ln in installs)
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("torch") for d in meta["dependencies"])
    assert any(d.startswith("torch") for d in meta["optional-dependencies"]["bench"])
    assert any(d.startswith("torch") for d in meta["optional-dependencies"]["test"])


@pytest.fixture(scope="module")
def action_venv(tmp_path_factory) -> Path:
    """The environment the repository's Action builds (.github/action/install.sh): the pinned Triton and
    vgprscope, nothing else (no torch)."""
    import venv

    where = tmp_path_factory.mktemp("action-venv") / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    python = where / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TRITON_INTERPRET")}
    installed = subprocess.run([sys.executable, "-c", "import triton; print(triton.__version__)"],
                               capture_output=True, text=True).stdout.strip()
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile", f"triton=={installed}",
                           str(ROOT)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True, env=env)
    assert probe.returncode == 1 and "No module named 'torch'" in probe.stderr
    return where


@pytest.mark.install
def test_the_actions_install_gates_a_project_whose_modules_import_torch(action_venv, tmp_path_factory, tmp_path):
    """The README's CI: a project whose kernel modules import torch, captured and baselined where torch is,
    gated in the Action's environment (Triton and vgprscope only): the unedited project passes; a heavier
    kernel fails with the worse entries and numbers the torch environment gives."""
    from tests.captures.test_capture_without_torch import _copy, build_project, check, verdicts

    made = build_project(tmp_path_factory)
    python = action_venv / "bin" / "python"

    def gate(repo: Path) -> tuple[int, dict, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TRITON_INTERPRET")}
        env["VGPRSCOPE_CACHE_DIR"] = str(tmp_path / "ci-cache")
        done = subprocess.run([str(python), "-m", "vgprscope", "check", "--format", "json"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.stdout.startswith("{"), done.stdout[-2000:] + done.stderr[-2000:]
        return done.returncode, json.loads(done.stdout), done.stderr

    code, doc, stderr = gate(_copy(made.root, tmp_path / "unedited", heavier=False))
    assert code == 0 and {r["result"] for r in doc["rows"]} == {"same"}, stderr
    heavier = _copy(made.root, tmp_path / "heavier", heavier=True)
    code, with_torch, stderr = check(made, heavier, torch=True, cache=made.cache)
    assert code == 1, stderr
    code, doc, stderr = gate(heavier)
    assert code == 1, stderr
    assert verdicts(doc) == verdicts(with_torch)
