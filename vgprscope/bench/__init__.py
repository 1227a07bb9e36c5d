"""GPU benchmark: correctness gate, timings (medians with spread), anchors, joined with resource rows.

Everything here needs a CUDA or ROCm GPU; torch is imported inside functions only.
"""
