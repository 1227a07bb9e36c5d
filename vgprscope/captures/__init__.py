"""``vgprscope capture``: record every distinct Triton launch specialisation a user's own command makes.

The hook that runs inside the user's processes is the runtime's (``vgprscope.runtime.hook``, standard library
only); ``model`` is the versioned capture file; ``run`` starts the command with the hook and writes the file.
"""
