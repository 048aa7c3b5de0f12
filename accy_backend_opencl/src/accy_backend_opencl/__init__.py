"""accy's OpenCL backend: kernel IR → SPIR-V (LLVM's SPIR-V target) → any OpenCL device.

``plugin`` declares the backend (no heavy import); ``target`` is the pure code-generation
description; ``bridge`` translates SPIR-V to SPIR 1.2 for drivers without IL (PoCL 3.1);
``device`` lists and chooses devices; ``backend`` and ``queues`` run programs through
``pyopencl``; ``program_cache`` keeps built programs on disk per device.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["OpenCLBackend", "OpenCLTarget"]


def __getattr__(name: str) -> object:
    if name == "OpenCLBackend":
        from accy_backend_opencl.backend import OpenCLBackend

        return OpenCLBackend
    if name == "OpenCLTarget":
        from accy_backend_opencl.target import OpenCLTarget

        return OpenCLTarget
    raise AttributeError(f"module 'accy_backend_opencl' has no attribute {name!r}")
