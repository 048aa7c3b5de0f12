"""CudaTarget and PTX generation without a device (llvmlite only; ptxas when present)."""

from __future__ import annotations

import pytest
from accy.errors import CapabilityError, CompileError
from accy.kernel import (
    AtomicRMW,
    Barrier,
    BufferParam,
    If,
    Kernel,
    Load,
    ScalarParam,
    SharedArray,
    SharedLoad,
    SharedStore,
    Store,
    ThreadId,
    Var,
    binary,
    const,
    unary,
)
from accy.testing.kernels import prefetching
from accy_backend_cuda.plugin import open_compile_only
from accy_backend_cuda.target import (
    FASTMATH_LIBRARY,
    LLVM_MAX_PTX_ISA,
    NVPTX64_DATA_LAYOUT,
    CudaTarget,
    parse_sm,
)
from accy_backend_cuda.toolchain import check_ptx, find_libdevice, find_ptxas

GID, LID = ThreadId("global"), ThreadId("local")
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found on PATH/CUDA_HOME")
needs_libdevice = pytest.mark.skipif(find_libdevice() is None, reason="libdevice not found")


def kernel(op: str = "tanh", dtype: str = "f32") -> Kernel:
    """y[i] = op(x[i]) guarded by n, plus a shared-memory round trip and a float atomic."""
    x = Load("x", GID, dtype)
    return Kernel(
        f"k_{op}_{dtype}",
        buffers=(BufferParam("y", dtype, "write"), BufferParam("x", dtype, "read"),
                 BufferParam("acc", "f32", "readwrite")),
        scalars=(ScalarParam("n", "i32"),),
        workgroup_size=128,
        shared=(SharedArray("tile", dtype, 128),),
        body=(
            If(binary("lt", GID, Var("n", "i32")), (SharedStore("tile", LID, x),)),
            Barrier(),
            If(binary("lt", GID, Var("n", "i32")), (
                Store("y", GID, unary(op, SharedLoad("tile", LID, dtype))),
                AtomicRMW("add", "acc", const(0, "i32"), const(1.0, "f32")),
            )),
        ),
    )


def test_data_layout_matches_llvm():
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    tm = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(
        cpu="sm_90", features=f"+ptx{LLVM_MAX_PTX_ISA}")
    assert str(tm.target_data) == NVPTX64_DATA_LAYOUT


def test_parse_sm_forms_and_unknown():
    assert parse_sm("sm_90") == parse_sm("9.0") == parse_sm(90) == 90
    with pytest.raises(CapabilityError, match=r"'sm_42' is not a known SM; known: .*sm_80"):
        parse_sm("sm_42")


def test_ptx_isa_default_floor_and_cap():
    assert CudaTarget(80).features == "+ptx80"
    assert CudaTarget(100).ptx_isa == 86  # the SM's minimum wins over the default 8.0
    assert CudaTarget(90, ptx_isa=200).ptx_isa == LLVM_MAX_PTX_ISA


def test_math_lowering_with_and_without_libdevice():
    with_lib, without = CudaTarget(90, libdevice="/x/libdevice.10.bc"), CudaTarget(90)
    assert with_lib.math_function("exp", "f32") == "__nv_expf"
    assert with_lib.math_function("pow", "f64") == "__nv_pow"
    assert with_lib.math_function("sqrt", "f64") == "llvm.sqrt.f64"
    assert without.math_function("tanh", "f32") == "accy_cuda_fast_tanhf"
    assert without.math_function("exp", "f64") is None
    assert without.link_libraries() == (FASTMATH_LIBRARY,)


def test_f64_transcendental_without_libdevice_is_a_capability_error():
    with pytest.raises(CapabilityError, match=r"f64 'exp' needs libdevice.*compute in f32"):
        CudaTarget(90).legalize(kernel("exp", "f64"))


