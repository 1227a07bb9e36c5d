"""A thin CLI: every option is declared once, in vgprscope/cli/options.py, and the commands
take them in bundles; no flag means two things, except the few whose meaning differs by command on purpose;
arch names in help text come from the arch table.

Read from the commands as typer registers them (their signatures, bundles expanded) and, for the declarations,
from the source (ast), so that a declaration written anywhere else is found.
"""

from __future__ import annotations

import ast
import inspect
import re
import typing
from pathlib import Path

import pytest
import typer
from typer.models import ParameterInfo
from typer.testing import CliRunner

from vgprscope.cli import options
from vgprscope.cli.app import _register, app
from vgprscope.core.archs import ARCHS

_register()
CLI = Path(options.__file__).parent

# Flags whose meaning differs by command, each declaration named for what it is (options.py says why).
PER_COMMAND = {
    # occupancy: one arch; scan: retarget, none by default
    "--arch": {"ArchOpt", "OneArchOpt", "RetargetArchOpt"},
    "--format": {"FormatOpt", "ExplainFormatOpt", "GateFormatOpt", "OccFormatOpt", "DiffFormatOpt"},  # the formats each writes
    "--output": {"OutputOpt", "CaptureOutputOpt"},  # capture: the capture file, with a default name
}
SHORT = {"-a": "--arch", "-f": "--format", "-o": "--output"}


def declarations() -> dict[int, str]:
    """id of each typer parameter declaration in options.py -> the name of its alias (a grid field's or a
    compiler warning's: the declaration ``options.grid_option`` / ``options.warning_option`` derives from its
    row)."""
    from vgprscope.core.options import COMPILER_WARNINGS
    from vgprscope.library.grid import grid_fields

    aliases = (dict(vars(options)) | {f"grid_option({o.name})": options.grid_option(o) for o in grid_fields()}
               | {f"warning_option({w.name})": options.warning_option(w) for w in COMPILER_WARNINGS})
    out = {}
    for name, value in aliases.items():
        if typing.get_origin(value) is typing.Annotated:
            for meta in value.__metadata__:
                if isinstance(meta, ParameterInfo):
                    out.setdefault(id(meta), name)
    return out


def callbacks(group: typer.Typer = app, path: str = "vgprscope") -> list[tuple[str, typing.Callable]]:
    """Every command's (and group callback's) function, sub-apps included."""
    out = []
    if group.registered_callback is not None and group.registered_callback.callback is not None:
        out.append((path, group.registered_callback.callback))
    for cmd in group.registered_commands:
        out.append((f"{path} {cmd.name or cmd.callback.__name__}", cmd.callback))
    for sub in group.registered_groups:
        out += callbacks(sub.typer_instance, f"{path} {sub.name}")
    return out


def parameters(fn: typing.Callable) -> list[tuple[str, ParameterInfo | None]]:
    """(name, declaration) of each parameter typer sees (bundles expanded), as typer reads them."""
    out = []
    for p in inspect.signature(fn, eval_str=True).parameters.values():
        metas = [m for m in getattr(p.annotation, "__metadata__", ()) if isinstance(m, ParameterInfo)]
        out.append((p.name, metas[0] if metas else None))
    return out


def flags(info: ParameterInfo) -> list[str]:
    """The flags of a declaration (in the Annotated form the first name is stored as its default)."""
    names = [info.default] if isinstance(info.default, str) and info.default.startswith("-") else []
    names += list(getattr(info, "param_decls", None) or ())
    return [f for n in names for f in n.split("/") if f]


COMMANDS = callbacks()


def test_the_walk_finds_every_command():
    assert {p.removeprefix("vgprscope").strip() for p, _ in COMMANDS} == {
        "", "analyze", "bench", "capture", "compare", "diff", "explain", "frontier", "check", "archs", "variants",
        "occupancy", "scan", "toolchains", "toolchains remove", "baseline save"}


