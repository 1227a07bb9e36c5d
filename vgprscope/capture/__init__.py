"""``vgprscope capture``: record every distinct Triton launch specialisation a user's own command makes.

The hook that runs inside the user's processes is the runtime's (``vgprscope.runtime.hook``, standard library
only); ``model`` is the versioned capture file; ``run`` starts the command with the hook and writes the file.
"""

# vgprscope.capture() is the library's in-process capture (vgprscope.library.session): this package is
# callable as it
from .._callable import callable_module  # noqa: E402

callable_module(__name__, "session:capture")
