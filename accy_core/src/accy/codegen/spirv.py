"""SPIR-V binaries from LLVM's SPIR-V target: word-level checks and patches shared by targets.

LLVM 22's SPIR-V backend (``emit_object``) has traps that every SPIR-V target meets
(``LLVM-TARGETS.md`` §3):

- :func:`imports`: an unknown ``llvm.spv.*`` or builtin call silently becomes an imported
  function (``LinkageAttributes … Import``) that drivers crash on or fail to link;
  :func:`emit_spirv` refuses it.
- :func:`duplicate_ids`: depending on what the same process compiled before, the backend
  sometimes numbers ``OpLabel`` ids without the module-wide remapping; :func:`emit_spirv`
  recompiles in a fresh worker process.
- :func:`null_to_const`: scalar ``OpConstantNull`` is legal, but it is invalid where it is
  reused as an ``OpAccessChain`` struct index (Vulkan) and the Khronos translator
  ``llvm-spirv-15`` asserts on it (OpenCL bridge); rewrite to ``OpConstant 0`` /
  ``OpConstantFalse``.
- :data:`CODEGEN_OPT_LEVEL`: at codegen level 1+ LLVM's loop strength reduction rewrites
  index arithmetic such as ``(r / 9) % 4`` into ``zext(trunc(r / 9) to i2)``, and the SPIR-V
  backend widens the ``i2`` to ``i8`` without masking it (``OpBitwiseAnd x, 255``): the sum
  of ``ones((3, 4, 9))`` read past its input and gave 72 on Vulkan and OpenCL. Every SPIR-V
  target therefore compiles at codegen level 0 (the driver optimizes the SPIR-V anyway).
- :func:`integer_selects`: the backend crashes (segfault, or the assertion ``Expecting an
  instruction that defines the register`` in ``SPIRVPreLegalizer``) on some float
  selects, e.g. ``select(x < 0.0, -m, m)`` nested in a second select inside a GELU's
  tanh; where it does, :func:`spirv_from_llvm` recompiles once with every ``f32`` select done
  on the bits (``bitcast`` to ``i32``, exact), which it compiles; a second crash is a
  :class:`~accy.errors.CodegenError` naming the kernel, never a dead process.

Binary layout: SPIR-V specification §2.3 (5-word header, then ``wordcount << 16 | opcode``).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from typing import Any

from accy.errors import CodegenError

__all__ = [
    "CODEGEN_OPT_LEVEL",
    "duplicate_ids",
    "emit_spirv",
    "imports",
    "instructions",
    "integer_selects",
    "null_to_const",
    "pack",
    "spirv_from_llvm",
    "words",
]

_CODEGEN_ATTEMPTS = 3
#: LLVM codegen level of every SPIR-V target (see the module docstring: LSR makes ``i2``)
CODEGEN_OPT_LEVEL = 0
_OP_DECORATE, _OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT = 71, 20, 21, 22
_OP_CONSTANT_FALSE, _OP_CONSTANT, _OP_CONSTANT_NULL = 41, 43, 46
_DECORATION_LINKAGE, _LINKAGE_IMPORT = 41, 1
_TYPE_OPCODES = frozenset(range(19, 40)) | {7, 11, 248}  # OpType*, OpString, ExtInstImport, Label
_TYPED_DEFINITIONS = frozenset({41, 42, 43, 44, 45, 46, 54, 55, 59})  # constants, function, var


def words(spirv: bytes) -> list[int]:
    """Return the 32-bit words of a little-endian SPIR-V module.

    Raises:
        CodegenError: not a little-endian SPIR-V module.
    """
    if len(spirv) % 4 or len(spirv) < 20 or spirv[:4] != b"\x03\x02\x23\x07":
        raise CodegenError(f"codegen: not a little-endian SPIR-V module ({len(spirv)} bytes)")
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


def pack(module_words: list[int]) -> bytes:
    """Return the little-endian bytes of ``module_words``."""
    return struct.pack(f"<{len(module_words)}I", *module_words)


def instructions(module_words: list[int]) -> Iterator[tuple[int, int, int]]:
    """Yield ``(word index, word count, opcode)`` of every instruction after the header.

    Raises:
        CodegenError: an instruction has word count 0 (malformed module).
    """
    i = 5
    while i < len(module_words):
        count, opcode = module_words[i] >> 16, module_words[i] & 0xFFFF
        if count == 0:
            raise CodegenError("codegen: malformed SPIR-V (zero word count)")
        yield i, count, opcode
        i += count


def null_to_const(spirv: bytes) -> bytes:
    """Return ``spirv`` with scalar ``OpConstantNull`` rewritten as explicit zero constants."""
    w = words(spirv)
    types: dict[int, tuple[str, int]] = {}
    out = w[:5]
    for i, n, op in instructions(w):
        inst = w[i : i + n]
        if op in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
            types[w[i + 1]] = ("number", w[i + 2])
        elif op == _OP_TYPE_BOOL:
            types[w[i + 1]] = ("bool", 1)
        elif op == _OP_CONSTANT_NULL and w[i + 1] in types:
            kind, width = types[w[i + 1]]
            if kind == "bool":
                inst = [(3 << 16) | _OP_CONSTANT_FALSE, w[i + 1], w[i + 2]]
            else:
                extra = 2 if width == 64 else 1
                inst = [((3 + extra) << 16) | _OP_CONSTANT, w[i + 1], w[i + 2]] + [0] * extra
        out += inst
    return pack(out)


def _string(module_words: list[int]) -> str:
    return pack(module_words).split(b"\0", 1)[0].decode(errors="replace")


def imports(spirv: bytes) -> list[str]:
    """Return the names the module imports (``LinkageAttributes … Import``), builtin
    variables (``__spirv_BuiltIn…``, normal for OpenCL) left out."""
    w = words(spirv)
    names = []
    for i, n, op in instructions(w):
        linkage = op == _OP_DECORATE and w[i + 2] == _DECORATION_LINKAGE
        if linkage and w[i + n - 1] == _LINKAGE_IMPORT:
            name = _string(w[i + 3 : i + n - 1])
            if not name.startswith("__spirv_BuiltIn"):
                names.append(name)
    return names


def duplicate_ids(spirv: bytes) -> list[int]:
    """Return result ids defined twice among types, labels, constants, functions, variables."""
    w = words(spirv)
    seen: set[int] = set()
    duplicates = []
    for i, _, op in instructions(w):
        if op in _TYPE_OPCODES:
            rid = w[i + 1]
        elif op in _TYPED_DEFINITIONS:
            rid = w[i + 2]
        else:
            continue
        if rid in seen:
            duplicates.append(rid)
        seen.add(rid)
    return duplicates


_FLOAT_SELECT = re.compile(
    r"^(\s*)(%[\w.$-]+) = select i1 ([^,]+), float ([^,]+), float (\S+)$", re.MULTILINE)


def integer_selects(llvm_ir: str) -> str:
    """Return ``llvm_ir`` with every scalar ``f32`` ``select`` done on the bits: both
    operands ``bitcast`` to ``i32``, an ``i32`` select, the result cast back (the same
    value, NaN payloads and the sign of zero included). The workaround for the SPIR-V
    backend's crash on float selects (module docstring)."""

    def bits(m: re.Match[str]) -> str:
        ind, r, c, a, b = m.groups()
        return (f"{ind}{r}.sa = bitcast float {a} to i32\n"
                f"{ind}{r}.sb = bitcast float {b} to i32\n"
                f"{ind}{r}.si = select i1 {c}, i32 {r}.sa, i32 {r}.sb\n"
                f"{ind}{r} = bitcast i32 {r}.si to float")

    return _FLOAT_SELECT.sub(bits, llvm_ir)


