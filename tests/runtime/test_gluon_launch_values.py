"""What Gluon's own tutorials pass at launch compiles as Gluon compiles it: a layout given as a constexpr
argument (``memcpy_1d_kernel[grid](..., XBLOCK, layout)``) and a TMA tensor descriptor their launchers build
(``TensorDescriptor.from_tensor(t, block_shape, layout)``). Each is recorded as facts (the layout by its class
and fields, the descriptor by its class, element type and fields) and its row equals a direct compile of
Triton's own Gluon source with the signature Triton's binder gives."""

from __future__ import annotations

import sys

import pytest
from capture_helpers import ROOT

import vgprscope
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.parse.nvidia import parse_cuobjdump_resources
from vgprscope.runtime import constexpr, facts


@pytest.fixture(scope="module")
def ops():
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "gluon_kernels"))
    try:
        import gluon_launch_values
    finally:
        sys.path.pop(0)
    return gluon_launch_values


def _direct(kernel, signature: dict, constexprs: dict, attrs: dict, arch: str, **options) -> dict:
    """Counts of ``triton.compile(GluonASTSource(...))`` for ``arch``, the signature written out."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    from vgprscope.runtime.stored import cuobjdump_resources

    names = [p.name for p in kernel.params]
    hip = arch.startswith("gfx")
    target = GPUTarget("hip", arch, 64) if hip else GPUTarget("cuda", int(arch[3:]), 32)
    src = GluonASTSource(kernel, signature, {(names.index(k),): v for k, v in constexprs.items()},
                         {(names.index(k),): v for k, v in attrs.items()})
    k = triton.compile(src, target=target, options=options)
    if hip:
        u = parse_amdgcn(k.asm["amdgcn"], k.metadata.shared)
        return {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
    r = parse_cuobjdump_resources(cuobjdump_resources(k.asm["cubin"]), k.metadata.name)
    return {"regs": r["REG"], "stack": r.get("STACK", 0), "shared": r.get("SHARED", 0) + k.metadata.shared}


def _counts(row) -> dict:
    assert row.status == "ok", row.status
    u = row.usage
    if row.arch.startswith("gfx"):
        return {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
    return {"regs": u.regs, "stack": u.stack_bytes, "shared": u.shared_bytes}


def test_a_gluon_layout_is_named_by_its_class_and_fields_and_decodes_to_an_equal_layout():
    from triton.experimental.gluon import language as gl

    blocked = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    for layout in (blocked, gl.SliceLayout(1, blocked),
                   gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)):
        encoded = constexpr.encode(layout)
        assert constexpr.unsupported(encoded) is None, encoded
        assert constexpr.decode(encoded) == layout


def test_a_list_outside_an_object_is_still_unnamed():
    """Only a layout's or descriptor's own fields are lists the codec names (what Inductor's meta records
    as unsupported stays so)."""
    assert constexpr.unsupported(constexpr.encode([1, 2])) is not None


@pytest.mark.parametrize("arch", ["gfx942", "sm_90"])
def test_a_layout_passed_as_a_constexpr_argument_compiles_as_a_direct_gluon_compile(ops, arch):
    from triton.experimental.gluon import language as gl

    layout = gl.BlockedLayout([4], [64 if arch.startswith("gfx") else 32], [4], [0])
    f32 = vgprscope.pointer("fp32")
    (row,) = vgprscope.analyze(ops.layout_copy, f32, f32, 1000, 1024, layout, arch=arch, jobs=1,
                               num_warps=4).records
    ptr = [["tt.divisibility", 16]] + ([["tt.pointer_range", 32]] if arch.startswith("gfx") else [])
    direct = _direct(ops.layout_copy, {"in_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr",
                                       "layout": "constexpr"},
                     {"BLOCK": 1024, "layout": layout}, {"in_ptr": ptr, "out_ptr": ptr}, arch, num_warps=4)
    assert _counts(row) == direct


def test_a_tma_descriptor_argument_is_recorded_with_its_type_and_rebuilt_for_the_binder(ops):
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    smem = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    desc = TensorDescriptor(vgprscope.pointer("fp16"), [256, 64], [64, 1], [64, 64], smem)
    fact, why = facts.launch_fact("in_desc", False, desc, desc.__mangle__())
    assert why is None
    assert fact["type"] == desc.__mangle__()
    back = facts.stand_in(fact)
    assert type(back) is TensorDescriptor and back.__mangle__() == desc.__mangle__()
    assert (back.shape, back.strides, back.block_shape, back.layout) == ([256, 64], [64, 1], [64, 64], smem)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_a_kernel_taking_a_tma_descriptor_compiles_as_a_direct_gluon_compile(ops, arch):
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    smem = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    desc = TensorDescriptor(vgprscope.pointer("fp16"), [256, 64], [64, 1], [64, 64], smem)
    reg = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    (row,) = vgprscope.analyze(ops.tma_tile_copy, desc, vgprscope.pointer("fp16"), reg, arch=arch, jobs=1,
                               num_warps=4).records
    direct = _direct(ops.tma_tile_copy, {"in_desc": desc.__mangle__(), "out_ptr": "*fp16", "layout": "constexpr"},
                     {"layout": reg}, {"out_ptr": [["tt.divisibility", 16]]}, arch, num_warps=4)
    assert _counts(row) == direct
    assert row.usage.shared_bytes >= 64 * 64 * 2  # the descriptor's tile is staged in shared memory


@pytest.mark.parametrize("num_warps", [4, 8])
def test_num_warps_naming_a_parameter_and_the_option_reaches_both_as_in_tritons_jit(ops, num_warps):
    """Triton's JIT parses every launch keyword as a compile option, so ``num_warps=8`` given to a kernel with
    a ``num_warps`` parameter is the parameter's value and the compile's warp count alike (a layout over 8
    warps in an 8-warp compile)."""
    f32 = vgprscope.pointer("fp32")
    (row,) = vgprscope.analyze(ops.warps_param_copy, f32, f32, 4096, 1024, arch="sm_90", jobs=1,
                               num_warps=num_warps).records
    direct = _direct(ops.warps_param_copy, {"in_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                            "BLOCK": "constexpr", "num_warps": "constexpr"},
                     {"BLOCK": 1024, "num_warps": num_warps},
                     {"in_ptr": [["tt.divisibility", 16]], "out_ptr": [["tt.divisibility", 16]],
                      "n": [["tt.divisibility", 16]]}, "sm_90", num_warps=num_warps)
    assert _counts(row) == direct
