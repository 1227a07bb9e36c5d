"""``python <this directory> --serve | --version``: a compile worker under any Python that has Triton.

Run by its directory (another environment's interpreter, where vgprscope is not installed), this loads the
directory as the package ``_vgprscope_runtime`` (``boot/_vgprscope_boot.py``: the one way the runtime is loaded outside
vgprscope's own process) and serves; ``python -m vgprscope.runtime`` does the same where vgprscope is
installed.
"""

import os
import sys

if __package__:
    from .worker import main
else:
    _here = os.path.dirname(os.path.abspath(__file__))
    # run by its directory, that directory leads sys.path: its modules are no top-level modules of anyone's
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _here:
        del sys.path[0]
    sys.path.insert(0, os.path.join(_here, "boot"))
    from _vgprscope_boot import load  # type: ignore[import-not-found]

    del sys.path[0]
    main = load(_here, "worker").main

sys.exit(main(sys.argv[1:]))
