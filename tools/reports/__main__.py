"""``python -m tools.reports NAME``: write one of the committed reports (tools/reports/cli.py)."""

from .cli import app

app(prog_name="python -m tools.reports")