def spirv_from_llvm(text: str, target: Any, kernel_name: str) -> bytes:
    """Compile LLVM IR ``text`` to SPIR-V for ``target`` (``target.request(ir)`` gives the
    :class:`~accy.codegen.CodegenRequest`) in the worker, around the backend's traps: a
    module with duplicate ids is recompiled in a fresh worker; a crash of the worker is
    retried once with :func:`integer_selects` applied.

    Raises:
        CodegenError: LLVM rejected the IR, crashed on it with the workaround too, or
            every attempt defined ids twice.
    """
    from accy.codegen import compile_llvm
    from accy.codegen.worker import shutdown_worker

    for _attempt in range(_CODEGEN_ATTEMPTS):
        try:
            spirv = compile_llvm(target.request(text))["spirv-obj"]
        except CodegenError as e:
            workaround = integer_selects(text)
            if not e.crashed or workaround == text:
                raise
            text = workaround
            try:
                spirv = compile_llvm(target.request(text))["spirv-obj"]
            except CodegenError as again:
                raise CodegenError(
                    f"codegen: LLVM's SPIR-V backend crashed on kernel {kernel_name!r}, also "
                    f"with its float selects done on integers; please report ({again})",
                    llvm_message=again.llvm_message, ir_excerpt=again.ir_excerpt,
                    crashed=again.crashed) from e
        if not duplicate_ids(spirv):
            return spirv
        shutdown_worker()  # stale SPIR-V backend state in the worker: start afresh
    raise CodegenError(
        f"codegen: SPIR-V of kernel {kernel_name!r} defines ids twice after "
        f"{_CODEGEN_ATTEMPTS} fresh compilations; please report"
    )


def emit_spirv(kernel: Any, target: Any) -> bytes:
    """Return the (unpatched) SPIR-V of ``kernel`` for a SPIR-V ``target``.

    ``target`` is a :class:`~accy.codegen.TargetDescription` with a ``request(ir)`` method
    returning the :class:`~accy.codegen.CodegenRequest` (output ``"spirv-obj"``);
    compiled by :func:`spirv_from_llvm` (duplicate ids and backend crashes worked around).

    Raises:
        VerifyError: invalid kernel. CapabilityError: the target refuses the kernel.
        CodegenError: LLVM failed or crashed (workaround included), the module imports an
            unknown function, or every attempt defined ids twice.
    """
    from accy.codegen import emit_llvm_ir

    spirv = spirv_from_llvm(emit_llvm_ir(kernel, target), target, kernel.name)
    unknown = imports(spirv)
    if unknown:
        raise CodegenError(
            f"codegen: SPIR-V of kernel {kernel.name!r} imports unknown function(s) "
            f"{', '.join(sorted(unknown))}: LLVM's SPIR-V backend did not recognise the "
            "call; please report",
        )
    return spirv
