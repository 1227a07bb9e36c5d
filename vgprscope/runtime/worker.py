"""The compile worker: one request -> its answer, in vgprscope's process pool, a Dask worker, or another Python
environment's interpreter for another Triton release (``python <runtime directory> --serve``, reading one JSON
request per line on stdin and answering on stdout; ``__main__.py`` loads this package there).

Requests: ``{"op": "compile", "job": {...}}`` compiles (or, for a Triton cache entry's stored outputs, reads)
one kernel (``compile``; ``"disassemble": "local"``: an NVIDIA cubin's SASS only where the kernel uses local
memory, ``"always"`` where every loop figure is read, ``"never"`` where none is); ``{"op": "plan", ...}`` turns a kernel-directory variant and its config into its
jobs (``plan``); ``{"op": "derive", ...}`` the launches a captured call makes with the current source
(``derive``). Every answer names this worker's Triton and the protocol.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from .guard import stdout_to_stderr
from .protocol import (
    DEFAULT_TIMEOUT,
    ENVIRONMENT,
    PROTOCOL,
    _triton_root,
    compile_env,
    configure,
    one_line,
    triton_version,
)

# What vgprscope's engine reads of a worker (the protocol's names, here beside ``run``).
__all__ = ["DEFAULT_TIMEOUT", "ENVIRONMENT", "PROTOCOL", "configure", "main", "one_line", "run", "serve"]


def _derive(request: dict[str, Any]) -> dict[str, Any]:
    """The launches a captured kernel's current source makes of its recorded calls (``derive``)."""
    from . import derive

    try:
        with compile_env(), stdout_to_stderr():
            return dict(derive.derive(request))
    except Exception as exc:
        return {"error": one_line(exc), "error_kind": ENVIRONMENT}


def run(request: dict[str, Any]) -> dict[str, Any]:
    """Answer one request (what the process pool and Dask call); every answer names this Triton."""
    op = request.get("op")
    # what compiles and plans is loaded by the first request that needs it: a process that only reads the
    # protocol's names (vgprscope's own, answering from its cache) never loads it
    if op == "compile":
        from .compile import compile_job

        answer = compile_job(request["job"], request.get("timeout", DEFAULT_TIMEOUT),
                             disassemble=request.get("disassemble", "always"))
    elif op == "plan":
        from .plan import plan

        answer = plan(request)
    elif op == "derive":
        answer = _derive(request)
    else:
        answer = {"error": f"unknown request {op!r}", "error_kind": ENVIRONMENT}
    return answer | {"triton_version": triton_version(), "protocol": PROTOCOL}


def serve() -> None:
    """JSON lines: a request per line on stdin, its answer on the real stdout; anything else (a user
    module's prints, Triton's) goes to stderr."""
    configure()
    # Ctrl-C reaches the whole process group: the parent handles it, and ends this worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        request = None
        try:
            request = json.loads(line)
            answer = run(request)
        except Exception as exc:
            answer = {"error": one_line(exc), "error_kind": ENVIRONMENT, "triton_version": triton_version()}
        answer["id"] = request.get("id") if isinstance(request, dict) else None
        try:
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
        except (BrokenPipeError, ValueError):  # the parent is gone (killed): nobody to answer, nothing to say
            os._exit(0)


def version() -> None:
    """The probe: this interpreter's Triton version, the protocol and where its Triton package is."""
    configure()
    try:
        import triton  # noqa: F401
    except Exception as exc:  # the probe's one line says why
        print(f"cannot import triton: {one_line(exc)}", file=sys.stderr)
    print(json.dumps({"triton_version": triton_version(), "protocol": PROTOCOL,
                      "triton_dir": (_triton_root() or "").rstrip(os.sep)}))


def main(argv: list[str]) -> int:
    if argv == ["--serve"]:
        serve()
    elif argv == ["--version"]:
        version()
    else:
        print("usage: python <vgprscope runtime directory> --serve | --version", file=sys.stderr)
        return 2
    return 0
