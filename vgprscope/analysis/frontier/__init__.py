"""``frontier``: the highest occupancy each kernel reaches without spilling, level by level."""
