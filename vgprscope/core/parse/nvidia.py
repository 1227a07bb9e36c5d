"""ptxas -v logs and cuobjdump --dump-resource-usage text -> NvidiaUsage. Pure functions.

ptxas gives registers, the stack frame and the spill store / load bytes; cuobjdump reads the cubin
itself (REG, STACK, SHARED = static shared, LOCAL). Where both give registers they must agree.
"""

from __future__ import annotations

import re

from ..records import NvidiaUsage


class NvidiaParseError(ValueError):
    pass


_ENTRY_RE = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_FRAME_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED_RE = re.compile(r"Used (\d+) registers")
_SMEM_RE = re.compile(r"(\d+) bytes smem")
_CUOBJ_FN_RE = re.compile(r"^\s*Function ([^:\s]+):\s*$")
_CUOBJ_KV_RE = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")


def parse_ptxas_log(log: str, kernel: str | None = None) -> dict[str, int | str]:
    """The `-v` figures of one entry function: regs, stack_bytes, spill_store_bytes, spill_load_bytes,
    smem (static shared, when ptxas prints it) and the sm target."""
    sections = list(_ENTRY_RE.finditer(log))
    if not sections:
        raise NvidiaParseError("no 'Compiling entry function' line in the ptxas log")
    chosen = None
    for i, m in enumerate(sections):
        if kernel is None or m.group(1) == kernel:
            end = sections[i + 1].start() if i + 1 < len(sections) else len(log)
            chosen = (m, log[m.end():end])
            break
    if chosen is None:
        names = ", ".join(m.group(1) for m in sections)
        raise NvidiaParseError(f"kernel {kernel!r} is not in the ptxas log; it has: {names}")
    m, body = chosen
    frame = _FRAME_RE.search(body)
    used = _USED_RE.search(body)
    if not frame or not used:
        raise NvidiaParseError(f"ptxas log of {m.group(1)} lacks the stack frame or the register line")
    smem = _SMEM_RE.search(body)
    return {
        "kernel": m.group(1), "sm": m.group(2), "regs": int(used.group(1)), "stack_bytes": int(frame.group(1)),
        "spill_store_bytes": int(frame.group(2)), "spill_load_bytes": int(frame.group(3)),
        "smem": int(smem.group(1)) if smem else 0,
    }


def parse_cuobjdump_resources(text: str, kernel: str | None = None) -> dict[str, int]:
    """``cuobjdump --dump-resource-usage``: REG, STACK, SHARED, LOCAL, ... of one function."""
    functions: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        fn = _CUOBJ_FN_RE.match(line)
        if fn:
            current = fn.group(1)
            functions[current] = {}
            continue
        if current is not None and ":" in line:
            functions[current].update({k: int(v) for k, v in _CUOBJ_KV_RE.findall(line)})
            current = None
    if not functions:
        raise NvidiaParseError("no 'Function NAME:' entry in the cuobjdump resource usage")
    if kernel is None:
        if len(functions) != 1:
            raise NvidiaParseError(f"several functions in the cubin ({', '.join(functions)}); name one")
        return next(iter(functions.values()))
    if kernel not in functions:
        raise NvidiaParseError(f"kernel {kernel!r} is not in the cubin; it has: {', '.join(functions)}")
    return functions[kernel]


def nvidia_usage(ptxas_log: str, cuobjdump_text: str, dynamic_shared: int = 0, kernel: str | None = None,
                 ptxas_version: str | None = None) -> NvidiaUsage:
    """Join the two sources for one kernel; ``dynamic_shared`` is Triton's ``metadata.shared``."""
    log = parse_ptxas_log(ptxas_log, kernel)
    res = parse_cuobjdump_resources(cuobjdump_text, kernel or str(log["kernel"]))
    if "REG" in res and res["REG"] != log["regs"]:
        raise NvidiaParseError(f"ptxas says {log['regs']} registers but the cubin says {res['REG']}")
    return NvidiaUsage(
        regs=int(log["regs"]), stack_bytes=int(log["stack_bytes"]),
        spill_store_bytes=int(log["spill_store_bytes"]), spill_load_bytes=int(log["spill_load_bytes"]),
        shared_static=res.get("SHARED", int(log["smem"])), shared_dynamic=int(dynamic_shared),
        local_bytes=res.get("LOCAL", 0), ptxas_version=ptxas_version,
    )


COUNTS_FROM_CUBIN = "the stored cubin (cuobjdump --dump-resource-usage)"


def stored_nvidia_usage(cuobjdump_text: str, dynamic_shared: int, kernel: str | None, stored: dict[str, str | None],
                        ptxas_log: str | None = None, ptxas_version: str | None = None) -> NvidiaUsage:
    """A Triton cache entry's NVIDIA usage, read as stored: registers, stack frame and static shared memory are
    the stored cubin's (cuobjdump); the spill bytes, which only ptxas prints, come from ``ptxas_log``, given
    only where that re-run rebuilt the stored cubin byte for byte (it is the ptxas that built it), else are
    zero where the cubin has no stack frame (spills live in it), else unknown. ``stored``: the compile worker's
    facts (written_by, read_by: Triton releases; ptxas: the re-run's version; ptxas_result)."""
    res = parse_cuobjdump_resources(cuobjdump_text, kernel)
    if "REG" not in res:
        raise NvidiaParseError(f"the cubin's resource usage of {kernel} has no REG")
    store: int | None
    load: int | None
    stack = res.get("STACK", 0)
    if ptxas_log is not None:
        log = parse_ptxas_log(ptxas_log, kernel)
        if log["regs"] != res["REG"] or log["stack_bytes"] != stack:  # the same cubin cannot say otherwise
            raise NvidiaParseError(f"ptxas says {log['regs']} registers, {log['stack_bytes']} B stack but the cubin "
                                   f"it rebuilt says {res['REG']}, {stack} B")
        store, load = int(log["spill_store_bytes"]), int(log["spill_load_bytes"])
        source = f"ptxas {stored.get('ptxas')} (Triton {stored.get('read_by')}'s), which rebuilds the stored cubin"
    elif stack == 0:
        store, load = 0, 0
        source = "the stored cubin: no stack frame, so nothing spilled"
        ptxas_version = None
    else:
        store, load = None, None
        ptxas_version = None
        source = "unknown: " + _why_unknown(stored)
    return NvidiaUsage(regs=res["REG"], stack_bytes=stack, spill_store_bytes=store, spill_load_bytes=load,
                       shared_static=res.get("SHARED", 0), shared_dynamic=int(dynamic_shared),
                       local_bytes=res.get("LOCAL", 0), ptxas_version=ptxas_version,
                       counts_from=COUNTS_FROM_CUBIN, spills_from=source)


def _why_unknown(stored: dict[str, str | None]) -> str:
    written, read, ptxas = stored.get("written_by"), stored.get("read_by"), stored.get("ptxas")
    result = stored.get("ptxas_result") or "does not rebuild the stored cubin"
    this = f"this ptxas ({ptxas}, Triton {read}'s)"
    if result.startswith("no .ptx"):
        return result
    result = result.removeprefix("this ptxas ")
    if written is None:
        return f"the entry does not say which Triton wrote it, and {this} {result}"
    if written == read:
        return f"{this} {result} though Triton {written} wrote the entry (built with another ptxas or flags)"
    return f"the cubin was built by Triton {written}'s ptxas; {this} {result}; add --triton {written} for its ptxas"
