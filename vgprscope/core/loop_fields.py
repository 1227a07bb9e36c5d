"""The usage records' loop fields (``records.AmdUsage.loop_*``, ``records.NvidiaUsage.loop_*``): their names, and
their values for a kernel without scratch. Apart from their parser (``parse/loops.py``), so that a cached
result is checked without loading it."""

from __future__ import annotations

# the usage's loop fields, the spill figures last
LOOP_FIELDS = ("loop_matrix_share", "loop_lines", "loop_spill_bytes", "loop_scratch_insts", "loop_spill_bytes_max",
               "loop_spill_bytes_sum")
SPILL_FIELDS = LOOP_FIELDS[2:]


def spill_free_loop_fields() -> dict[str, int]:
    """The spill fields of a kernel without scratch / local memory: no loop of it moves a spilled byte."""
    return dict.fromkeys(SPILL_FIELDS, 0)
