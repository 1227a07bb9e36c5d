"""Where a test module goes: tests/ mirrors the package (docs/architecture.md, "Where tests go"), so a test
module sits in the folder of the vgprscope package it tests (``tests/gate/``, ``tests/analysis/explain/``), or in
``tests/gpu/`` (every test needs a GPU) or ``tests/project/`` (the repository: docs, README, packaging, layers,
tools/ and scripts/). ``tests/project/test_tests_layout.py`` fails on a test module anywhere else.

Run from the repository root:

    python scripts/place_tests.py                        # each test module at the top of tests/: its folder, why
    python scripts/place_tests.py --move                 # git mv each there, then fix its Path(__file__) paths
    python scripts/place_tests.py --move tests/test_x.py=analysis/scan   # a folder of your choosing
    python scripts/place_tests.py --mentions             # rewrite `tests/test_x.py` wherever the repository names it

The folder of a new module is guessed from its name (``test_gate_cost`` -> gate), else from the vgprscope
packages it imports (the one imported most, below the CLI); the guess is printed with its reason: read it before
``--move``. ``--move`` only moves and rewrites ``Path(__file__)...parent.parent`` (the repository root) and
``Path(__file__)...parent / "fixtures"`` for the new depth; commit the moves apart from other edits so that git
follows each file. ``--mentions`` leaves reports/ alone (a report records what was run, where it was then).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
PKG = ROOT / "vgprscope"
EXTRAS = ("gpu", "project")
QUESTIONS = ("analyze", "compare", "diff", "explain", "frontier", "history", "scan")  # vgprscope/analysis/<q>/

# A word of the module's name -> its folder (the first word of the name that is here wins).
WORDS: dict[str, str] = {
    **{q: f"analysis/{q}" for q in QUESTIONS},
    **{p: p for p in ("core", "backends", "compile", "runtime", "capture", "sources", "report", "gate",
                      "attention", "bench", "library", "cli", "gpu")},
    **dict.fromkeys(("occupancy", "parsers", "parse", "loops", "records", "archs", "diagnostics", "config",
                     "errors", "job"), "core"),
    **dict.fromkeys(("backend", "vendor", "vendors", "hip", "cuda"), "backends"),
    **dict.fromkeys(("cache", "toolchains", "dask", "cluster", "engine", "identity", "processes", "worker"),
                    "compile"),
    **dict.fromkeys(("source", "inductor", "triton_cache"), "sources"),
    **dict.fromkeys(("tables", "table", "sarif", "exports", "wordings", "words"), "report"),
    **dict.fromkeys(("numerics", "model", "variant", "variants", "defaults", "kernels", "regalloc"), "attention"),
    **dict.fromkeys(("api", "selection", "tasks", "grid"), "library"),
    **dict.fromkeys(("options", "plugin", "output", "bad"), "cli"),
    **dict.fromkeys(("readme", "docs", "layers", "layout", "packaging", "install", "action", "scripts", "tools",
                     "reports"), "project"),
}
TEXT = (".md", ".py", ".sh", ".toml", ".yml", ".yaml", ".txt", ".cfg")
ROOT_PATH = re.compile(r"Path\(__file__\)(\.resolve\(\))?\.parent\.parent\b")
FIXTURES_PATH = re.compile(r"Path\(__file__\)(\.resolve\(\))?\.parent / \"fixtures\"")


def allowed(folder: str) -> bool:
    """A folder a test module may sit in: a package's folder of vgprscope, or an extra."""
    parts = Path(folder).parts
    return bool(parts) and (parts[0] in EXTRAS and len(parts) == 1 or (PKG.joinpath(*parts) / "__init__.py").is_file())


def imported_packages(file: Path) -> Counter[str]:
    """vgprscope's folders a test module imports (``analysis/explain``, ``gate``), each counted once a line."""
    counts: Counter[str] = Counter()
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        for name in names:
            parts = name.split(".")
            if parts[0] != "vgprscope" or len(parts) < 2:
                continue
            folder = "/".join(parts[1:3]) if parts[1] == "analysis" and len(parts) > 2 else parts[1]
            if allowed(folder):
                counts[folder] += 1
    return counts


