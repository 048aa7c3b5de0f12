"""SPIR-V after LLVM: binary patches, the unknown-import check and ``spirv-val``.

LLVM 22's SPIR-V backend needs three fixes after ``emit_object`` (``LLVM-TARGETS.md`` §3):

- :func:`fix_barriers`: ``OpControlBarrier`` semantics ``0x10`` lack the WorkgroupMemory
  bit, so shared memory is not made visible (wrong sums on lavapipe); rewrite to ``0x108``
  (AcquireRelease | WorkgroupMemory, what glslang emits for ``barrier()``).
- :func:`null_to_const`: scalar ``OpConstantNull`` reused as an ``OpAccessChain`` struct
  index is invalid; rewrite to ``OpConstant 0`` / ``OpConstantFalse``.
- :func:`imports`: an unknown ``llvm.spv.*`` call silently becomes an imported function
  (``LinkageAttributes … Import``) that drivers crash on; :func:`finish_spirv` refuses it.
- :mod:`accy_backend_vulkan.float_controls`: LLVM emits no float-controls execution modes;
  request IEEE NaN/inf/-0.0 semantics and exact (``NoContraction``) float arithmetic.

The word-level helpers, :func:`null_to_const`, :func:`imports` and :func:`duplicate_ids` live
in :mod:`accy.codegen.spirv` (shared with the OpenCL target) and are re-exported here.

Binary layout: SPIR-V specification §2.3 (5-word header, then ``wordcount << 16 | opcode``).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from accy.codegen.spirv import (  # shared with every SPIR-V target (OpenCL)
    duplicate_ids,
    imports,
    instructions,
    null_to_const,
    pack,
    spirv_from_llvm,
    words,
)
from accy.errors import CodegenError, CompileError

from accy_backend_vulkan.float_controls import add_float_controls, exact_float_arithmetic

__all__ = [
    "compile_spirv",
    "duplicate_ids",
    "finish_spirv",
    "fix_barriers",
    "imports",
    "null_to_const",
    "validate",
]

_OP_TYPE_INT, _OP_CONSTANT, _OP_CONTROL_BARRIER = 21, 43, 224
_BARRIER_SEMANTICS = 0x108


def fix_barriers(spirv: bytes) -> bytes:
    """Return ``spirv`` with every ``OpControlBarrier``'s semantics set to ``0x108``."""
    w = words(spirv)
    uint_type, type_end, constants, barriers = None, 0, {}, []
    for i, n, op in instructions(w):
        if op == _OP_TYPE_INT and w[i + 2] == 32 and uint_type is None:
            uint_type, type_end = w[i + 1], i + n
        elif op == _OP_CONSTANT and n == 4 and w[i + 1] == uint_type:
            constants.setdefault(w[i + 3], w[i + 2])
        elif op == _OP_CONTROL_BARRIER:
            barriers.append(i)
    if not barriers or uint_type is None:
        return spirv
    inserted: list[int] = []
    semantics_id = constants.get(_BARRIER_SEMANTICS)
    if semantics_id is None:
        semantics_id = w[3]
        w[3] += 1  # id bound
        inserted = [(4 << 16) | _OP_CONSTANT, uint_type, semantics_id, _BARRIER_SEMANTICS]
    for b in barriers:
        w[b + 3] = semantics_id
    return pack(w[:type_end] + inserted + w[type_end:])


def finish_spirv(
    spirv: bytes, kernel_name: str, float_controls: dict[str, frozenset[int]] | None = None
) -> bytes:
    """Apply the patches (IEEE ones from :mod:`.float_controls` too) and refuse a module
    that imports unknown functions.

    Raises:
        CodegenError: the module imports a function (an intrinsic LLVM did not know).
    """
    unknown = imports(spirv)
    if unknown:
        raise CodegenError(
            f"codegen: SPIR-V of kernel {kernel_name!r} imports unknown function(s) "
            f"{', '.join(sorted(unknown))}: LLVM's SPIR-V backend did not recognise the "
            "call; please report",
        )
    patched = exact_float_arithmetic(fix_barriers(null_to_const(spirv)))
    return add_float_controls(patched, float_controls) if float_controls else patched


def compile_spirv(kernel: Any, target: Any) -> bytes:
    """Return the patched SPIR-V of ``kernel`` for ``target`` (a ``VulkanTarget``).

    Compiled by :func:`~accy.codegen.spirv.spirv_from_llvm`: a module with duplicate ids is
    recompiled in a fresh worker, a crash of LLVM's SPIR-V backend is retried once with the
    float selects done on integers.

    Raises:
        CapabilityError: the target refuses the kernel. CodegenError: LLVM failed or crashed
            (workaround included), the module imports an unknown function, or every attempt
            defined ids twice.
    """
    from accy.codegen import emit_llvm_ir

    spirv = spirv_from_llvm(emit_llvm_ir(kernel, target), target, kernel.name)
    return finish_spirv(spirv, kernel.name, getattr(target, "float_controls", None))


def validate(spirv: bytes, kernel_name: str = "kernel", target_env: str = "vulkan1.3") -> bool:
    """Run ``spirv-val --target-env`` on ``spirv``; return False when it is not installed.

    The module goes to a temporary file that is removed whatever the outcome (a rejected
    module used to stay behind as ``/tmp/tmp*.spv``).

    Raises:
        CompileError: the validator rejects the module or does not answer within 60 s
            (``stderr``: its output; ``repro``: the command, to run on the module that
            ``backend.emit(kernel, "llvm")`` leads to).
    """
    tool = shutil.which("spirv-val")
    if tool is None:
        return False
    with tempfile.TemporaryDirectory(prefix="accy-spirv-val-") as tmp:
        path = Path(tmp) / f"{_safe(kernel_name)}.spv"
        path.write_bytes(spirv)
        command = [tool, "--target-env", target_env, str(path)]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired as e:
            raise CompileError(
                f"spirv-val did not finish within 60 s on kernel {kernel_name!r}",
                tool="spirv-val",
                repro=" ".join(command),
            ) from e
    if result.returncode != 0:
        message = (result.stderr or result.stdout).strip()
        first = message.splitlines()[0] if message else "(no output)"
        raise CompileError(
            f"spirv-val rejected kernel {kernel_name!r}: {first}",
            tool="spirv-val",
            stderr=message,
            repro=f"spirv-val --target-env {target_env} {_safe(kernel_name)}.spv",
        )
    return True


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80] or "kernel"
