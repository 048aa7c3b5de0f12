"""accy CPU backend: host machine code through llvmlite's JIT, work-groups on a thread pool.

Importing this package is cheap; ``CpuBackend`` (which imports llvmlite) loads lazily.
"""

from __future__ import annotations

__all__ = ["CpuBackend", "CpuTarget"]


def __getattr__(name: str) -> object:
    if name == "CpuBackend":
        from accy_backend_cpu.backend import CpuBackend

        return CpuBackend
    if name == "CpuTarget":
        from accy_backend_cpu.target import CpuTarget

        return CpuTarget
    raise AttributeError(f"module 'accy_backend_cpu' has no attribute {name!r}")
