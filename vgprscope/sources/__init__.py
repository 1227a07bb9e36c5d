"""Where compile tasks come from (docs/design.md, "Layers"): the protocol (``base.Source``), a capture file and a
Triton cache here; the bundled variants x configs (or a kernel directory in their protocol) in
``vgprscope.flashattn.source``. Each yields ``compile.task.Task``s carrying one CompileJob; the engine, the
cache, the parsers, occupancy, the tables and the gate work on tasks from any of them and never ask which one
it was. The keyword each is read from: ``vgprscope.library.registry``."""
