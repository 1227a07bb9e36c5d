"""AMDGCN assembly text -> AmdUsage. Pure: text in, record out; nothing here needs Triton or a GPU.

Sources of each field:
- the ``.amdgpu_metadata`` block, parsed as YAML: ``.vgpr_count`` (unified VGPR+AGPR total),
  ``.agpr_count``, ``.sgpr_count``, ``.vgpr_spill_count``, ``.sgpr_spill_count``,
  ``.private_segment_fixed_size`` (scratch bytes per lane), ``.group_segment_fixed_size`` (static LDS);
- the kernel descriptor: ``.amdhsa_next_free_vgpr`` (the VGPRs the hardware allocates);
- LLVM's ``; Kernel info:`` comments: ``; NumVgprs:`` (arch VGPRs), ``; Occupancy:``, ``codeLenInByte``;
- the instruction stream: spill stores / reloads are the memory instructions LLVM annotates with
  ``; N-byte [Folded ]Spill`` / ``Reload`` (a ``s_clause`` annotated so covers the clause's instructions),
  and a block is inside a loop when LLVM's block comment gives it a loop ``Depth=``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..records import AmdUsage


class AmdgcnParseError(ValueError):
    pass


_META_RE = re.compile(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata", re.S | re.M)
_COMMENT_RE = re.compile(r"^;\s*([A-Za-z][A-Za-z ]*?)\s*(?::|=)\s*(-?\d+)\b", re.M)
_SPILL_RE = re.compile(r";\s*\d+-byte (?:Folded )?(Spill|Reload)\b")
_LABEL_RE = re.compile(r"^(?:\.LBB\d+_\d+:|; %bb\.\d+:)")
_DEPTH_RE = re.compile(r"Depth=(\d+)")
_CLAUSE_RE = re.compile(r"^\s*s_clause\s+0x([0-9a-fA-F]+)")
_INST_RE = re.compile(r"^\s+([a-z][a-z0-9_]*)(?:\s|$)")
_DESCRIPTOR_RE = r"^\s*\.amdhsa_kernel\s+{name}\s*$(.*?)^\s*\.end_amdhsa_kernel"


def metadata(text: str) -> dict[str, Any]:
    """The ``.amdgpu_metadata`` document (YAML) of an AMDGCN file."""
    m = _META_RE.search(text)
    if not m:
        raise AmdgcnParseError("no .amdgpu_metadata block in the AMDGCN text")
    body = m.group(1)
    import yaml  # here: a run that parses no AMDGCN (a warm one) never loads it

    # libyaml's loader where PyYAML has it: the same safe subset, ~10x faster (a cache scan reads thousands)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(body.replace("\n---", "\n", 1).split("\n...", 1)[0], Loader=loader)
    if not isinstance(doc, dict) or "amdhsa.kernels" not in doc:
        raise AmdgcnParseError("the .amdgpu_metadata block has no amdhsa.kernels list")
    return dict(doc)


def kernel_metadata(text: str, kernel: str | None = None) -> dict[str, Any]:
    kernels = metadata(text)["amdhsa.kernels"]
    if kernel is None:
        if len(kernels) != 1:
            names = ", ".join(k.get(".name", "?") for k in kernels)
            raise AmdgcnParseError(f"several kernels in the AMDGCN text ({names}); name one")
        return dict(kernels[0])
    for k in kernels:
        if k.get(".name") == kernel:
            return dict(k)
    names = ", ".join(k.get(".name", "?") for k in kernels)
    raise AmdgcnParseError(f"kernel {kernel!r} is not in the AMDGCN metadata; it has: {names}")


def _function_body(text: str, kernel: str) -> str:
    """The lines from the kernel's label to the end of its ``; Kernel info:`` comment block."""
    start = re.search(rf"^{re.escape(kernel)}:", text, re.M)
    if not start:
        raise AmdgcnParseError(f"no label {kernel}: in the AMDGCN text")
    info = text.find("; Kernel info:", start.end())
    if info < 0:
        raise AmdgcnParseError(f"no '; Kernel info:' block after {kernel}:")
    end = info
    for line in text[info:].splitlines(keepends=True):
        if not line.startswith(";"):
            break
        end += len(line)
    return text[start.start():end]


