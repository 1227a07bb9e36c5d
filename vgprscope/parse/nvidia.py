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
