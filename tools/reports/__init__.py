"""The repository's committed reports (reports/), built by vgprscope's library calls: each function compiles
(or times) what its report shows and writes its files, and each report's header names the command that
reproduces it (``python -m tools.reports compare|explain|third-party|triton-upgrade|scan-cache|
upstream-regressions|bench``, run from the repository root: cli.py). Development tooling, outside the wheel.

- ``compare``: reports/compare-<arch>.md and its chart: the strategies with their frontier.
- ``explain``: reports/explain-<arch>.md: where the baseline's registers go.
- ``third_party``: reports/third-party-liger-kernel.md: liger-kernel's kernels, captured on the CPU.
- ``triton_upgrade``: the data of reports/triton-upgrade.md: every release of a range, step by step.
- ``bench``: reports/bench-<gpu>.md on a GPU: timings against the targets.
- ``scan_cache``: reports/scan-<dir>.md: a Triton cache another machine wrote, as scan reads it.
- ``upstream_regressions``: reports/upstream-regressions.md: upstream reports of a Triton upgrade, diffed.
- ``workloads``: the commands the reports capture (liger-kernel's ops; sglang's and aiter's attention
  launched from their wheels), run as ``python -m tools.reports.workloads.NAME``.

The CLI imports a report's module inside its command.
"""
