"""Where compile specs come from (DESIGN.md, "Layers"): the bundled variants x configs, a capture file, a
Triton cache. Each source yields CompileSpecs; the engine, the cache, the parsers, occupancy, the tables and
the gate work on specs from any of them and never ask which one it was."""

from .spec import CompileSpec

__all__ = ["CompileSpec"]
