"""The documentation site (mkdocs.yml, docs/): every `$ ` command of a console block and every Python block of
every page runs, as written, in a fresh directory, and succeeds (a block the page marks
`<!-- docs-test: skip (REASON) -->` is skipped, and only for a GPU); the site builds with `mkdocs build
--strict` (broken links, a missing page, an API name that no longer exists fail it); the command reference is
generated from the CLI, every command in it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
# the only reason a page may give for not running an example here
GPU_ONLY = "needs a GPU"
# pages whose Python examples tests/project/test_readme.py runs and checks for what they print (run once, there)
CHECKED_THERE = ("reference/python.md", "tasks/gluon.md", "tasks/pytest-plugin.md")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    kind: str  # "console" or "python"
    text: str
    skip: str | None

    @property
    def commands(self) -> list[str]:
        return [ln[2:] for ln in self.text.splitlines() if ln.startswith("$ ")]


def examples(page: Path) -> list[Example]:
    """The console and Python blocks of a page, in order, with the skip marker just above each."""
    out = []
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w+)", lines[i])
        if not m:
            i += 1
            continue
        kind, start = m[1], i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        above = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        skip = SKIP.search(above)
        if kind in ("console", "python"):
            out.append(Example(page, start + 1, kind, "\n".join(lines[start + 1:j]), skip["why"] if skip else None))
        i = j + 1
    return out


PAGES = sorted(DOCS.rglob("*.md"))
RUNNABLE = [p for p in PAGES if any(e.skip is None and (e.commands or e.kind == "python" and p.relative_to(
    DOCS).as_posix() not in CHECKED_THERE) for e in examples(p))]


def test_the_site_has_the_pages_the_navigation_names():
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]

    def walk(items):
        for item in items:
            for value in item.values():
                yield from (walk(value) if isinstance(value, list) else [value])

    named = set(walk(nav))
    assert named == {p.relative_to(DOCS).as_posix() for p in PAGES}, named ^ {p.relative_to(DOCS).as_posix() for p in PAGES}
    for task in ("bundled-variants", "your-kernels", "torch-compile", "gluon", "ci-gate", "pytest-plugin",
                 "triton-upgrade", "gpu-benchmark", "html-reports"):
        assert f"tasks/{task}.md" in named


def test_skipped_examples_are_gpu_only_and_every_page_with_code_runs_some():
    for page in PAGES:
        for e in examples(page):
            assert e.skip in (None, GPU_ONLY), f"{page.name}:{e.line}: skipped for {e.skip!r}"
    assert len(RUNNABLE) >= 8, [p.name for p in RUNNABLE]
    assert {"your-kernels.md", "ci-gate.md", "triton-upgrade.md", "html-reports.md"} <= {p.name for p in RUNNABLE}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_example_of_the_page_runs(page, tmp_path):
    """The page's examples in its order, in one fresh directory (a command may read what an earlier one wrote)
    holding the site's example project (docs/examples: a kernel module and the command that launches it), in a
    user's environment: no TRITON_INTERPRET unless the example sets it."""
    for f in (DOCS / "examples").glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    for e in examples(page):
        where = f"{page.relative_to(ROOT)}:{e.line}"
        if e.skip is not None or (e.kind == "python" and page.relative_to(DOCS).as_posix() in CHECKED_THERE):
            continue
        if e.kind == "console":
            for cmd in e.commands:
                done = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                                      timeout=900)
                assert done.returncode == 0, f"{where}: {cmd}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        else:
            script = tmp_path / f"example_{e.line}.py"
            script.write_text(e.text)
            done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(), capture_output=True,
                                  text=True, timeout=900)
            assert done.returncode == 0, f"{where}\n{done.stderr[-3000:]}"
            assert "error" not in done.stdout.lower() or "error" in e.text.lower(), f"{where}\n{done.stdout[-3000:]}"


def test_the_command_reference_is_generated_from_the_cli():
    """Every command and subcommand the CLI has, with each option it declares, is in the generated reference."""
    import typer.main

    from tools.docs.cli_reference import MARKER, markdown
    from vgprscope.cli.app import _register, app

    assert MARKER in (DOCS / "reference" / "cli.md").read_text()
    text = markdown()
    _register()
    root = typer.main.get_command(app)
    for name, cmd in root.commands.items():
        assert f"## `vgprscope {name}`" in text
        for p in cmd.params:
            if p.param_type_name == "option":
                assert f"`{p.opts[0]}`" in text, (name, p.opts)
    assert "`html`" in text  # --format html on the commands that write the HTML report


@pytest.mark.skipif(shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists(),
                    reason="mkdocs is not installed (pip install -e '.[docs]'; .ci/run installs it)")
def test_the_site_builds_strict(tmp_path):
    """`mkdocs build --strict`: a broken link, a page outside the navigation or an API name mkdocstrings cannot
    find fails the build (CI runs the same command)."""
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    reference = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "vgprscope analyze" in reference and "--format" in reference
    api = (tmp_path / "site" / "reference" / "python" / "index.html").read_text()
    assert "to_html" in api and "analyze" in api
    assert (tmp_path / "site" / "reports" / "compare-gfx942.html").is_file()
