"""Where compile tasks come from (DESIGN.md, "Layers"): the bundled variants x configs (or a kernel
directory), a capture file, a Triton cache. Each yields ``compile.engine.Task``s carrying one CompileJob; the
engine, the cache, the parsers, occupancy, the tables and the gate work on tasks from any of them and never
ask which one it was."""
