"""A compile in the caller's own process (one job, no pool): two threads of a library user compiling at once
leave the process as they found it."""

from __future__ import annotations

import os
import tempfile
import threading
import time

from vgprscope.compile import executors
from vgprscope.runtime import scratch


def test_two_threads_compiling_in_process_leave_the_temporary_directory_as_it_was(monkeypatch):
    """Each compile points Python's temporary directory and Triton's cache at a directory of its own and puts
    them back after: interleaved, the second to finish would put back the first's directory, removed by then,
    and every later ``tempfile`` call of the user's process would fail. The first here finishes first."""

    def compile_for(request):  # worker.run's shape, holding a compile's side-file directory as a compile does
        with scratch.temporary_files():
            time.sleep(request["seconds"])
        return {}

    monkeypatch.setattr(executors.worker, "run", compile_for)
    before = tempfile.tempdir, os.environ.get(scratch.TRITON_CACHE)
    first = threading.Thread(target=executors.in_process, args=({"seconds": 0.2},))
    second = threading.Thread(target=executors.in_process, args=({"seconds": 0.4},))
    first.start()
    time.sleep(0.05)
    second.start()
    first.join()
    second.join()
    assert (tempfile.tempdir, os.environ.get(scratch.TRITON_CACHE)) == before