def guess(file: Path) -> tuple[str, str]:
    """(folder, reason) for a test module."""
    words = file.stem.removeprefix("test_").split("_")
    for word in words:
        if word in WORDS:
            return WORDS[word], f"its name says {word!r}"
    counts = imported_packages(file)
    below_cli = {f: n for f, n in counts.items() if f not in ("cli", "core")}
    if below_cli:
        folder = max(below_cli, key=lambda f: (below_cli[f], f))
        return folder, f"it imports {dict(counts.most_common())}"
    if counts:
        return counts.most_common(1)[0][0], f"it imports {dict(counts.most_common())}"
    return "project", "it imports no package of vgprscope"


def fix_paths(file: Path) -> None:
    """Point the module's repository-root and fixtures paths at the same places from its new folder."""
    depth = len(file.relative_to(TESTS).parts) - 1  # folders between tests/ and the file
    text = file.read_text()
    text = ROOT_PATH.sub(lambda m: f"Path(__file__){m.group(1) or ''}.parents[{depth + 1}]", text)
    text = FIXTURES_PATH.sub(lambda m: f"Path(__file__){m.group(1) or ''}.parents[{depth}] / \"fixtures\"", text)
    file.write_text(text)


def init_files(folder: Path) -> list[Path]:
    """The ``__init__.py`` a folder of tests/ and the folders above it need (unique module names per path)."""
    out = []
    while folder != TESTS.parent:
        if not (folder / "__init__.py").exists():
            out.append(folder / "__init__.py")
        folder = folder.parent
    return out


def move(plan: dict[Path, str]) -> None:
    for file, folder in plan.items():
        if not allowed(folder):
            sys.exit(f"place_tests: {folder!r} is no folder of vgprscope/ nor one of {', '.join(EXTRAS)}")
        target = TESTS / folder / file.name
        if target.exists():
            sys.exit(f"place_tests: {target.relative_to(ROOT)} exists already")
        target.parent.mkdir(parents=True, exist_ok=True)
        for init in init_files(target.parent):
            init.write_text("")
            subprocess.run(["git", "add", str(init)], check=True, cwd=ROOT)
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(file)], capture_output=True, cwd=ROOT)
        if tracked.returncode == 0:
            subprocess.run(["git", "mv", str(file), str(target)], check=True, cwd=ROOT)
        else:  # not committed yet: a plain rename
            file.rename(target)
        fix_paths(target)
        print(f"{file.relative_to(ROOT)} -> {target.relative_to(ROOT)}")


def mentions() -> None:
    """Rewrite ``tests/test_x.py`` in the repository's text files to where test_x.py is now."""
    where: dict[str, list[str]] = {}
    for f in TESTS.rglob("test_*.py"):
        if "fixtures" not in f.relative_to(TESTS).parts:
            where.setdefault(f.name, []).append(f.relative_to(ROOT).as_posix())
    pattern = re.compile(r"\btests/(test_\w+\.py)\b")
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    for name in tracked.splitlines():
        path = ROOT / name
        if (not name.endswith(TEXT) and "." in Path(name).name or name.startswith(("reports/", "tests/fixtures/"))
                or not path.is_file() or path.is_symlink()):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = pattern.sub(lambda m: where[m.group(1)][0] if len(where.get(m.group(1), [])) == 1 else m.group(0),
                          text)
        if new != text:
            path.write_text(new)
            print(f"{name}: {len(pattern.findall(text))} mention(s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--move", nargs="*", metavar="FILE=FOLDER",
                        help="move the modules at the top of tests/ (all, by the guess) or the ones named")
    parser.add_argument("--mentions", action="store_true", help="rewrite `tests/test_x.py` mentions to the file's place")
    args = parser.parse_args()
    if args.mentions:
        mentions()
        return
    top = sorted(TESTS.glob("test_*.py"))
    if args.move is None:
        for file in top:
            folder, why = guess(file)
            print(f"{file.relative_to(ROOT)} -> tests/{folder}/  ({why})")
        if not top:
            print("no test module at the top of tests/")
        return
    plan: dict[Path, str] = {}
    for item in args.move:
        name, sep, folder = item.partition("=")
        file = ROOT / name
        if not sep or not file.is_file() or file.parent != TESTS:
            sys.exit(f"place_tests: {item!r}: give FILE=FOLDER, FILE a test module at the top of tests/")
        plan[file] = folder.strip("/")
    if not args.move:
        plan = {file: guess(file)[0] for file in top}
    move(plan)


if __name__ == "__main__":
    main()
