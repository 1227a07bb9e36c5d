"""The op workloads (tools/reports/workloads: fla-core, FlagGems, torchao) run each op through one loop: an op's
error is its own FAIL line and the rest still run; the count that failed decides the exit (1 only where all did)."""

from __future__ import annotations

from tools.reports.workloads.each_op import run_each


def test_each_op_is_one_line_and_a_failing_op_stops_nothing(capsys):
    synced: list[str] = []

    def bad() -> None:
        raise ValueError("shape\n  mismatch")

    failed = run_each({"good": lambda: None, "bad": bad, "after": lambda: None}, lambda: synced.append("sync"))
    assert failed == 1 and synced == ["sync", "sync"]  # after each op that ran through
    assert capsys.readouterr().out.splitlines() == [
        "ok good forward + backward", "FAIL bad ValueError shape mismatch", "ok after forward + backward"]
