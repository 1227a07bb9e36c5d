"""What runs where vgprscope is not installed: a user's own process (the capture hook) and another Triton
release's Python (the compile worker). Standard library and Triton only, its modules importing each other
relatively; loaded as a package everywhere: ``vgprscope.runtime`` in vgprscope's own processes, its directory
as the package ``_vgprscope_runtime`` elsewhere (``boot/_vgprscope_boot.py``: the capture's sitecustomize,
and ``python <this directory> --serve``, a toolchain's worker).

- ``protocol``: request and answer kinds, the compile environment, failures as one line; ``guard``: output
  and time limits around a compile; ``worker``: the requests' dispatch and the JSON-lines server; ``scratch``:
  the directory workers write their files in, owned and removed by the process that owns them.
- ``compile``: one job -> the compiler's raw outputs; ``stored``: a Triton cache entry's outputs read;
  ``plan``: a kernel-directory variant -> its jobs; ``derive``: a captured call -> the launches the current
  source makes.
- ``facts``: the launch as facts (and back to stand-in values); ``constexpr``: the one constexpr codec.
- ``current``: a kernel's current source: its module imported (``loader``: finding it), or its file read
  statically where the module does not import here (``static``); ``manifest``: the files its compile reads;
  ``snapshot``: its source recorded, and built again where its file is gone; ``hashing``: the one file hash.
- ``hook``, ``record``, ``autotune``, ``imports``: the capture hook, what it records, an autotuner's configs,
  the import hook that patches Triton as it is imported; ``interp``: the interpreter's fixes.
"""

import functools
import hashlib
import os

# Where this package is: a toolchain's compile worker is ``[python, DIRECTORY, "--serve"]``, and the
# capture puts ``BOOT_DIR`` first on the user's command's PYTHONPATH.
DIRECTORY = os.path.dirname(os.path.abspath(__file__))
BOOT_DIR = os.path.join(DIRECTORY, "boot")


def worker_command(python: str, *args: str) -> list[str]:
    """The command line of a compile worker under ``python`` (another environment's interpreter)."""
    return [python, DIRECTORY, *args]


@functools.cache
def code_hash(names: tuple[str, ...] = ()) -> str:
    """This package's own code (``names``: those modules; none: every module), hashed. Part of the key of
    every answer the cache keeps that this code makes (a compile's inputs built from the launch's facts, a
    derivation, a plan): an answer made by other code is made again, so a fix to the runtime is never hidden
    behind an entry it made before (a reinstall of the same code keeps every key)."""
    h = hashlib.sha256()
    for name in names or tuple(sorted(n for n in os.listdir(DIRECTORY) if n.endswith(".py"))):
        h.update(name.encode() + b"\0")
        with open(os.path.join(DIRECTORY, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]