def kernel_info(body: str) -> dict[str, int]:
    """The integer ``; Name: value`` / ``; name = value`` comment lines of a kernel's Kernel info block."""
    info_at = body.find("; Kernel info:")
    out: dict[str, int] = {}
    for m in _COMMENT_RE.finditer(body, info_at):
        out.setdefault(m.group(1).strip(), int(m.group(2)))
    return out


def spill_marks(body: str) -> Iterator[tuple[int, bool, bool, str]]:
    """Each spill memory instruction of a function body: (its line index, a store?, inside a loop?, mnemonic).

    LLVM annotates them ``; N-byte [Folded ]Spill`` / ``Reload``; an annotated ``s_clause`` covers its next
    N + 1 instructions; an instruction is in a loop when its basic block's comment gives a loop ``Depth=``.
    The one walk behind the counts here and the spill sites of ``parse.lineinfo``."""
    if not _SPILL_RE.search(body):  # no spill or reload mark anywhere: nothing to walk (most kernels)
        return
    depth = 0
    pending_kind: str | None = None  # an annotated s_clause: its next N instructions are spills
    pending_left = 0
    for i, line in enumerate(body.splitlines()):
        if _LABEL_RE.match(line):
            d = _DEPTH_RE.search(line)
            depth = int(d.group(1)) if d else 0
            continue
        inst = _INST_RE.match(line)
        if not inst:
            continue
        kind: str | None = None
        clause = _CLAUSE_RE.match(line)
        mark = _SPILL_RE.search(line)
        if clause:
            if mark:
                pending_kind, pending_left = mark.group(1), int(clause.group(1), 16) + 1
            continue
        if pending_left:
            pending_left -= 1
            kind = pending_kind
        elif mark:
            kind = mark.group(1)
        if kind is not None:
            yield i, kind == "Spill", depth > 0, inst.group(1)


def spill_instructions(body: str) -> tuple[int, int, int]:
    """(spill stores, spill reloads, of those inside a loop), counted per memory instruction."""
    stores = loads = in_loop = 0
    for _, store, loop, _ in spill_marks(body):
        stores += store
        loads += not store
        in_loop += loop
    return stores, loads, in_loop


def descriptor_field(text: str, kernel: str, field: str) -> int | None:
    """An integer ``.amdhsa_*`` directive of the kernel's descriptor block, or None."""
    block = re.search(_DESCRIPTOR_RE.format(name=re.escape(kernel)), text, re.S | re.M)
    if not block:
        return None
    m = re.search(rf"^\s*\.{re.escape(field)}\s+(\d+)", block.group(1), re.M)
    return int(m.group(1)) if m else None


def parse_amdgcn(text: str, dynamic_lds: int = 0, kernel: str | None = None) -> AmdUsage:
    """Resource usage of one kernel of an AMDGCN file; ``dynamic_lds`` is Triton's ``metadata.shared``."""
    meta = kernel_metadata(text, kernel)
    name = meta[".name"]
    body = _function_body(text, name)
    info = kernel_info(body)
    try:
        vgpr_total = int(meta[".vgpr_count"])
        agpr = int(meta.get(".agpr_count", 0))
        arch_vgpr = info["NumVgprs"]
    except KeyError as exc:
        raise AmdgcnParseError(f"AMDGCN text of {name} lacks {exc.args[0]}") from None
    stores, loads, in_loop = spill_instructions(body)
    return AmdUsage(
        arch_vgpr=arch_vgpr,
        agpr=agpr,
        vgpr_total=vgpr_total,
        sgpr=int(meta[".sgpr_count"]),
        vgpr_spill=int(meta.get(".vgpr_spill_count", 0)),
        sgpr_spill=int(meta.get(".sgpr_spill_count", 0)),
        scratch_bytes=int(meta.get(".private_segment_fixed_size", 0)),
        lds_static=int(meta.get(".group_segment_fixed_size", 0)),
        lds_dynamic=int(dynamic_lds),
        spill_stores=stores,
        spill_loads=loads,
        spill_insts_in_loop=in_loop,
        llvm_occupancy=info.get("Occupancy"),
        max_flat_workgroup_size=meta.get(".max_flat_workgroup_size"),
        code_bytes=info.get("codeLenInByte"),
        vgpr_alloc=descriptor_field(text, name, "amdhsa_next_free_vgpr"),
    )
