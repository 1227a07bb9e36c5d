"""A Triton cache entry's stored outputs, read as a compile would have returned them (nothing compiles), and
the NVIDIA tools both read with: cuobjdump's resource usage, ptxas's version and its ``-v`` log."""

from __future__ import annotations

import base64
import functools
import os
import re
import subprocess
import tempfile
from typing import Any

from .hashing import file_hash
from .protocol import one_line, triton_version


def _nvidia_tool(name: str) -> str:
    """A CUDA tool shipped in the Triton wheel, where this release keeps it (knobs from 3.4 on)."""
    try:
        from triton import knobs

        return str(getattr(knobs.nvidia, name).path)
    except (ImportError, AttributeError):
        from triton.backends.nvidia import compiler as nv

        return str(nv._path_to_binary(name)[0])


def cuobjdump_resources(cubin: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([_nvidia_tool("cuobjdump"), "--dump-resource-usage", f.name], check=True,
                              capture_output=True, text=True).stdout


def nvdisasm(cubin: bytes) -> str | None:
    """``nvdisasm -gi -c`` of the cubin (the loop metrics' SASS), here beside the compile, in parallel; None
    where this release's nvdisasm cannot read it (the parsing process then tries its own)."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            return subprocess.run([_nvidia_tool("nvdisasm"), "-gi", "-c", f.name], check=True, capture_output=True,
                                  text=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return None


@functools.cache
def ptxas_version(capability: int) -> str:
    from triton.backends.nvidia import compiler as nv

    try:
        text = nv.get_ptxas_version(capability)
    except TypeError:  # releases whose ptxas does not depend on the arch
        text = nv.get_ptxas_version()
    text = text.decode() if isinstance(text, bytes) else str(text)
    lines = [ln for ln in text.splitlines() if "release" in ln]
    return lines[0].strip() if lines else text.strip()[:80]


@functools.cache
def _release_ptxas_flags() -> list[str]:
    """The flags this release's make_cubin gives ptxas beyond line info, ``-v``, fmad and ``ptx_options``, read
    from its own source (3.9 adds ``--regAllocOptLevel=2``, 3.6 none). A wrong guess costs nothing but the
    spill figures: they are taken only where the re-run rebuilds the stored cubin's code."""
    import inspect

    from triton.backends.nvidia.compiler import CUDABackend

    try:
        src = inspect.getsource(CUDABackend.make_cubin)
    except (OSError, TypeError):
        return []
    return ["--regAllocOptLevel=2"] if "--regAllocOptLevel=2" in src else []


def _ptxas_log(capability: int, ptx: str, fp_fusion: bool, ptx_options: str | None) -> tuple[str, bytes]:
    """``ptxas -v`` of a stored PTX, with the flags this release's NVIDIA backend gives it (make_cubin): its
    log and the cubin it writes."""
    from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [get_ptxas(capability).path, "-lineinfo", *([] if fp_fusion else ["--fmad=false"]), "-v",
               *_release_ptxas_flags(), *(ptx_options.split(" ") if ptx_options else []),
               f"--gpu-name={sm_arch_from_capability(capability)}", ptx, "-o", os.path.join(tmp, "k.cubin")]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ptxas failed on {os.path.basename(ptx)}: {done.stderr.strip()[-200:]}")
        with open(os.path.join(tmp, "k.cubin"), "rb") as f:
            return done.stderr + done.stdout, f.read()


# Sections a rebuild may change without changing what ptxas built: the DWARF line table names each source file
# with the mtime and size ptxas found on disk (zero where the file is gone), and its relocations point into it.
_BUILD_PLACE_SECTIONS = frozenset({".debug_line", ".rel.debug_line", ".rela.debug_line"})


def elf_sections(data: bytes) -> dict[str, tuple[int, int, int, bytes]]:
    """A 64-bit little-endian ELF's sections: name -> (type, flags, size, contents); a section without file
    contents (SHT_NOBITS) has empty contents. ValueError for anything else."""
    import struct

    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx]
    strtab = data[names[4]:names[4] + names[5]]
    out: dict[str, tuple[int, int, int, bytes]] = {}
    for name, kind, flags, _addr, offset, size, *_ in headers:
        label = strtab[name:strtab.index(b"\0", name)].decode()
        out[label] = (kind, flags, size, b"" if kind == 8 else data[offset:offset + size])
    return out


