"""The markdown the views write (``--format md``), as HTML for a notebook's ``_repr_html_``: headings,
paragraphs, bullet lists, pipe tables and code spans, the only constructs those views use. Standard
library only; every piece of text is escaped."""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_BULLET = re.compile(r"^\s*[-*] ")


def _inline(text: str) -> str:
    """One line's text: escaped, with ``code`` and **bold** spans."""
    out = html.escape(text.replace("\\|", "|"))
    out = _CODE.sub(r"<code>\1</code>", out)
    return _BOLD.sub(r"<strong>\1</strong>", out)


def _cells(line: str) -> list[str]:
    """A pipe-table row's cells (``\\|`` is a literal bar inside a cell)."""
    inner = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*", line.strip()))


def markdown_to_html(md: str) -> str:
    """``md`` (as the views write it) as an HTML fragment."""
    lines = md.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif m := re.match(r"(#{1,6}) (.*)", line):
            level = len(m[1])
            out.append(f"<h{level}>{_inline(m[2])}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            head = "".join(f"<th>{_inline(c)}</th>" for c in _cells(line))
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(lines[i])) + "</tr>")
                i += 1
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        elif re.match(r"\s*[-*] ", line):
            items = []
            while i < len(lines) and re.match(r"\s*[-*] ", lines[i]):
                items.append(f"<li>{_inline(_BULLET.sub('', lines[i]))}</li>")
                i += 1
            out.append(f"<ul>{''.join(items)}</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"(#{1,6} |\s*\||\s*[-*] )", lines[i]):
                para.append(_inline(lines[i]))
                i += 1
            if not para:  # a lone table row without its rule: shown as text
                para.append(_inline(lines[i]))
                i += 1
            out.append(f"<p>{'<br>'.join(para)}</p>")
    return "\n".join(out)
