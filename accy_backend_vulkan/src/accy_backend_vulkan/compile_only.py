"""A Vulkan backend without a device: compiles kernels and emits SPIR-V, runs nothing.

``accy compile --backend vulkan --emit spirv`` opens it (through the descriptor's
``open_compile_only``, as for CUDA) when the real backend is unavailable here: no ``vulkan``
Python package, no Vulkan loader, no driver or no Vulkan 1.3 device. Emitting needs none of
them. The target is generic Vulkan 1.3 compute with every optional feature accy uses
(``f64``, ``i64``, float atomics) and limits most devices meet (1024 work-items per
work-group, 32 KiB shared memory, subgroups of 32); a device lacking a feature a kernel
uses refuses the module when it is loaded there. Running (``load``, buffers, ``launch``)
raises :class:`~accy.errors.BackendUnavailable` with the reason the device is missing.
"""

from __future__ import annotations

import hashlib
from typing import Any, NoReturn

from accy.backend import Capabilities, TargetProfile
from accy.errors import BackendUnavailable

from accy_backend_vulkan.compiler import EMIT_FORMATS, SpirvCompiler
from accy_backend_vulkan.target import ALL_FEATURES, VulkanTarget

__all__ = ["VulkanCompileOnly"]

MAX_WORKGROUP_SIZE = 1024
SUBGROUP_SIZE = 32
SHARED_MEMORY_BYTES = 32 * 1024


class VulkanCompileOnly(SpirvCompiler):
    """The compile half of the Vulkan backend protocol, with no device.

    Args:
        reason: why no device is used (shown by ``capabilities().device_name`` and in the
            :class:`~accy.errors.BackendUnavailable` raised by device operations).
        features: target features (default: every one in
            :data:`~accy_backend_vulkan.target.ALL_FEATURES`).
        validate_spirv: run ``spirv-val`` on each module when it is installed.
    """

    name = "vulkan"

    def __init__(self, reason: str = "compile-only", features: frozenset[str] = ALL_FEATURES,
                 validate_spirv: bool = True) -> None:
        self.reason = reason
        self.target = VulkanTarget(features)
        self.validate_spirv = validate_spirv

    def capabilities(self) -> Capabilities:
        """Generic Vulkan 1.3 limits (see the module docstring); formats ``spirv``, ``llvm``."""
        tf = self.target.features
        ident = f"vulkan-compile-only|{self.target.fingerprint()}"
        return Capabilities(
            backend="vulkan",
            device_name=f"compile-only (no device: {self.reason})",
            device_fingerprint=hashlib.sha256(ident.encode()).hexdigest(),
            dtypes=self.target.dtypes(),
            artifact_formats=EMIT_FORMATS,
            max_workgroup_size=MAX_WORKGROUP_SIZE,
            subgroup_size=SUBGROUP_SIZE,
            shared_memory_bytes=SHARED_MEMORY_BYTES,
            features=frozenset(f for f in ("f64", "i64", "float_atomics") if f in tf),
        )

    def target_profile(self) -> TargetProfile:
        """Return the :class:`TargetProfile` built from :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    def _no_device(self, what: str) -> NoReturn:
        raise BackendUnavailable(
            f"vulkan backend is compile-only here ({what} needs a device): {self.reason}",
            backend="vulkan", reason=self.reason)

    def load(self, artifact: Any) -> NoReturn:
        """Raises BackendUnavailable: loading a pipeline needs a device."""
        self._no_device("load")

    def allocate(self, nbytes: int) -> NoReturn:
        """Raises BackendUnavailable: buffers need a device."""
        self._no_device("allocate")

    def launch(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises BackendUnavailable: launching needs a device."""
        self._no_device("launch")

    def synchronize(self, scope: Any = None) -> None:
        """Nothing was launched: nothing to wait for."""

    def close(self) -> None:
        """Nothing to release."""
