"""vgprscope as a library (DESIGN.md, "Layers": ``__init__ / api``): the CLI's commands as calls returning data.

- ``api``: ``analyze``, ``compare``, ``frontier``, ``explain``, ``check``, ``scan`` (selections by the CLI's
  names; a user's own kernel, launched as in their code).
- ``results``: the frozen results, with ``to_pandas()`` (the CSV export's columns) and ``to_json()``.
- ``session``: ``capture()``, the CLI's capture in this process for a with-block.
- ``kernels``: ``pointer()`` and a user kernel's launches recorded by the capture hook.
- ``selection`` / ``tasks`` / ``gate``: keyword selections -> requests; selections -> tasks -> results
  (the orchestration the CLI commands call too); the register gate's run.

Nothing here is imported by ``import vgprscope``: its names resolve on first use.
"""
