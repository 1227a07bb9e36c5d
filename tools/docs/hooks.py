"""MkDocs hooks (mkdocs.yml ``hooks:``): the command reference is generated from the CLI when the site builds,
and the committed HTML reports (reports/html/) are part of the site, at reports/NAME.html."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    import sys

    if str(ROOT) not in sys.path:  # mkdocs loads this file by its path: the repository's packages by name
        sys.path.insert(0, str(ROOT))
    from tools.docs.cli_reference import MARKER
    from tools.docs.cli_reference import markdown as reference

    return markdown.replace(MARKER, reference()) if MARKER in markdown else markdown


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for page in sorted((ROOT / "reports" / "html").glob("*.html")):
        files.append(File.generated(config, f"reports/{page.name}", abs_src_path=str(page)))
    return files
