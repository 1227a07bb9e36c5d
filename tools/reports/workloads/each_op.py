"""What the op workloads share: each op run (its forward and backward), one line each, ``ok NAME forward +
backward`` or ``FAIL NAME ERROR message``; a workload exits 1 only where every op failed."""

from collections.abc import Callable, Mapping


def run_each(ops: Mapping[str, Callable[[], object]], synchronize: Callable[[], object] | None = None) -> int:
    """Run each op, then ``synchronize`` (the GPU's queue, where the op ran on one), printing its line; how many
    failed (an op's error is its line, never the end of the run)."""
    failed = 0
    for name, op in ops.items():
        try:
            op()
            if synchronize is not None:
                synchronize()
            print("ok", name, "forward + backward", flush=True)
        except Exception as exc:
            failed += 1
            print("FAIL", name, type(exc).__name__, " ".join(str(exc).split())[:200], flush=True)
    return failed
