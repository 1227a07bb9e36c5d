"""``vgprscope capture``: record every distinct Triton launch specialisation a user's own command makes.

``hook`` runs inside the user's processes (standard library only); ``model`` is the versioned capture
file; ``run`` starts the command with the hook and writes the file.

The package is also the library's ``vgprscope.capture()`` (the same recording, in this process, for a
with-block: ``vgprscope.library.session``): ``vgprscope.capture`` names this package once it is imported,
so the package itself is what that call calls.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self) -> Any:
        """``with vgprscope.capture() as cap: run_my_model()``: see ``vgprscope.library.session.capture``."""
        from ..library.session import capture

        return capture()


sys.modules[__name__].__class__ = _CallableModule
