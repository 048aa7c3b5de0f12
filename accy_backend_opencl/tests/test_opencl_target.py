"""OpenCLTarget and the SPIR bridge without any OpenCL device (llvmlite only; the
translator test skips where llvm-spirv-15 is not installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import opencl_kernels as K
import pytest
from accy.codegen import emit_llvm_ir
from accy.codegen.spirv import emit_spirv, imports, instructions, null_to_const, words
from accy.errors import CapabilityError, CompileError
from accy.testing.kernels import prefetching
from accy_backend_opencl.bridge import find_translator, spir_bitcode
from accy_backend_opencl.target import OpenCLTarget, entry_name

_CONSTANT_NULL = 46
KERNELS = [K.scale("f32"), K.scale("f64"), K.tree_sum(), K.histogram("f32"),
           K.histogram("f64", "max"), K.histogram("i64"), K.group_ids(), K.unary_f("tanh", "f64")]


def test_entry_point_is_an_opencl_kernel_with_reqd_work_group_size():
    text = emit_llvm_ir(K.scale(), OpenCLTarget())
    assert 'target triple = "spirv64-unknown-unknown"' in text
    assert "define spir_kernel void @accy_scale_f32(ptr addrspace(1) noalias %b0" in text
    assert "i32 %s3.raw) #0 !reqd_work_group_size !0" in text  # bool travels as i32
    assert "!0 = !{i32 64, i32 1, i32 1}" in text
    assert "@_Z13get_global_idj(i32 0)" in text


def test_entry_names_are_c_identifiers_and_unique():
    assert entry_name("scale") == "accy_scale"
    assert entry_name("group.ids").startswith("accy_group_ids_")
    assert entry_name("group.ids") != entry_name("group_ids")


def test_barrier_local_memory_and_builtins():
    text = emit_llvm_ir(K.tree_sum(), OpenCLTarget())
    assert "call spir_func void @_Z7barrierj(i32 3)" in text
    assert "internal addrspace(3) global [64 x float]" in text


def test_float_atomics_are_a_cas_loop_unless_native():
    cas = emit_llvm_ir(K.histogram("f32"), OpenCLTarget(frozenset({"f64", "i64"})))
    assert "cmpxchg ptr addrspace(1)" in cas and "atomicrmw" not in cas
    native = emit_llvm_ir(K.histogram("f32"), OpenCLTarget())
    assert 'atomicrmw fadd ptr addrspace(1) %v' in native and "cmpxchg" not in native
    f64 = emit_llvm_ir(K.histogram("f64"), OpenCLTarget())  # native add is f32 only
    assert "cmpxchg ptr addrspace(1) %v" in f64 and "i64" in f64
    ints = emit_llvm_ir(K.histogram("i32"), OpenCLTarget())
    assert 'atomicrmw add ptr addrspace(1)' in ints and 'syncscope("device") monotonic' in ints


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_every_module_is_spirv_that_imports_nothing(kernel):
    spirv = emit_spirv(kernel, OpenCLTarget())
    assert words(spirv)[0] == 0x07230203
    assert imports(spirv) == []
    assert b"OpenCL.std" in spirv


@pytest.mark.parametrize("features, kernel, match", [
    (frozenset({"i64"}), K.scale("f64"), "dtype f64"),
    (frozenset({"f64", "i64"}), K.histogram("i64"), "cl_khr_int64_base_atomics"),
])
def test_missing_device_features_are_refused(features, kernel, match):
    with pytest.raises(CapabilityError, match=match):
        emit_llvm_ir(kernel, OpenCLTarget(features))


def test_device_limits_are_refused_before_llvm():
    with pytest.raises(CapabilityError, match="work-group size 64"):
        emit_llvm_ir(K.tree_sum(64), OpenCLTarget(max_workgroup_size=32))
    with pytest.raises(CapabilityError, match="256 bytes of shared memory"):
        emit_llvm_ir(K.tree_sum(64), OpenCLTarget(local_memory_bytes=128))


def test_fingerprint_follows_features():
    assert OpenCLTarget().fingerprint() != OpenCLTarget(frozenset({"i64"})).fingerprint()
    assert OpenCLTarget().fingerprint() == OpenCLTarget().fingerprint()


def test_null_constants_are_rewritten_for_the_translator():
    spirv = emit_spirv(K.scale(), OpenCLTarget())
    opcodes = [op for _, _, op in instructions(words(spirv))]
    assert _CONSTANT_NULL in opcodes  # LLVM emits scalar zeros as OpConstantNull
    fixed = [op for _, _, op in instructions(words(null_to_const(spirv)))]
    assert _CONSTANT_NULL not in fixed and len(fixed) == len(opcodes)


@pytest.mark.skipif(find_translator() is None, reason="llvm-spirv-15 not installed")
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_translator_turns_every_module_into_spir_bitcode(kernel):
    bitcode = spir_bitcode(emit_spirv(kernel, OpenCLTarget()), kernel.name)
    assert bitcode[:4] == b"BC\xc0\xde"


def test_translator_failure_is_a_compile_error_with_the_module_kept(tmp_path):
    tool = tmp_path / "llvm-spirv"
    tool.write_text("#!/bin/sh\necho 'InvalidModule: broken on purpose' >&2\nexit 3\n")
    tool.chmod(0o755)
    with pytest.raises(CompileError, match="broken on purpose") as info:
        spir_bitcode(emit_spirv(K.scale(), OpenCLTarget()), "scale", str(tool))
    assert Path(info.value.repro.split()[2]).exists()


def test_accy_compile_emits_spirv_without_any_opencl_device(tmp_path):
    golden = Path(__file__).resolve().parents[2] / "accy_core/tests/ir/golden/nn.accy"
    empty = tmp_path / "vendors"
    empty.mkdir()
    env = {"OCL_ICD_VENDORS": str(empty), "ACCY_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "accy", "compile", str(golden), "--backend", "opencl",
         "--emit", "spirv", "-o", str(out)],
        capture_output=True, text=True, timeout=300, env=_env(env),
    )
    assert result.returncode == 0, result.stderr
    files = sorted(out.glob("*.spv"))
    assert files and all(f.read_bytes()[:4] == b"\x03\x02\x23\x07" for f in files)
    backends = subprocess.run([sys.executable, "-m", "accy", "backends"], capture_output=True,
                              text=True, timeout=300, env=_env(env))
    line = next(ln for ln in backends.stdout.splitlines() if ln.startswith("opencl:"))
    assert line.startswith("opencl: unavailable (no OpenCL platform"), line


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    return {**os.environ, **extra}


def test_prefetch_is_dropped():
    k = prefetching()
    assert "prefetch" not in emit_llvm_ir(k, OpenCLTarget())
    assert words(emit_spirv(k, OpenCLTarget()))[0] == 0x07230203
