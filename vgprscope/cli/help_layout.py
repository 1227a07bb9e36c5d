"""``--help`` laid out for the terminal's width: typer puts an option's names, type and description in a
table whose every column may wrap, so at 100 columns rich narrows the description to the width of the
longest option names (about 33 characters) and cuts a long word with "…". Here the names and types keep
their width and the description takes the rest, folding at spaces (a word longer than it folds, never cut).

Applied only where help is printed: typer's help renderer is a quarter of a second to import.
"""

from __future__ import annotations

from typing import Any

# the longest choice list kept in the names column (--dtype [fp16|bf16], --format [table|json|csv|md])
LONGEST_CHOICES = 24


def apply() -> None:
    from rich.text import Text
    from typer import rich_utils

    base: Any = rich_utils.Table
    if getattr(base, "vgprscope_layout", False):
        return

    def names(cells: tuple[Any, ...]) -> Text:
        """--long, -s / --no-long TYPE: typer's five cells (names, short names, their negations, type) as one."""
        long, short, neg_long, neg_short, kind = (c if isinstance(c, Text) else Text(str(c)) for c in cells)
        out = Text()
        for sep, part in (("", long), (", ", short), (" / ", neg_long), (", ", neg_short), (" ", kind)):
            if part.plain:
                out.append(sep if out.plain else "")
                out.append_text(part)
        return out

    def choices_apart(name_cells: tuple[Any, ...], description: Any) -> tuple[Text, Any]:
        """A long list of choices ([table|md|json|benchmark-json|sarif]) would widen the names column for every
        option: it becomes CHOICE there and its values end the description."""
        *rest, kind = name_cells
        plain = kind.plain if isinstance(kind, Text) else str(kind)
        if len(plain) <= LONGEST_CHOICES or not (plain[:1] in "[<" and "|" in plain):
            return names(name_cells), description
        values = f"One of: {', '.join(plain.strip('[]<>').split('|'))}."
        if isinstance(description, Text):
            text = description.copy()
            text.append(" " + values)
            return names((*rest, Text("CHOICE"))), text
        from rich.console import Group

        return names((*rest, Text("CHOICE"))), Group(description, Text(values))

    class OptionsTable(base):  # type: ignore[misc, valid-type]
        vgprscope_layout = True

        def add_row(self, *cells: Any, **kw: Any) -> None:
            # typer's options table adds its rows without columns: [required,] 5 name cells, the description
            if not self.columns and not self.show_header and len(cells) in (6, 7):
                self.vgprscope_merge = True
                for _ in cells[:-5]:
                    self.add_column(no_wrap=True)
                self.add_column(ratio=1, overflow="fold")
            if getattr(self, "vgprscope_merge", False):
                lead = len(cells) - 6
                cells = (*cells[:lead], *choices_apart(cells[lead:lead + 5], cells[-1]))
            super().add_row(*cells, **kw)

    rich_utils.Table = OptionsTable  # type: ignore[misc]


def wanted(args: list[str]) -> bool:
    """Whether this command line prints help (an option asking for it, or a command or group alone)."""
    return len(args) <= 1 or any(a in ("-h", "--help") for a in args)
