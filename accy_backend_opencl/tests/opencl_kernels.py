"""Kernel-IR test kernels of the OpenCL target and runtime tests, and a runner.

The kernels every backend's tests share live in :mod:`accy.testing.kernels`; OpenCL's
``group_ids`` kernel is named ``group.ids`` (a name OpenCL C must mangle), in groups of 4.
"""

from __future__ import annotations

from accy.kernel import AtomicRMW, BufferParam, Cast, If, Kernel, Load, ScalarParam
from accy.kernel.ir import binary, const
from accy.testing import kernels as _shared
from accy.testing.kernels import GID, LID, N, scale, tree_sum, unary_f
from accy.testing.kernels import run_kernel as run

__all__ = ["GID", "LID", "N", "group_ids", "histogram", "run", "scale", "tree_sum", "unary_f"]


def histogram(dtype: str = "i32", op: str = "add") -> Kernel:
    """Atomic ``op`` of ``x[i]`` (as ``dtype``) into ``hist[x[i] % 8]``."""
    bin_ = binary("rem", Load("x", GID, "i32"), const(8, "i32"))
    value = Cast(Load("x", GID, "i32"), dtype)
    return Kernel(
        f"histogram_{op}_{dtype}",
        buffers=(BufferParam("hist", dtype, "readwrite"), BufferParam("x", "i32")),
        scalars=(ScalarParam("n", "i32"),),
        body=(If(binary("lt", GID, N), (AtomicRMW(op, "hist", bin_, value),)),),
        workgroup_size=64,
    )


def group_ids() -> Kernel:
    """``out[g] = group id * 1000 + num_groups`` written by local id 0."""
    return _shared.group_ids("group.ids", workgroup_size=4)
