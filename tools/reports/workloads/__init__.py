"""Commands the reports capture (``vgprscope capture -- python -m tools.reports.workloads.NAME``):
each runs third-party Triton kernels as their own code launches them. They import torch and the library they
run at the top: they are scripts, never imported by vgprscope."""
