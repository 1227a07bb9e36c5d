"""Everything about the bundled FlashAttention variants (``kernels/``), in one package (docs/design.md, "Layers").

- ``variants``: the registry and protocol (each kernel file's ``VARIANT = {...}``, read without importing it),
  config resolution; ``loader``: a kernel directory loaded by path;
- ``config``: the attention config (head dim, dtype, causal mask, shape) and the user's request;
- ``tuning``: the shape's and arch's defaults; ``traffic``: the memory-traffic model (and compare's hook,
  ``line_traffic``); ``live``: seed 001's estimate of the loop state (and explain's hook, ``estimate``);
  ``declared``: the live-state and traffic models a variant declares, read and checked; ``expr``: the
  arithmetic the variants' declarations write their formulas in;
- ``tolerances`` (the table) and ``correctness`` (a variant's tolerance, the check): the correctness gate;
  ``run``: ``vgprscope.attention()``;
- ``source``: the variants as a source of compile tasks; ``gate``: the register gate's default set and
  config-table checks.

Nothing below this package (compile, parse, occupancy, gate, report, the other sources) imports it. Importing
the package itself is cheap: its modules are imported by what uses them.

``vgprscope.attention(q, k, v, ...)`` (``run.attention``) runs a variant; the package is named apart from it, so
that importing one of its modules never replaces the call.
"""
