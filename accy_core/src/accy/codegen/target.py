"""The ``TargetDescription`` a backend supplies to the shared LLVM code generator.

The generator (:mod:`accy.codegen.llvm`) lowers kernel IR once; everything target specific
goes through these hooks. Two modes:

- ``simt = False`` (CPU): the generator builds the work-group and work-item loops itself and
  splits kernels at barriers (PoCL-style work-item loops); only the common hooks are used.
- ``simt = True`` (GPU): one function per kernel runs one work-item; the target declares the
  entry point, reads ids, places buffers, scalars and shared arrays, and lowers barriers.

Optional SIMT hooks (looked up with ``getattr``; a target without them gets the default):

- ``entry_prologue(em) -> list[str]``: instruction lines placed first in the entry block,
  e.g. defining ``%b<i>``/``%s<i>`` from resource bindings and push constants (Vulkan).
- ``buffer_element_pointer(em, buffer_value, element_type, index64) -> str``: emit the
  address of one buffer element and return it typed (``"ptr addrspace(11) %v7"``) instead
  of a ``getelementptr`` on ``%b<i>`` (resource-handle targets).
- ``atomic_rmw(em, op, pointer, value, dtype) -> bool``: emit the atomic ``op`` (kernel-IR
  name) itself and return True, e.g. float add as a ``cmpxchg`` loop (OpenCL without
  ``cl_ext_float_atomics``); False leaves it to the generator's ``atomicrmw``.

Optional hook for every target:

- ``guarded_op(em, op, args, dtype) -> str | None``: the target's own lowering of a float
  unary math op or ``add``/``sub``/``mul``/``div``/``pow`` on LLVM values ``args``, where
  the default one would not give IEEE/numpy answers on that target (Vulkan: driver
  shortcuts on constant zeros, ``Log`` of denormals); ``None`` keeps the default.

:class:`BaseTarget` gives defaults (LLVM math intrinsics, monotonic atomics, address space 0)
that a concrete target overrides. See ``LLVM-TARGETS.md`` for the per-target idioms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from accy.errors import UnsupportedError

if TYPE_CHECKING:
    from accy.codegen.emitter import FunctionEmitter
    from accy.kernel import Kernel

__all__ = [
    "GENERATOR_REVISION",
    "LLVM_MATH_UNARY",
    "BaseTarget",
    "TargetDescription",
    "global_buffer_params",
    "llvm_type",
    "memory_type",
]

#: bumped when the shared generator emits different code for the same kernel (e.g. the
#: float → int lowering); backends put it into their target fingerprints, so artifacts an
#: older generator cached on disk are not reused
GENERATOR_REVISION = "3"

#: kernel-IR unary ops lowered to ``llvm.<op>.<f32|f64>`` intrinsics by default
LLVM_MATH_UNARY = frozenset(
    {"exp", "log", "sqrt", "sin", "cos", "floor", "ceil", "exp2", "log2", "tanh"}
)
_LLVM_TYPES = {
    "f32": "float",
    "f64": "double",
    "i32": "i32",
    "u32": "i32",
    "i64": "i64",
    "i8": "i8",
    "u8": "i8",
    "i16": "i16",
    "u16": "i16",
    "u64": "i64",
    "bool": "i1",
}


def llvm_type(dtype: str) -> str:
    """Return the LLVM register type of a kernel dtype (``bool`` → ``i1``)."""
    return _LLVM_TYPES[dtype]


def memory_type(dtype: str) -> str:
    """Return the LLVM in-memory type of a kernel dtype (``bool`` → ``i8``, one byte)."""
    return "i8" if dtype == "bool" else _LLVM_TYPES[dtype]


def global_buffer_params(kernel: Kernel, noalias: bool) -> list[str]:
    """The entry-point parameters ``%b<i>`` of ``kernel``'s buffers as global pointers
    (``ptr addrspace(1)``, CUDA and OpenCL): ``noalias`` when one launch binds distinct
    buffers, and then ``readonly`` on the buffers the kernel only reads."""
    params = []
    for i, b in enumerate(kernel.buffers):
        attrs = "noalias " if noalias else ""
        if noalias and b.access == "read":
            attrs += "readonly "
        params.append(f"ptr addrspace(1) {attrs}%b{i}")
    return params


@runtime_checkable
class TargetDescription(Protocol):
    """What a backend tells the LLVM code generator about its target.

    Attributes:
        name: backend name (``"cpu"``), used in messages.
        triple: LLVM target triple.
        data_layout: LLVM data layout string, or ``""`` to let LLVM pick the default.
        simt: ``False`` for CPU (work-item loops generated), ``True`` for GPU targets.
        buffer_address_space: address space of buffer pointers (0 CPU, 1 NVPTX, 11 Vulkan).
        shared_address_space: address space of shared arrays (3 on GPUs; unused on CPU).
        saturating_casts: float → int casts may use ``llvm.fpto[su]i.sat`` (False: the
            generator open-codes the saturation with compares and selects).
    """

    name: str
    triple: str
    data_layout: str
    simt: bool
    buffer_address_space: int
    shared_address_space: int

    def legalize(self, kernel: Kernel) -> None:
        """Raise ``CapabilityError`` for anything in ``kernel`` this target cannot lower."""
        ...

    def math_function(self, op: str, dtype: str) -> str | None:
        """Return the callee (``"llvm.exp.f32"``) for unary/``pow`` math op ``op`` on
        ``dtype``, or ``None`` for the generator's own lowering (``rsqrt`` = 1/sqrt)."""
        ...

    def atomic_ordering(self) -> str:
        """Return the scope and ordering text of ``atomicrmw`` (``"monotonic"``)."""
        ...

    def module_prelude(self, kernel: Kernel) -> list[str]:
        """Return module-level lines (globals, metadata) the target needs first."""
        ...

    def sign_extend(self, em: FunctionEmitter, x: str, source_type: str, type_: str) -> str:
        """Emit the sign extension of ``x`` (LLVM ``source_type`` to ``type_``); return it."""
        ...

    # SIMT targets only -----------------------------------------------------------------
    def entry_definition(self, kernel: Kernel) -> str:
        """Return the ``define ... {`` line of the SIMT entry point (buffers ``%b<i>``,
        scalars ``%s<i>``)."""
        ...

    def thread_id(self, em: FunctionEmitter, kind: str) -> str:
        """Emit code reading thread id ``kind`` and return the i32 value."""
        ...

    def barrier(self, em: FunctionEmitter) -> None:
        """Emit a work-group execution + shared-memory barrier."""
        ...

    def shared_array_global(self, name: str, element_type: str, size_elems: int) -> str:
        """Return the module-level definition of shared array ``@<name>``."""
        ...


