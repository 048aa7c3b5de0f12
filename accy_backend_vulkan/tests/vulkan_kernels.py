"""Kernel-IR test kernels shared by the target and driver tests.

The kernels every backend's tests share live in :mod:`accy.testing.kernels`; Vulkan's
``scale`` kernel is named ``scale`` whatever its dtype.
"""

from __future__ import annotations

from accy.kernel import (
    Assign,
    AtomicRMW,
    BufferParam,
    For,
    If,
    Kernel,
    Let,
    Load,
    ScalarParam,
    Store,
    Var,
)
from accy.kernel.ir import binary, const
from accy.testing import kernels as _shared
from accy.testing.kernels import GID, LID, N, group_ids, tree_sum, unary_f

__all__ = ["GID", "LID", "N", "group_ids", "histogram", "loop_bool", "scale", "tree_sum",
           "unary_f"]


def scale(dtype: str = "f32") -> Kernel:
    """``y[i] = a * x[i] + b`` for ``i < n``: scalars of three dtypes, bool flag."""
    return _shared.scale(dtype, name="scale")


def histogram(dtype: str = "i32") -> Kernel:
    """``atomic add`` of 1 into ``hist[x[i] % bins]``, plus atomic max of ``x`` (ints)."""
    one = const(1, dtype)
    bin_ = binary("rem", Load("x", GID, "i32"), const(8, "i32"))
    body = [AtomicRMW("add", "hist", bin_, one)]
    if dtype == "i32":
        body.append(AtomicRMW("max", "top", const(0, "i32"), Load("x", GID, "i32")))
    return Kernel(
        f"histogram_{dtype}",
        buffers=(
            BufferParam("hist", dtype, "readwrite"),
            BufferParam("top", "i32", "readwrite"),
            BufferParam("x", "i32"),
        ),
        scalars=(ScalarParam("n", "i32"),),
        body=(If(binary("lt", GID, N), tuple(body)),),
        workgroup_size=64,
    )


def loop_bool() -> Kernel:
    """``mask[i] = sum(x[0..i]) > t`` with a ``For`` loop, a bool buffer and a u32 count."""
    total = Var("total", "f32")
    return Kernel(
        "loop_bool",
        buffers=(BufferParam("mask", "bool", "write"), BufferParam("x", "f32")),
        scalars=(ScalarParam("n", "i32"), ScalarParam("t", "f32")),
        body=(
            If(
                binary("lt", GID, N),
                (
                    Let("total", const(0.0, "f32")),
                    For(
                        "j",
                        const(0, "i32"),
                        binary("add", GID, const(1, "i32")),
                        const(1, "i32"),
                        (Assign("total", binary("add", total, Load("x", Var("j", "i32"), "f32"))),),
                    ),
                    Store("mask", GID, binary("gt", total, Var("t", "f32"))),
                ),
            ),
        ),
        workgroup_size=16,
    )
