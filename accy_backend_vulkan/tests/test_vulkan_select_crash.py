"""LLVM 22's SPIR-V backend crashes on some float selects (issue 10): the worker dies on
``select(x < 0.0, -m, m)`` inside a second select (a GELU's tanh). The SPIR-V compile path
(shared by Vulkan and OpenCL) retries once with the selects done on integer bits; a crash
that persists is a CodegenError naming the kernel, never a dead process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from accy.codegen.spirv import instructions, integer_selects, spirv_from_llvm, words
from accy.errors import CodegenError
from accy_backend_vulkan.target import VulkanTarget

CRASH = Path(__file__).parent / "data" / "select_crash.ll"


def test_integer_selects_rewrites_only_f32_selects() -> None:
    text = ("  %r = select i1 %c, float %a, float 0x3FF0000000000000\n"
            "  %k = select i1 %c, i32 %a, i32 %b\n"
            "  %d = select i1 %c, double %a, double %b\n")
    out = integer_selects(text).splitlines()
    assert out[:4] == ["  %r.sa = bitcast float %a to i32",
                       "  %r.sb = bitcast float 0x3FF0000000000000 to i32",
                       "  %r.si = select i1 %c, i32 %r.sa, i32 %r.sb",
                       "  %r = bitcast i32 %r.si to float"]
    assert out[4:] == text.splitlines()[1:]


def test_a_select_that_crashes_the_backend_compiles_with_the_workaround() -> None:
    spirv = spirv_from_llvm(CRASH.read_text(), VulkanTarget(), "gelu")
    assert any(op == 54 for _, _, op in instructions(words(spirv)))  # an OpFunction


class _AlwaysCrashes(VulkanTarget):
    def request(self, llvm_ir: str):
        return replace(super().request(llvm_ir), abort_for_testing=True)


def test_a_crash_that_persists_is_a_codegen_error_naming_the_kernel() -> None:
    with pytest.raises(CodegenError, match="crashed on kernel 'gelu'") as info:
        spirv_from_llvm(CRASH.read_text(), _AlwaysCrashes(), "gelu")
    assert info.value.crashed
