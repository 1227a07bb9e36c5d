"""``analyze``: the records of a selection, as a table (the computation is the engine's compile of the
selection's tasks: ``library.tasks.sweep``)."""
