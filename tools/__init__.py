"""The repository's development tooling that is not part of vgprscope's wheel (run from the repository root)."""