@pytest.mark.parametrize("path, fn", COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_option_of_a_command_is_declared_in_options(path, fn):
    known = declarations()
    for name, info in parameters(fn):
        if info is None:  # typer.Context
            continue
        assert id(info) in known, f"{path}: --{name.replace('_', '-')} is declared outside vgprscope/cli/options.py"


def test_no_flag_is_declared_twice():
    known = declarations()
    seen: dict[str, set[str]] = {}
    for _, fn in COMMANDS:
        for _, info in parameters(fn):
            if info is not None:
                for flag in flags(info):
                    seen.setdefault(SHORT.get(flag, flag), set()).add(known[id(info)])
    twice = {f: names for f, names in seen.items() if len(names) > 1}
    assert twice == {f: names for f, names in PER_COMMAND.items() if f in twice}
    assert {"--block-m", "--triton", "--set", "--variant", "--jobs", "--wide", "--sort"} <= set(seen)


@pytest.mark.parametrize("path, fn", COMMANDS, ids=[p for p, _ in COMMANDS])
def test_no_two_options_of_a_command_share_a_flag(path, fn):
    used = [f for _, info in parameters(fn) if info is not None for f in flags(info)]
    assert len(used) == len(set(used)), f"{path}: {sorted(f for f in used if used.count(f) > 1)}"


def _calls(file: Path) -> list[str]:
    tree = ast.parse(file.read_text(), str(file))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("Option", "Argument"):
                out.append(f"{file.name}:{node.lineno} {name}(...)")
    return out


def test_no_cli_module_but_options_declares_an_option():
    found = [c for f in sorted(CLI.glob("*.py")) if f.name != "options.py" for c in _calls(f)]
    assert found == []
    assert _calls(CLI / "options.py")  # the walk finds them where they are


_ONE = "(?:" + "|".join(re.escape(a) for a in sorted(ARCHS, key=len, reverse=True)) + ")"
ARCH_LIST = re.compile(rf"\b{_ONE},\s*{_ONE}\b")  # "gfx90a, gfx942": a list typed by hand (an example command is not)


def test_no_cli_module_types_a_list_of_archs():
    """Help text (and messages) list the archs from the table: no string literal in cli/ lists them itself."""
    found = []
    for f in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if ARCH_LIST.search(node.value):
                    found.append(f"{f.name}:{node.lineno} {node.value[:60]!r}")
    assert found == []


def test_the_arch_help_is_the_arch_table():
    (info,) = [m for m in options.ArchOpt.__metadata__ if isinstance(m, ParameterInfo)]
    assert ", ".join(n for n, a in ARCHS.items() if a.triton_target) in info.help  # the ones Triton compiles for
    res = CliRunner().invoke(app, ["occupancy", "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0 and ", ".join(ARCHS) in " ".join(res.output.split())


@pytest.mark.parametrize("path", sorted(p for p, _ in COMMANDS))
def test_every_command_help_renders(path):
    res = CliRunner().invoke(app, [*path.split()[1:], "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0 and "Usage: vgprscope" in res.output, res.output
    # the description reads as paragraphs: typer >= 0.29 kept the docstring's own line breaks and wrapped them
    # again, so a source line longer than the terminal left a stub line ("`check`," alone); a line is cut
    # short only at a paragraph's end or before a list item
    text = res.output.split("╭", 1)[0].splitlines()
    body = [ln.strip() for ln in text[text.index(next(ln for ln in text if "Usage:" in ln)) + 1:]]
    stubs = [a for a, b in zip(body, body[1:]) if a and b and len(a) < 60 and not b.startswith(("- ", "* "))]
    assert stubs == [], res.output


# ---- the bundle mechanism ------------------------------------------------------------------------------------

def test_a_bundle_is_its_options_to_typer_and_one_object_to_the_command():
    got = {}

    @options.bundled
    def cmd(*, kernels: options.Kernels, grid: options.FrontierGrid, jobs: options.JobsOpt = None) -> None:
        got.update(kernels=kernels, grid=grid, jobs=jobs)

    names = [n for n, _ in parameters(cmd)]
    assert names[:4] == ["variant", "arch", "capture", "kernel_dir"] and names[-1] == "jobs"
    assert "waves_per_eu" not in names and "maxnreg" not in names and "block_m" in names
    cmd(**{n: None for n in names})
    assert isinstance(got["kernels"], options.Kernels) and got["grid"].library().keys() == {
        "block_m", "block_n", "head_dim", "num_warps", "num_stages", "matrix_instr_nonkdim", "kpack", "dtype",
        "knob", "causal"}


def test_an_option_given_twice_by_two_bundles_is_refused():
    def cmd(*, kernels: options.Kernels, arch: options.ArchOpt = None) -> None:
        pass

    with pytest.raises(TypeError, match=r"an option is given twice: \['arch'\]"):
        options.bundled(cmd)


def test_the_grid_bundle_gives_the_library_its_keywords_checked_with_the_flags_names():
    from vgprscope.core.errors import UsageError

    grid = options.Grid(block_m=["64,128"], num_warps=["4", "8"], dtype=["bf16"], knob=["num_splits=2"], causal=True)
    assert grid.library() == {"block_m": [64, 128], "block_n": None, "head_dim": None, "num_warps": [4, 8],
                              "num_stages": None, "waves_per_eu": None, "matrix_instr_nonkdim": None, "kpack": None,
                              "maxnreg": None, "dtype": ["bf16"], "knob": ["num_splits=2"], "causal": True}
    with pytest.raises(UsageError, match=r"--block-m 100 is not allowed"):
        options.Grid(block_m=["100"]).library()


def test_a_reports_reproduce_line_is_the_command_as_typed(monkeypatch):
    """`explain -f md` printed "Reproduce: `explain`": the line is the whole command, quoted for a shell."""
    from vgprscope.cli.common import command_line

    monkeypatch.setattr("sys.argv", ["/venv/bin/vgprscope", "explain", "--kernel-dir", "my kernels", "-f", "md"])
    assert command_line() == "vgprscope explain --kernel-dir 'my kernels' -f md"
