"""accy plugin entry point of accy-kernels: provides the kernel-library families.

Registered as ``[project.entry-points.accy] kernels = "accy_kernels.plugin"``; importing it
loads only the family descriptors (no LLVM, no backend).
"""

from __future__ import annotations

from accy.plugins import hookimpl

__all__ = ["accy_kernel_families"]


@hookimpl
def accy_kernel_families() -> list:
    """Return the accy-kernels family descriptors (gather, scatter, spmv, sort, random, ...)."""
    from accy_kernels._families import FAMILIES

    return list(FAMILIES)