def test_oversize_workgroup_is_refused():
    k = Kernel("big", (BufferParam("y", "f32", "write"),), (), (), workgroup_size=2048)
    with pytest.raises(CapabilityError, match="at most 1024 on cuda, got 2048"):
        CudaTarget(90).legalize(k)


def test_entry_and_idioms_in_llvm_ir():
    text = open_compile_only(90).emit(kernel(), "llvm").decode()
    assert 'define ptx_kernel void @k_tanh_f32(ptr addrspace(1) noalias %b0' in text
    assert "ptr addrspace(1) noalias readonly %b1" in text
    assert '"nvvm.maxntid"="128"' in text
    assert "@llvm.nvvm.read.ptx.sreg.tid.x" in text
    assert "internal addrspace(3) global [128 x float]" in text
    assert 'syncscope("device") monotonic' in text


@pytest.mark.parametrize("sm", [80, 90])
def test_ptx_has_the_expected_instructions(sm):
    ptx = open_compile_only(sm).emit(kernel(), "ptx").decode()
    assert f".target sm_{sm}" in ptx and ".visible .entry k_tanh_f32(" in ptx
    for needle in ("bar.sync", "atom.global.add.f32", "st.shared.", "ld.shared.", ".maxntid 128"):
        assert needle in ptx, needle


@needs_libdevice
def test_libdevice_is_linked_and_dead_stripped():
    ptx = open_compile_only(90).emit(kernel("exp"), "ptx").decode()
    assert len(ptx) < 40_000  # one exp, not the whole 790 KB library


@needs_ptxas
@pytest.mark.parametrize("sm", [80, 90])
@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sin", "cos", "exp2", "log2", "sqrt",
                                "floor", "rsqrt"])
def test_ptxas_accepts_math(op, sm):
    be = open_compile_only(sm)
    check_ptx(be.emit(kernel(op), "ptx").decode(), sm, f"math_{op}")
    if find_libdevice():
        check_ptx(be.emit(kernel(op, "f64"), "ptx").decode(), sm, f"math_{op}_f64")


@needs_ptxas
def test_fastmath_fallback_assembles():
    from accy_backend_cuda.backend import CudaBackend

    be = CudaBackend(None, sm=90)
    be.target = CudaTarget(90, libdevice=None)
    for op in ("exp", "log", "tanh", "sin", "cos", "exp2", "log2"):
        ptx = be.emit(kernel(op), "ptx").decode()
        assert "approx" in ptx
        check_ptx(ptx, 90, f"fast_{op}")


@needs_ptxas
def test_ptxas_rejection_carries_a_repro():
    with pytest.raises(CompileError) as info:
        check_ptx(".version 8.0\n.target sm_90\n.address_size 64\nnonsense;\n", 90, "bad")
    assert info.value.tool == "ptxas"
    assert "--gpu-name sm_90" in info.value.repro
    assert "reproduce with:" in str(info.value)


def test_integer_and_atomic_kernel_assembles_everywhere():
    k = Kernel(
        "hist", (BufferParam("h", "u32", "readwrite"), BufferParam("v", "i64", "read")),
        (ScalarParam("n", "i32"), ScalarParam("flag", "bool")), workgroup_size=64,
        body=(If(binary("lt", GID, Var("n", "i32")), (
            AtomicRMW("add", "h", const(1, "i32"), const(1, "u32")),
            AtomicRMW("max", "h", const(0, "i32"), const(7, "u32")),
        )),),
    )
    ptx = open_compile_only(90).emit(k, "ptx").decode()
    assert "atom.global.add.u32" in ptx or "red.global.add.u32" in ptx
    if find_ptxas():
        check_ptx(ptx, 90, "hist")


def test_prefetch_is_dropped_and_assembles():
    ptx = open_compile_only(90).emit(prefetching(), "ptx").decode()
    assert "prefetch" not in ptx
    if find_ptxas():
        check_ptx(ptx, 90, "pf")
