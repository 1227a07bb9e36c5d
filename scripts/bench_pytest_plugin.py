"""What the pytest plugin costs a suite that does not use it: wall time of ``python -m pytest`` on a suite of
plain tests with the plugin loaded (pytest finds it through vgprscope's entry point) and with it left out
(``-p no:vgprscope``), runs alternating, and the vgprscope modules each run imported.

    python scripts/bench_pytest_plugin.py [--runs 25] [--out reports/pytest-plugin-overhead.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = '''
import sys, json, os


def test_add():
    assert 1 + 1 == 2


def test_modules():
    with open(os.environ["SEEN"], "w") as f:
        json.dump(sorted(m for m in sys.modules if m.startswith("vgprscope")), f)
'''


def run(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pytest failed: {done.stdout[-500:]}{done.stderr[-500:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "pytest-plugin-overhead.md")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from vgprscope.report.machine import compile_only

    times: dict[str, list[float]] = {"with the plugin": [], "-p no:vgprscope": []}
    seen: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "test_plain.py"
        suite.write_text(SUITE)
        env = dict(os.environ, SEEN=str(Path(tmp) / "seen.json"))
        env.pop("PYTEST_ADDOPTS", None)
        for name, extra in (("with the plugin", []), ("-p no:vgprscope", ["-p", "no:vgprscope"])):
            run([*extra, str(suite)], env)  # untimed: bytecode caches written
            seen[name] = json.loads((Path(tmp) / "seen.json").read_text())
        for _ in range(args.runs):
            for name, extra in (("with the plugin", []), ("-p no:vgprscope", ["-p", "no:vgprscope"])):
                times[name].append(run([*extra, str(suite)], env))

    def cell(xs: list[float]) -> str:
        return f"{statistics.median(xs):.3f} s ± {statistics.pstdev(xs):.3f} (min {min(xs):.3f}, max {max(xs):.3f})"

    base = statistics.median(times["-p no:vgprscope"])
    rows = "\n".join(f"| {name} | {cell(xs)} | {statistics.median(xs) / base:.2f} | {', '.join(seen[name]) or 'none'} |"
                     for name, xs in times.items())
    text = f"""# The pytest plugin in a suite that does not use it

Machine: {compile_only().line()}; {os.cpu_count()} cores; 1-minute load average {os.getloadavg()[0]:.2f} at the end

Reproduce: `python scripts/bench_pytest_plugin.py --runs {args.runs}`

`python -m pytest -q` of a file of two plain tests, {args.runs} runs of each side, alternating:

| pytest run | wall time, median ± stdev | / without | vgprscope modules imported |
|---|---|---|---|
{rows}

The plugin module (`vgprscope.cli.pytest_plugin`) is what pytest loads through the entry point, with the
package roots above it (`vgprscope`, whose `__init__` imports the light `vgprscope.attention` package, and
`vgprscope.cli`); nothing else of vgprscope, nor Triton, torch or pandas, until a test carries
`@pytest.mark.vgprscope` or asks for the `vgprscope` fixture (tests/cli/test_pytest_plugin.py checks the list).
"""
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
