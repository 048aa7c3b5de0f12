"""``anp.sort`` and ``anp.argsort``: the ``sort`` kernel family through its IR ops.

Shapes: ``x`` (..., n) of f32 | f64 | i8 ... i64 | u8 ... u32 | bool (8/16-bit integers and
bool are sorted as i32 and cast back; uint64 is refused), sorted along ``axis`` (default -1,
the last); ``argsort`` returns i32 indices of the same shape. Ordering is ascending and
stable (equal keys keep their order), like ``numpy.sort(kind="stable")``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.indexing import _needs_op
from accy.frontend.numpy_api import trace_of, value_of, wrap
from accy.frontend.trace import user_location
from accy.ir import DType

__all__ = ["argpartition", "argsort", "partition", "sort"]


def _order(kind: str, np_fn: Any, a: Any, axis: int | None) -> Any:
    tr = trace_of(a)
    if tr is None:
        return np_fn(a, axis=axis, kind="stable")
    op = _needs_op(tr, kind)
    v = value_of(tr, a)
    dt = v.type.dtype
    narrow = dt if dt == DType.BOOL or (dt.is_int and dt.bits < 32) else None
    if v.type.dtype == DType.U64:
        raise UnsupportedError(f"anp.{kind} of uint64 at {user_location()} is not supported; "
                               "cast to int64 first (exact below 2**63)",
                               feature=f"{kind} u64", alternative="x.astype(anp.int64)")
    if narrow is not None:  # the sort family's keys are 32/64-bit: order is kept in i32
        v = tr.fb.cast(v, DType.I32)
    if axis is None:  # numpy sorts the flattened array
        v = tr.fb.reshape(v, (int(np.prod(v.type.shape, dtype=np.int64)),))
        axis = -1
    rank = v.type.rank
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)) or \
            (rank and not -rank <= axis < rank):
        raise VerifyError(f"anp.{kind} at {user_location()}: axis must be None or an integer "
                          f"in [{-rank}, {rank}), got {axis!r}")
    axis = int(axis) % rank if rank else 0
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = perm != list(range(rank))
    if moved:  # the family sorts along the last axis
        v = tr.fb.transpose(v, perm)
    takes_axis = "axis" in inspect.signature(op).parameters
    out = op(v, axis=rank - 1) if takes_axis else op(v)
    if moved:
        out = tr.fb.transpose(out, [perm.index(d) for d in range(rank)])
    if narrow is not None and kind == "sort":
        out = tr.fb.cast(out, narrow)
    return wrap(tr, out)


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None) -> Any:
    """``a`` sorted ascending along ``axis`` (stable, whatever ``kind``: numpy's other
    kinds leave the order of equal keys open, so stable is one of their answers).

    Raises:
        UnsupportedError: the sort op is not available (accy_kernels not installed).
    """
    _no_order(order, "sort")
    return _order("sort", np.sort, a, axis)


def argsort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None) -> Any:
    """Indices (i32) that sort ``a`` ascending along ``axis`` (stable, whatever ``kind``).

    Raises:
        UnsupportedError: the argsort op is not available (accy_kernels not installed).
    """
    _no_order(order, "argsort")
    return _order("argsort", np.argsort, a, axis)


def partition(a: Any, kth: Any, axis: int | None = -1, kind: Any = None,
              order: Any = None) -> Any:
    """``numpy.partition``: the element at ``kth`` where a sort puts it, no larger ones
    before it and no smaller ones after; accy returns the fully sorted array, which is one
    of the answers numpy's contract allows."""
    if trace_of(a) is None:
        return np.partition(a, kth, axis=axis)
    _no_order(order, "partition")
    return sort(a, axis)


def argpartition(a: Any, kth: Any, axis: int | None = -1, kind: Any = None,
                 order: Any = None) -> Any:
    """``numpy.argpartition``: indices of an arrangement :func:`partition` allows (accy's:
    those that sort ``a``, i32)."""
    if trace_of(a) is None:
        return np.argpartition(a, kth, axis=axis)
    _no_order(order, "argpartition")
    return argsort(a, axis)


def _no_order(order: Any, what: str) -> None:
    if order is not None:
        raise UnsupportedError(f"anp.{what}(order=...) at {user_location()}: accy arrays "
                               "have no fields", feature=f"{what} order",
                               alternative=f"anp.{what}(x, axis)")
