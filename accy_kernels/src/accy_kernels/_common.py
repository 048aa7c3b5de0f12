"""Helpers shared by the family variants: dtype tables, launch sizes, small kernels.

Not public API. Each variant module builds its kernels with :class:`accy.kernel.KernelBuilder`
and caches them per parameter set (``functools.lru_cache``), so a kernel is built, compiled
and loaded once per process and backend.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.kernel import KernelBuilder

__all__ = ["NUMPY", "VALUE_DTYPES", "ceil_div", "copy_kernel", "fill_kernel", "groups_for"]

NUMPY = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
         "u32": np.uint32, "bool": np.bool_}
VALUE_DTYPES = ("f32", "f64", "i32", "i64", "u32")
MAX_ELEMS = 2**31 - 1


def ceil_div(a: int, b: int) -> int:
    """Return ``ceil(a / b)`` for non-negative ints."""
    return -(-a // b)


def groups_for(n_items: int, workgroup_size: int) -> int:
    """Return the work-group count covering ``n_items`` work-items."""
    return ceil_div(n_items, workgroup_size)


@functools.cache
def copy_kernel(dtype: str, workgroup_size: int = 256):
    """``out[i] = src[i]`` for ``i < n``; buffers (out, src), scalar n (i32)."""
    kb = KernelBuilder(f"copy_{dtype}_wg{workgroup_size}", workgroup_size)
    out, src = kb.buffer("out", dtype, "write"), kb.buffer("src", dtype, "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(out, i, src[i])
    return kb.build()


@functools.cache
def fill_kernel(dtype: str, workgroup_size: int = 256):
    """``out[i] = value`` for ``i < n``; buffer (out), scalars n (i32), value (dtype)."""
    kb = KernelBuilder(f"fill_{dtype}_wg{workgroup_size}", workgroup_size)
    out = kb.buffer("out", dtype, "write")
    n = kb.scalar("n", "i32")
    value = kb.scalar("value", dtype)
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(out, i, value)
    return kb.build()
