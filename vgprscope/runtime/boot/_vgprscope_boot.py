"""The one way vgprscope's runtime is loaded where vgprscope is not installed: its directory as the package
``_vgprscope_runtime`` (a private name: it never meets an installed vgprscope), whose modules import each
other relatively. The capture's ``sitecustomize`` and a toolchain's compile worker (``__main__.py``) use it."""

import importlib
import importlib.util
import os
import sys

NAME = "_vgprscope_runtime"


def load(directory: str, submodule: str = ""):
    """The runtime package at ``directory`` (loaded once per process), or one of its modules."""
    if NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(NAME, os.path.join(directory, "__init__.py"),
                                                      submodule_search_locations=[directory])
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load vgprscope's runtime from {directory}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[NAME]
            raise
    return importlib.import_module(f"{NAME}.{submodule}") if submodule else sys.modules[NAME]
