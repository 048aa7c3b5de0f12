"""Helpers shared by the family variants: dtype tables, launch sizes, small kernels.

Not public API. Each variant module builds its kernels with :class:`accy.kernel.KernelBuilder`
and caches them per parameter set (``functools.lru_cache``), so a kernel is built, compiled
and loaded once per process and backend.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.kernel import E, KernelBuilder, where

__all__ = ["MAX_ELEMS", "NUMPY", "VALUE_DTYPES", "ceil_div", "copy_kernel", "fill_kernel",
           "groups_for", "launch_windows", "window"]

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


def window(kb: KernelBuilder, lo: E, hi: E, skip: E, limit: E, name: str) -> tuple[E, E]:
    """Return ``(first, last)``: ``[lo + skip, lo + skip + limit)`` clipped to ``[lo, hi]``
    (all of one integer dtype), computed without overflow near the dtype's maximum.

    A kernel whose data loop is split over launches (a loop budget, :func:`launch_windows`)
    runs ``for j in range(first, last)`` with the launch's ``skip`` and ``limit`` scalars.
    """
    first = kb.let(f"{name}_first", where(skip < hi - lo, lo + skip, hi))
    last = kb.let(f"{name}_last", where(limit < hi - first, first + limit, hi))
    return first, last


def launch_windows(plan, backend, kernel, groups: int, slots: list, scalars: list,
                   trips: int, fixed: int = 0, what: str = "kernel", loops: int = 1) -> int:
    """Launch ``kernel`` once per window of a data loop of up to ``trips`` iterations: one
    launch without a loop budget, else as many as the backend's ``max_loop_iterations``
    (less ``fixed`` other iterations and ``loops`` loop exits) needs; each gets
    ``scalars + [skip, limit]`` (i32).
    Returns the number of launches."""
    from accy.families import loop_passes

    passes, per_pass = loop_passes(trips, backend, fixed, what, loops)
    for p in range(passes):
        plan.launch(kernel, groups, slots, [*scalars, ("i32", p * per_pass), ("i32", per_pass)])
    return passes
