"""Row labels every records table shares: the config words said once above a table, and the width past which
a name stands on a line of its own."""

from __future__ import annotations

from collections.abc import Sequence

# A label column wider than this (a captured kernel's module path, a generated kernel's name) would take
# the width the data columns need: the names then become title lines across the table instead.
LABEL_MAX = 24


def common_config(labels: Sequence[str]) -> tuple[str, list[str]]:
    """(the words every config label shares, each label without them): ``d128 fp16`` is said once above
    the table instead of on every row. Labels are ``config.short()``: space-separated words."""
    split = [lab.split() for lab in labels]
    if len(split) < 2:
        return "", list(labels)
    shared = [w for w in split[0] if all(w in s for s in split[1:])]

    def names_next(w: str, s: list[str]) -> bool:
        # a bare word before a value that differs ("cfg 2/18") stays with it
        i = s.index(w)
        return not any(c.isdigit() or c == "=" for c in w) and i + 1 < len(s) and s[i + 1] not in shared

    shared = [w for w in shared if not any(names_next(w, s) for s in split)]
    rest = [" ".join(w for w in s if w not in shared) or "-" for s in split]
    return " ".join(shared), rest


