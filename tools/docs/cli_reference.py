"""The command reference, generated from the CLI itself (the typer app's click commands): every command and
subcommand with its help, its usage and a table of its options (names, value, default, help). The site's
hook (``tools/docs/hooks.py``) puts it where ``docs/reference/cli.md`` says ``<!-- vgprscope-cli-reference -->``;
``python -m tools.docs.cli_reference`` prints it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- vgprscope-cli-reference -->"


def _cell(text: str) -> str:
    text = re.sub(r"\\\[", "[", text or "")  # rich markup's escaped brackets, as --help prints them
    return " ".join(text.split()).replace("|", "\\|")


def _commands(group: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    ctx = _context(group, prefix)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or getattr(cmd, "hidden", False):
            continue
        path = f"{prefix} {name}"
        yield path, cmd
        if hasattr(cmd, "list_commands"):  # a group: its subcommands
            yield from _commands(cmd, path)


def _context(cmd: Any, path: str) -> Any:
    """A click context of ``cmd``, from the click the app was built with (typer may vendor its own)."""
    return cmd.context_class(cmd, info_name=path)


def _value(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return ""
    if hasattr(param.type, "choices"):
        return " \\| ".join(f"`{c}`" for c in param.type.choices)
    meta = getattr(param, "metavar", None) or param.type.name.upper()
    return f"`{meta}`".replace("|", "\\|")


def _default(param: Any) -> str:
    default = param.default
    if default is None or default == () or default == [] or getattr(param, "is_flag", False) and default is False:
        return ""
    if hasattr(default, "value"):  # an Enum
        default = default.value
    return f"`{default}`"


def command_markdown(path: str, cmd: Any) -> str:
    out = [f"## `{path}`", ""]
    if cmd.help:
        from vgprscope.cli.common import reflow

        out += [(reflow(cmd.help) or "").replace("\b\n", "").strip(), ""]
    ctx = _context(cmd, path)
    out += ["```text", " ".join(cmd.collect_usage_pieces(ctx)).join([f"{path} ", ""]).rstrip(), "```", ""]
    options = [p for p in cmd.params if p.param_type_name == "option" and not getattr(p, "hidden", False)]
    arguments = [p for p in cmd.params if p.param_type_name == "argument"]
    if arguments:
        out += ["| argument | help |", "|---|---|"]
        out += [f"| `{a.human_readable_name}` | {_cell(getattr(a, 'help', '') or '')} |" for a in arguments]
        out.append("")
    if options:
        out += ["| option | value | default | help |", "|---|---|---|---|"]
        for p in options:
            names = ", ".join(f"`{o}`" for o in (*p.opts, *p.secondary_opts))
            out.append(f"| {names} | {_value(p)} | {_default(p)} | {_cell(p.help or '')} |")
        out.append("")
    return "\n".join(out)


def markdown() -> str:
    """Every command of ``vgprscope`` (its groups' subcommands too), in the order ``--help`` lists them."""
    import typer.main

    from vgprscope.cli.app import _register, app

    _register()
    root = typer.main.get_command(app)
    return "\n".join(command_markdown(path, cmd) for path, cmd in _commands(root, "vgprscope"))


if __name__ == "__main__":
    print(markdown())