def same_machine_code(rebuilt: bytes, stored: bytes) -> bool:
    """Whether a re-run of ptxas built what the stored cubin holds: every section equal but the line table's
    record of where the build ran (_BUILD_PLACE_SECTIONS); byte for byte where either is not an ELF file."""
    if rebuilt == stored:
        return True
    try:
        a, b = elf_sections(rebuilt), elf_sections(stored)
    except (ValueError, IndexError):
        return False
    keep = (set(a) | set(b)) - _BUILD_PLACE_SECTIONS
    return all(a.get(name) == b.get(name) for name in keep)


def read_stored(job: dict[str, Any], out: dict[str, Any], disassemble: str = "always") -> dict[str, Any]:
    """A Triton cache entry's stored outputs, as a compile would have returned them: the AMDGCN text; on
    NVIDIA the stored cubin's resource usage (its registers, stack and shared memory are the truth) and, for
    the spill figures only ptxas prints, ``ptxas -v`` of the stored PTX with this release's flags, kept only
    where the cubin that re-run writes holds the stored one's code and data (that ptxas built it). ``stored`` says
    who wrote the entry, who read it and what the re-run gave, for the row to name its sources. ``disassemble``:
    the cubin's SASS (``nvdisasm``) ``always``, ``local`` where the kernel has a stack frame or local memory, or
    ``never``."""
    (_, p), = job["source"].items()
    files = dict(p["files"])
    t = job["target"]
    out |= {"name": p["name"], "shared": int(p["shared"] or 0), "deps": {}}
    if p.get("num_warps"):
        out["num_warps"] = int(p["num_warps"])
    for path in files.values():
        out["deps"][path] = file_hash(path)
    if t["backend"] == "hip":
        with open(files["amdgcn"]) as f:
            out["amdgcn"] = f.read()
        return out
    from triton.backends.nvidia.compiler import get_ptxas

    capability = int(t["arch"])
    with open(files["cubin"], "rb") as f:
        cubin = f.read()
    out["cuobjdump"] = cuobjdump_resources(cubin)
    out["cubin_b64"] = base64.b64encode(cubin).decode("ascii")  # its SASS: the loop metrics
    stored: dict[str, Any] = {"written_by": p.get("written_by"), "read_by": triton_version()}
    out["stored"] = stored
    frame = has_frame(out["cuobjdump"], p["name"])
    if disassemble == "always" or (disassemble == "local" and frame):
        # the loop figures' SASS, here in the worker (in parallel): where every loop figure is read, or where a
        # loop may move spilled bytes (a stack frame or local memory); elsewhere they are 0 without it
        sass = nvdisasm(cubin)
        out |= {"sass": sass} if sass else {}
    if not frame:
        # no stack frame and no local memory: nothing spilled (spills live there), and registers, stack and
        # shared memory are the cubin's: no ptxas to run (it would only say the same)
        return out
    try:
        stored["ptxas"] = str(get_ptxas(capability).version)
    except (AttributeError, TypeError):  # releases whose tool lookup differs: the version line says it too
        stored["ptxas"] = ptxas_version(capability)
    if "ptx" not in files:
        stored["ptxas_result"] = "no .ptx in the entry to run ptxas on"
    else:
        try:
            log, rebuilt = _ptxas_log(capability, files["ptx"], p.get("enable_fp_fusion", True),
                                      p.get("ptx_options"))
        except RuntimeError as exc:
            stored["ptxas_result"] = f"this ptxas cannot assemble the stored PTX ({one_line(exc)[-120:]})"
        else:
            if same_machine_code(rebuilt, cubin):
                out["ptxas_log"] = log
                out["ptxas_version"] = ptxas_version(capability)
                stored["ptxas_result"] = "rebuilds the stored cubin"
            else:
                stored["ptxas_result"] = "does not rebuild the stored cubin"
    return out


_FUNCTION_RE = re.compile(r"^\s*Function ([^:\s]+):\s*$")


def has_frame(resources: str, name: str) -> bool:
    """Whether cuobjdump's resource usage gives the kernel ``name`` a stack frame or local memory (where spills
    live), or does not say (then ptxas is asked)."""
    lines = resources.splitlines()
    for i, line in enumerate(lines):
        m = _FUNCTION_RE.match(line)
        if m and m.group(1) == name and i + 1 < len(lines):
            figures = dict(re.findall(r"([A-Z_]+):(\d+)", lines[i + 1]))
            if "STACK" not in figures or "LOCAL" not in figures:
                return True
            return int(figures["STACK"]) > 0 or int(figures["LOCAL"]) > 0
    return True


