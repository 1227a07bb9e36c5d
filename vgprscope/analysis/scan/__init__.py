"""``scan``: the kernels of a Triton (or Inductor) cache, as stored and retargeted."""
