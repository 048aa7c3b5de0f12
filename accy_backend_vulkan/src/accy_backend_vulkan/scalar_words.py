"""Scalars read from a storage buffer of 32-bit words (push block over the device limit).

When :func:`accy_backend_vulkan.target.push_layout` gives more bytes than the device's
``maxPushConstantsSize``, the host writes the very same bytes into a storage buffer bound at
``VulkanTarget.scalar_binding(kernel)`` and the kernel reads them as ``[0 x i32]``: field
``f`` starts at word ``f.offset_bytes // 4``; ``f32`` is a bitcast word, ``bool`` a word
``!= 0``, 8/16-bit integers a truncated word, ``i64``/``u64``/``f64`` two little-endian
words (low first). A runtime array of ``i32`` has an array stride of 4 under every layout
rule, so no std140/std430 padding applies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accy.codegen.emitter import FunctionEmitter

    from accy_backend_vulkan.target import PushField

__all__ = ["SCALAR_HANDLE", "load_word", "scalar_word_loads"]

#: the LLVM value of the scalar buffer's resource handle
SCALAR_HANDLE = "%scalars"


def _getpointer(em: FunctionEmitter, handle_type: tuple[str, str]) -> tuple[str, str]:
    ty, mangled = handle_type
    callee = f"llvm.spv.resource.getpointer.p11.{mangled}"
    em.declare(callee, "ptr addrspace(11)", [ty, "i32"])
    return ty, callee


def _word_lines(em: FunctionEmitter, handle_type: tuple[str, str], word: int,
                name: str) -> list[str]:
    ty, callee = _getpointer(em, handle_type)
    return [
        f"  {name}.p = call ptr addrspace(11) @{callee}({ty} {SCALAR_HANDLE}, i32 {word})",
        f"  {name} = load i32, ptr addrspace(11) {name}.p, align 4",
    ]


def scalar_word_loads(em: FunctionEmitter, handle_type: tuple[str, str], binding: int,
                      fields: list[PushField]) -> list[str]:
    """Entry-block lines: the scalar buffer's handle, then ``%s<i>`` for every scalar."""
    ty, mangled = handle_type
    make = f"llvm.spv.resource.handlefrombinding.{mangled}"
    em.declare(make, ty, ["i32", "i32", "i32", "i32", "ptr"])
    lines = [f"  {SCALAR_HANDLE} = call {ty} @{make}(i32 0, i32 {binding}, i32 1, i32 0, "
             f"ptr @.binding.{binding})"]
    for i, f in enumerate(fields[:-1]):  # the last field is num_groups, read where used
        word = f.offset_bytes // 4
        lo = f"%s{i}.w0"
        lines += _word_lines(em, handle_type, word, lo)
        if f.dtype in ("i32", "u32"):
            lines.append(f"  %s{i} = add i32 {lo}, 0")
        elif f.dtype == "bool":
            lines.append(f"  %s{i} = icmp ne i32 {lo}, 0")
        elif f.dtype in ("i8", "u8", "i16", "u16"):
            lines.append(f"  %s{i} = trunc i32 {lo} to i{8 if f.dtype[1] == '8' else 16}")
        elif f.dtype == "f32":
            lines.append(f"  %s{i} = bitcast i32 {lo} to float")
        else:  # i64, f64: low word first
            hi = f"%s{i}.w1"
            lines += _word_lines(em, handle_type, word + 1, hi)
            wide = f"%s{i}.i64" if f.dtype == "f64" else f"%s{i}"
            lines += [
                f"  %s{i}.lo = zext i32 {lo} to i64",
                f"  %s{i}.hi = zext i32 {hi} to i64",
                f"  %s{i}.hs = shl i64 %s{i}.hi, 32",
                f"  {wide} = or i64 %s{i}.hs, %s{i}.lo",
            ]
            if f.dtype == "f64":
                lines.append(f"  %s{i} = bitcast i64 {wide} to double")
    return lines


def load_word(em: FunctionEmitter, handle_type: tuple[str, str], word: int) -> str:
    """Emit a load of 32-bit word ``word`` of the scalar buffer; return the i32 value."""
    ty, callee = _getpointer(em, handle_type)
    p = em.value(f"call ptr addrspace(11) @{callee}({ty} {SCALAR_HANDLE}, i32 {word})")
    return em.value(f"load i32, ptr addrspace(11) {p}, align 4")
