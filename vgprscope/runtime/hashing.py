"""The one hash of a file's content vgprscope takes (sha256): cache keys, dependencies and derivations keep
32 hex digits, a kernel's source hash in records, captures and baselines 16. Standard library only, and a
module of its own so that reading the cache (a warm run) loads none of the compile worker's modules."""

from __future__ import annotations

import hashlib

# a kernel's source hash, in records, captures and baselines: 16 hex digits (keys and derivations take 32)
SOURCE_HASH_DIGITS = 16


def file_hash(path: str, digits: int = 32) -> str:
    """A file's content hash, its first ``digits`` hex digits."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:digits]


def source_hash(path: str) -> str:
    """A kernel file's source hash, as records, captures and baselines carry it."""
    return file_hash(path, SOURCE_HASH_DIGITS)
