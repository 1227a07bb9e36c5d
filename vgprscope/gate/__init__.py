"""The CI register gate (docs/design.md, "Layers"): metrics and rules, the baseline file, the diff, the
configuration (pure data) and the report. Nothing here compiles (the caller runs the sweep and hands the
records over) and nothing here knows exit codes (``vgprscope.cli.check`` maps results to 0 / 1 / 2).

- ``metrics``: the numbers the gate watches (``Metric``, ``METRICS``), the vendor-neutral ``registers``.
- ``rules``: how much each may get worse (``Rule``, ``RuleSet``, parsing ``[VARIANT:]METRIC:TOLERANCE``).
- ``baseline``: the committed file (``Entry``, ``Baseline``, ``load_baseline``, ``save_baseline``).
- ``diff``: baseline vs current, entry by slot (``judge`` -> ``GateResult``).
- ``config``: which set, which baseline, which rules (``GateSet``, ``GateConfig``, ``load_gate_config``).
- ``report``: terminal table, markdown, JSON, benchmark JSON, GitHub annotations.
"""
