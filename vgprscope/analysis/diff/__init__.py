"""``diff``: two toolchains' compiles of the same tasks, judged by the gate's rules."""
