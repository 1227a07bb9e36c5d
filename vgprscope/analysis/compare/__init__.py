"""``compare``: the strategies side by side, one line per variant, deltas against the baseline variant."""
