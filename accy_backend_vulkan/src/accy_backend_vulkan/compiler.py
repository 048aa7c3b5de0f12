"""Kernel IR -> SPIR-V artifacts: the half of the Vulkan backend that needs no device.

:class:`SpirvCompiler` is a mixin of :class:`~accy_backend_vulkan.driver.VulkanBackend` and
the whole of :class:`~accy_backend_vulkan.compile_only.VulkanCompileOnly`; it reads only
``self.target`` (a :class:`~accy_backend_vulkan.target.VulkanTarget`) and
``self.validate_spirv``. No ``vulkan`` import here: emitting SPIR-V works without the Vulkan
loader or a driver.
"""

from __future__ import annotations

from typing import Any

from accy.backend import Artifact
from accy.codegen import emit_llvm_ir
from accy.errors import UnsupportedError
from accy.kernel import Kernel

from accy_backend_vulkan.target import VulkanTarget, push_layout
from accy_backend_vulkan.toolchain import compile_spirv, validate

__all__ = ["EMIT_FORMATS", "SpirvCompiler"]

EMIT_FORMATS = ("spirv", "llvm")
"""Formats :meth:`SpirvCompiler.emit` writes."""


class SpirvCompiler:
    """``compile`` and ``emit`` of the Vulkan backend (see ``accy.backend.protocol``)."""

    target: VulkanTarget
    validate_spirv: bool

    def _spirv(self, kernel: Kernel) -> bytes:
        spirv = compile_spirv(kernel, self.target)
        if self.validate_spirv:
            validate(spirv, kernel.name)
        return spirv

    def compile(self, kernel: Kernel, options: dict[str, Any] | None = None) -> Artifact:
        """Compile ``kernel`` to a ``"spirv"`` :class:`Artifact` (entry point ``main``).

        Raises:
            VerifyError: invalid kernel. CapabilityError: f64 math, missing dtype or atomics.
            CodegenError: LLVM failed or the module imports an unknown function.
            CompileError: ``spirv-val`` rejected the module.
        """
        fields, push_bytes = push_layout(kernel)
        metadata = {
            "buffers": [[b.name, b.dtype, b.access] for b in kernel.buffers],
            "scalars": [[s.name, s.dtype] for s in kernel.scalars],
            "workgroup_size": kernel.workgroup_size,
            "push_offsets": [f.offset_bytes for f in fields],
            "push_bytes": push_bytes,
            "scalar_binding": self.target.scalar_binding(kernel),
            "target_fingerprint": self.target.fingerprint(),
            "kernel_fingerprint": kernel.fingerprint(),
        }
        return Artifact("vulkan", kernel.name, "spirv", self._spirv(kernel), "main", metadata)

    def emit(self, kernel: Kernel, format: str, **_: Any) -> bytes:
        """Return ``"spirv"`` (validated, patched module) or ``"llvm"`` (generated IR text).

        Raises:
            UnsupportedError: unknown format.
        """
        if format not in EMIT_FORMATS:
            raise UnsupportedError(
                f"vulkan emit: unknown format {format!r}; known: {', '.join(EMIT_FORMATS)}",
                feature=format,
                backend="vulkan",
            )
        if format == "llvm":
            return emit_llvm_ir(kernel, self.target).encode()
        return self._spirv(kernel)
