"""Shared LLVM code generator: kernel IR → LLVM IR text → (worker process) object code.

``emit_llvm_ir`` lowers a kernel for a :class:`TargetDescription`; ``compile_llvm`` turns
the text into object code, assembly, PTX or SPIR-V in a restartable worker process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accy.codegen.target import (
    GENERATOR_REVISION,
    BaseTarget,
    TargetDescription,
    llvm_type,
    memory_type,
)

if TYPE_CHECKING:
    from accy.codegen.llvm import emit_llvm_ir, emit_llvm_module, partition_regions
    from accy.codegen.worker import CodegenRequest, compile_llvm, compile_llvm_many, start_worker

__all__ = [
    "GENERATOR_REVISION",
    "BaseTarget",
    "CodegenRequest",
    "TargetDescription",
    "compile_llvm",
    "compile_llvm_many",
    "emit_llvm_ir",
    "emit_llvm_module",
    "llvm_type",
    "memory_type",
    "partition_regions",
    "start_worker",
]


def __getattr__(name: str) -> object:
    # loaded on first use: loading a cached program needs neither the generator nor the worker
    if name in ("emit_llvm_ir", "emit_llvm_module", "partition_regions"):
        from accy.codegen import llvm

        return getattr(llvm, name)
    if name in ("CodegenRequest", "compile_llvm", "compile_llvm_many", "start_worker"):
        from accy.codegen import worker

        return getattr(worker, name)
    raise AttributeError(f"module 'accy.codegen' has no attribute {name!r}")
