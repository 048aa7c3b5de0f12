"""SPIR-V after LLVM: binary patches, the unknown-import check and ``spirv-val``.

LLVM 22's SPIR-V backend needs three fixes after ``emit_object`` (``LLVM-TARGETS.md`` §3):

- :func:`fix_barriers`: ``OpControlBarrier`` semantics ``0x10`` lack the WorkgroupMemory
  bit, so shared memory is not made visible (wrong sums on lavapipe); rewrite to ``0x108``
  (AcquireRelease | WorkgroupMemory, what glslang emits for ``barrier()``).
- :func:`null_to_const`: scalar ``OpConstantNull`` reused as an ``OpAccessChain`` struct
  index is invalid; rewrite to ``OpConstant 0`` / ``OpConstantFalse``.
- :func:`imports`: an unknown ``llvm.spv.*`` call silently becomes an imported function
  (``LinkageAttributes … Import``) that drivers crash on; :func:`finish_spirv` refuses it.

Binary layout: SPIR-V specification §2.3 (5-word header, then ``wordcount << 16 | opcode``).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from accy.errors import CodegenError, CompileError

_CODEGEN_ATTEMPTS = 3

__all__ = [
    "compile_spirv",
    "duplicate_ids",
    "finish_spirv",
    "fix_barriers",
    "imports",
    "null_to_const",
    "validate",
]

_OP_NAME, _OP_DECORATE, _OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT = 5, 71, 20, 21, 22
_OP_CONSTANT_FALSE, _OP_CONSTANT, _OP_CONSTANT_NULL, _OP_CONTROL_BARRIER = 41, 43, 46, 224
_DECORATION_LINKAGE, _LINKAGE_IMPORT = 41, 1
_BARRIER_SEMANTICS = 0x108


def _words(spirv: bytes) -> list[int]:
    if len(spirv) % 4 or len(spirv) < 20 or spirv[:4] != b"\x03\x02\x23\x07":
        raise CodegenError(f"codegen: not a little-endian SPIR-V module ({len(spirv)} bytes)")
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


def _pack(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def _instructions(words: list[int]) -> Iterator[tuple[int, int, int]]:
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            raise CodegenError("codegen: malformed SPIR-V (zero word count)")
        yield i, count, opcode
        i += count


def fix_barriers(spirv: bytes) -> bytes:
    """Return ``spirv`` with every ``OpControlBarrier``'s semantics set to ``0x108``."""
    words = _words(spirv)
    uint_type, type_end, constants, barriers = None, 0, {}, []
    for i, n, op in _instructions(words):
        if op == _OP_TYPE_INT and words[i + 2] == 32 and uint_type is None:
            uint_type, type_end = words[i + 1], i + n
        elif op == _OP_CONSTANT and n == 4 and words[i + 1] == uint_type:
            constants.setdefault(words[i + 3], words[i + 2])
        elif op == _OP_CONTROL_BARRIER:
            barriers.append(i)
    if not barriers or uint_type is None:
        return spirv
    inserted: list[int] = []
    semantics_id = constants.get(_BARRIER_SEMANTICS)
    if semantics_id is None:
        semantics_id = words[3]
        words[3] += 1  # id bound
        inserted = [(4 << 16) | _OP_CONSTANT, uint_type, semantics_id, _BARRIER_SEMANTICS]
    for b in barriers:
        words[b + 3] = semantics_id
    return _pack(words[:type_end] + inserted + words[type_end:])


def null_to_const(spirv: bytes) -> bytes:
    """Return ``spirv`` with scalar ``OpConstantNull`` rewritten as explicit zero constants."""
    words = _words(spirv)
    types: dict[int, tuple[str, int]] = {}
    out = words[:5]
    for i, n, op in _instructions(words):
        inst = words[i : i + n]
        if op in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
            types[words[i + 1]] = ("number", words[i + 2])
        elif op == _OP_TYPE_BOOL:
            types[words[i + 1]] = ("bool", 1)
        elif op == _OP_CONSTANT_NULL and words[i + 1] in types:
            kind, width = types[words[i + 1]]
            if kind == "bool":
                inst = [(3 << 16) | _OP_CONSTANT_FALSE, words[i + 1], words[i + 2]]
            else:
                extra = 2 if width == 64 else 1
                inst = [((3 + extra) << 16) | _OP_CONSTANT, words[i + 1], words[i + 2]]
                inst += [0] * extra
        out += inst
    return _pack(out)