class BaseTarget:
    """Defaults for :class:`TargetDescription`; subclass and override what differs."""

    name = "base"
    triple = ""
    data_layout = ""
    simt = False
    buffer_address_space = 0
    shared_address_space = 3
    saturating_casts = True

    def legalize(self, kernel: Kernel) -> None:
        """Accept everything (CPU lowers all of kernel IR)."""

    def math_function(self, op: str, dtype: str) -> str | None:
        """Map math ops to LLVM intrinsics (``llvm.exp.f32``, ``llvm.pow.f64`` ...)."""
        suffix = "f32" if dtype == "f32" else "f64"
        if op in LLVM_MATH_UNARY or op == "pow":
            return f"llvm.{op}.{suffix}"
        return None

    def atomic_ordering(self) -> str:
        """Relaxed atomics: kernels only use atomics for commutative accumulation."""
        return "monotonic"

    def module_prelude(self, kernel: Kernel) -> list[str]:
        """No extra module lines."""
        return []

    def sign_extend(self, em: FunctionEmitter, x: str, source_type: str, type_: str) -> str:
        """``sext``."""
        return em.value(f"sext {source_type} {x} to {type_}")

    def entry_definition(self, kernel: Kernel) -> str:
        """SIMT targets must override this."""
        raise UnsupportedError(
            f"target {self.name!r} does not define a SIMT entry point",
            feature="simt",
            backend=self.name,
        )

    def thread_id(self, em: FunctionEmitter, kind: str) -> str:
        """SIMT targets must override this."""
        raise UnsupportedError(
            f"target {self.name!r} cannot read thread ids", feature="simt", backend=self.name
        )

    def barrier(self, em: FunctionEmitter) -> None:
        """SIMT targets must override this."""
        raise UnsupportedError(
            f"target {self.name!r} has no barrier lowering", feature="barrier", backend=self.name
        )

    def shared_array_global(self, name: str, element_type: str, size_elems: int) -> str:
        """An ``internal`` global in :attr:`shared_address_space`."""
        return (
            f"@{name} = internal addrspace({self.shared_address_space}) global "
            f"[{size_elems} x {element_type}] undef, align 16"
        )
