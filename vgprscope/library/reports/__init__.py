"""The committed reports (reports/), built by library calls: each function compiles (or times) what its
report shows and writes its files, and each report's header names the command that reproduces it
(``vgprscope report compare|explain|third-party|triton-upgrade|bench``, cli/report.py).

- ``compare``: reports/compare-<arch>.md and its chart: the strategies with their frontier.
- ``explain``: reports/explain-<arch>.md: where the baseline's registers go.
- ``third_party``: reports/third-party-liger-kernel.md: liger-kernel's kernels, captured on the CPU.
- ``triton_upgrade``: the data of reports/triton-upgrade.md: every release of a range, step by step.
- ``bench``: reports/bench-<gpu>.md on a GPU: timings against the targets.
- ``workloads``: the commands the reports capture (liger-kernel's ops; sglang's and aiter's attention
  launched from their wheels), run as ``python -m vgprscope.library.reports.workloads.NAME``.

Nothing here is imported at start-up: the CLI imports a report's module inside its command.
"""