def _string(words: list[int]) -> str:
    raw = _pack(words)
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def imports(spirv: bytes) -> list[str]:
    """Return the names the module imports (``LinkageAttributes … Import``)."""
    words = _words(spirv)
    names = []
    for i, n, op in _instructions(words):
        if (
            op == _OP_DECORATE
            and words[i + 2] == _DECORATION_LINKAGE
            and words[i + n - 1] == _LINKAGE_IMPORT
        ):
            name = _string(words[i + 3 : i + n - 1])
            if not name.startswith("__spirv_BuiltIn"):
                names.append(name)
    return names


_TYPE_OPCODES = frozenset(range(19, 40)) | {7, 11, 248}  # OpType*, OpString, ExtInstImport, Label
_TYPED_DEFINITIONS = frozenset({41, 42, 43, 44, 45, 46, 54, 55, 59})  # constants, function, var


def duplicate_ids(spirv: bytes) -> list[int]:
    """Return result ids defined twice among types, labels, constants, functions, variables.

    LLVM 22's SPIR-V backend sometimes (depending on what the same process compiled before)
    numbers ``OpLabel`` ids without the module-wide remapping, so a label reuses the id of
    ``OpTypeVoid`` or another label; :mod:`accy_backend_vulkan.driver` then recompiles in a
    fresh worker process.
    """
    words = _words(spirv)
    seen: set[int] = set()
    duplicates = []
    for i, _, op in _instructions(words):
        if op in _TYPE_OPCODES:
            rid = words[i + 1]
        elif op in _TYPED_DEFINITIONS:
            rid = words[i + 2]
        else:
            continue
        if rid in seen:
            duplicates.append(rid)
        seen.add(rid)
    return duplicates


def finish_spirv(spirv: bytes, kernel_name: str) -> bytes:
    """Apply the patches and refuse a module that imports unknown functions.

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
    return fix_barriers(null_to_const(spirv))


def compile_spirv(kernel: Any, target: Any) -> bytes:
    """Return the patched SPIR-V of ``kernel`` for ``target`` (a ``VulkanTarget``).

    A module with duplicate ids (see :func:`duplicate_ids`) is recompiled in a fresh worker.

    Raises:
        CapabilityError: the target refuses the kernel. CodegenError: LLVM failed, the
            module imports an unknown function, or every attempt defined ids twice.
    """
    from accy.codegen import compile_llvm, emit_llvm_ir
    from accy.codegen.worker import shutdown_worker

    text = emit_llvm_ir(kernel, target)
    for _attempt in range(_CODEGEN_ATTEMPTS):
        spirv = compile_llvm(target.request(text))["spirv-obj"]
        if not duplicate_ids(spirv):
            return finish_spirv(spirv, kernel.name)
        shutdown_worker()  # stale SPIR-V backend state in the worker: start afresh
    raise CodegenError(
        f"codegen: SPIR-V of kernel {kernel.name!r} defines ids twice after "
        f"{_CODEGEN_ATTEMPTS} fresh compilations; please report"
    )


def validate(spirv: bytes, kernel_name: str = "kernel", target_env: str = "vulkan1.3") -> bool:
    """Run ``spirv-val --target-env`` on ``spirv``; return False when it is not installed.

    Raises:
        CompileError: the validator rejects the module (its stderr; ``repro`` is the path
            of the kept ``.spv`` file).
    """
    tool = shutil.which("spirv-val")
    if tool is None:
        return False
    with tempfile.NamedTemporaryFile(suffix=".spv", delete=False) as f:
        f.write(spirv)
        path = Path(f.name)
    result = subprocess.run(
        [tool, "--target-env", target_env, str(path)], capture_output=True, text=True, timeout=60
    )
    if result.returncode != 0:
        message = (result.stderr or result.stdout).strip()
        first = message.splitlines()[0] if message else "(no output)"
        raise CompileError(
            f"spirv-val rejected kernel {kernel_name!r}: {first}; module kept at {path}",
            tool="spirv-val",
            stderr=message,
            repro=str(path),
        )
    path.unlink()
    return True
