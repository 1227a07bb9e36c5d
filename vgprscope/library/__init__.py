"""vgprscope as a library (docs/design.md, "Layers": ``__init__ / api``): the CLI's commands as calls returning data.

- ``api``: ``analyze``, ``compare``, ``frontier``, ``explain``, ``check``, ``scan`` (selections by the CLI's
  names; a user's own kernel, launched as in their code).
- ``results``: the gate's frozen results (``check``, ``baseline_save``), with ``to_pandas()`` and ``to_json()``;
  the other calls' results are their question's (``vgprscope.analysis.<question>.result``).
- ``grid`` / ``sweep``: config grids (their size guard, sorting); variants x archs x configs -> tasks.
- ``session``: ``capture()``, the CLI's capture in this process for a with-block.
- ``kernels``: ``pointer()`` and a user kernel's launches recorded by the capture hook.
- ``selection`` / ``tasks`` / ``gate``: keyword selections -> requests; selections -> tasks -> results
  (the orchestration the CLI commands call too); the register gate's run.

Nothing here is imported by ``import vgprscope``: its names resolve on first use.
"""
