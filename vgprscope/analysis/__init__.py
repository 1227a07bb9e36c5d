"""The questions vgprscope answers about compiled kernels, one package each: ``core`` computes (records and
the engine's outputs in, frozen data out), ``view`` formats (tables, markdown, CSV, JSON; no compiling)."""
