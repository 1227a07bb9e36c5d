"""Commands the reports capture (``vgprscope capture -- python -m vgprscope.library.reports.workloads.NAME``):
each runs third-party Triton kernels as their own code launches them. They import torch and the library they
run at the top: they are scripts, never imported by vgprscope."""
