"""VulkanTarget without a device: LLVM IR shape, SPIR-V patches, legalization, spirv-val."""

from __future__ import annotations

import shutil
import struct

import pytest
import vulkan_kernels as K
from accy.codegen import compile_llvm, emit_llvm_ir
from accy.errors import CapabilityError, CodegenError
from accy.testing.kernels import prefetching
from accy_backend_vulkan.target import VulkanTarget, push_layout
from accy_backend_vulkan.toolchain import (
    compile_spirv,
    duplicate_ids,
    finish_spirv,
    fix_barriers,
    imports,
    null_to_const,
    validate,
)

ALL = [
    K.scale(),
    K.scale("f64"),
    K.scale("i8"),
    K.scale("u16"),
    K.unary_f("exp"),
    K.unary_f("sqrt", "f64"),
    K.tree_sum(),
    K.histogram(),
    K.histogram("f32"),
    K.group_ids(),
    K.loop_bool(),
]


def spirv_of(kernel, target=None):
    target = target or VulkanTarget()
    raw = compile_llvm(target.request(emit_llvm_ir(kernel, target)))["spirv-obj"]
    return raw, compile_spirv(kernel, target)


def instructions(spirv):
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        yield op, words[i : i + n]
        i += n


def test_ir_uses_unique_binding_names_and_push_constants():
    text = emit_llvm_ir(K.scale(), VulkanTarget())
    assert 'c"accy.b0.y\\00"' in text and 'c"accy.b1.x\\00"' in text
    assert "addrspace(13) global { i32, i32, double, i32, i32, i32 }" in text  # padded
    assert '"hlsl.numthreads"="64,1,1"' in text
    assert "cmpxchg" not in text


def test_push_layout_uses_natural_alignment():
    fields, size = push_layout(K.scale())
    assert [(f.name, f.offset_bytes) for f in fields] == [
        ("n", 0),
        ("a", 8),
        ("b", 16),
        ("flip", 20),
        ("num_groups", 24),
    ]
    assert size == 32


@pytest.mark.parametrize("kernel", ALL, ids=lambda k: k.name + "-" + k.buffers[0].dtype)
def test_every_module_validates_and_imports_nothing(kernel):
    raw, spirv = spirv_of(kernel)
    assert imports(spirv) == [] and duplicate_ids(spirv) == []
    if shutil.which("spirv-val"):
        assert validate(spirv, kernel.name)


def test_barrier_semantics_patched_to_workgroup_memory():
    raw, spirv = spirv_of(K.tree_sum())
    constants = {w[2]: w[3] for op, w in instructions(spirv) if op == 43 and len(w) == 4}
    barriers = [w for op, w in instructions(spirv) if op == 224]
    assert barriers and all(constants[w[3]] == 0x108 for w in barriers)
    assert fix_barriers(spirv) == spirv  # idempotent


def test_atomics_use_device_scope_relaxed():
    # relaxed: lavapipe ends an invocation at a non-relaxed atomic in a branch in a loop
    text = emit_llvm_ir(K.histogram(), VulkanTarget())
    assert 'syncscope("device") monotonic' in text


def test_null_to_const_keeps_valid_modules_valid():
    raw, _ = spirv_of(K.scale())
    assert not any(op == 46 for op, _ in instructions(null_to_const(raw)))


def test_unknown_import_is_refused():
    raw, _ = spirv_of(K.scale())
    # forge a LinkageAttributes Import decoration on id 1 named "llvm_spv_bogus"
    name = b"llvm_spv_bogus\0\0"
    words = list(struct.unpack(f"<{len(raw) // 4}I", raw))
    deco = [
        ((3 + len(name) // 4 + 1) << 16) | 71,
        1,
        41,
        *struct.unpack(f"<{len(name) // 4}I", name),
        1,
    ]
    forged = struct.pack(f"<{len(words) + len(deco)}I", *(words[:5] + deco + words[5:]))
    assert imports(forged) == ["llvm_spv_bogus"]
    with pytest.raises(CodegenError, match="imports unknown function"):
        finish_spirv(forged, "scale")


@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sin", "exp2"])
def test_f64_transcendentals_are_refused(op):
    with pytest.raises(CapabilityError, match=f"f64 {op}") as info:
        emit_llvm_ir(K.unary_f(op, "f64"), VulkanTarget())
    assert info.value.feature == "f64_math"


def test_missing_device_features_are_refused():
    target = VulkanTarget(frozenset({"i64"}))
    with pytest.raises(CapabilityError, match="dtype f64"):
        emit_llvm_ir(K.unary_f("sqrt", "f64"), target)
    with pytest.raises(CapabilityError, match="atomic add on f32"):
        emit_llvm_ir(K.histogram("f32"), target)


def test_sign_extension_avoids_sconvert():
    # lavapipe miscompares OpSConvert results with small constants (sext(x) < 0 is false)
    from accy.kernel import KernelBuilder, where

    kb = KernelBuilder("widen_compare", 64)
    out, x = kb.buffer("out", "i32", "write"), kb.buffer("x", "i32", "read")
    g = kb.global_id()
    kb.store(out, g, where(x[g].cast("i64") < 0, kb.const(1, "i32"), kb.const(0, "i32")))
    text = emit_llvm_ir(kb.build(), VulkanTarget())
    assert "ashr i64" in text  # the cast; index widening (sext + trunc) folds away


def test_push_block_pads_an_i64_after_an_odd_number_of_words():
    from accy.kernel import KernelBuilder

    kb = KernelBuilder("fill_after_odd", 64)
    out = kb.buffer("out", "i64", "write")
    n, value = kb.scalar("n", "i32"), kb.scalar("value", "i64")
    g = kb.global_id()
    with kb.if_(g < n):
        kb.store(out, g, value)
    kernel = kb.build()
    fields, size = push_layout(kernel)
    assert [f.offset_bytes for f in fields] == [0, 8, 16] and size == 24
    assert "{ i32, i32, i64, i32 }" in emit_llvm_ir(kernel, VulkanTarget())
    _, spirv = spirv_of(kernel)  # spirv-val (when installed) checks the Offset decorations
    if shutil.which("spirv-val"):
        assert validate(spirv, kernel.name)


@pytest.mark.parametrize("op", ["add", "max", "xchg"])
def test_i64_atomics_refused_before_llvm(op):
    # LLVM 22 aborts on any i64 atomicrmw for the Vulkan triple: refuse it in legalize
    from accy.kernel import KernelBuilder

    kb = KernelBuilder(f"atomic_{op}_i64", 64)
    y = kb.buffer("y", "i64", "readwrite")
    g = kb.global_id()
    kb.atomic(op, y, g % 4, g.cast("i64"))
    with pytest.raises(CapabilityError, match="i64") as info:
        emit_llvm_ir(kb.build(), VulkanTarget())
    assert info.value.feature == "int64_atomics"


def test_prefetch_is_dropped_and_the_module_validates():
    k = prefetching()
    assert "prefetch" not in emit_llvm_ir(k, VulkanTarget())
    _raw, spirv = spirv_of(k)
    if shutil.which("spirv-val"):
        assert validate(spirv, k.name)
