"""``analyze --triton A..B``: a kernel's resources release by release."""
