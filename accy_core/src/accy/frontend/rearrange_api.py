"""Rearranging and index helpers for ``accy.numpy``: ``flipud fliplr rot90 append delete
insert take_along_axis put_along_axis unravel_index ravel_multi_index``.

``take_along_axis(a, np.argsort(a, 1), 1)`` and ``put_along_axis`` are numpy's advanced
indexing with an index grid (:mod:`accy.frontend.multi_index`: one gather or scatter);
``delete`` and ``insert`` take static positions (a gather with constant indices and a
join); ``unravel_index`` of a traced flat index (``np.unravel_index(np.argmax(a),
a.shape)``) is integer division and remainder on the device. On host data each is
numpy's function.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.indexing import take
from accy.frontend.intmath_api import floor_divide, mod
from accy.frontend.join_api import concatenate, flip
from accy.frontend.numpy_api import _axes, add, astype, multiply, shape_of, trace_of
from accy.frontend.shape_api import broadcast_to, ravel, reshape, transpose
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["append", "delete", "fliplr", "flipud", "insert", "put_along_axis",
           "ravel_multi_index", "rot90", "take_along_axis", "unravel_index"]


def _eager(*xs: Any) -> bool:
    return trace_of(*xs) is None or not builtins.any(isinstance(x, Tracer) for x in xs)


def _err(what: str, why: str) -> VerifyError:
    loc = user_location()
    return VerifyError(f"{what} at {loc}: {why}", position=loc)


def flipud(m: Any) -> Any:
    """``m`` with the rows reversed (axis 0)."""
    return np.flipud(m) if _eager(m) else flip(m, 0)


def fliplr(m: Any) -> Any:
    """``m`` with the columns reversed (axis 1)."""
    return np.fliplr(m) if _eager(m) else flip(m, 1)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (numpy's
    direction: from the first axis towards the second)."""
    if _eager(m):
        return np.rot90(m, k, axes)
    a0, a1 = (int(a) % m.ndim for a in axes)
    if a0 == a1:
        raise _err("rot90", "the two axes must differ")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return transpose(flip(m, a1), perm) if k == 1 else flip(transpose(m, perm), a1)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` joined at the end (both flattened when ``axis`` is None)."""
    if _eager(arr, values):
        return np.append(arr, values, axis)
    if isinstance(arr, Tracer) and not isinstance(values, (Tracer, np.ndarray)):
        values = np.asarray(values, dtype=arr.dtype)  # Python numbers are weak: arr's dtype
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """``arr`` without the entries at the static positions ``obj`` (an int, slice or host
    int array) along ``axis`` (the flattened array when None).

    Raises:
        UnsupportedError: traced positions (the result length would depend on data).
    """
    if _eager(arr, obj):
        return np.delete(arr, obj, axis)
    if isinstance(obj, Tracer):
        raise UnsupportedError(f"delete at {user_location()} with traced positions: the "
                               "result length would depend on data; use a host array, or a "
                               "mask with anp.where", feature="delete traced",
                               alternative="host positions")
    if axis is None:
        arr, axis = ravel(arr), 0
    ax = _axes(axis, arr.ndim)[0]
    keep = np.delete(np.arange(arr.shape[ax]), obj)
    return take(arr, keep.astype(np.int32), axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the static position ``obj`` (an int) along
    ``axis`` (the flattened array when None): 1-D values insert that many entries; other
    values are broadcast to one slice of ``arr`` across ``axis``.

    Raises:
        UnsupportedError: ``obj`` that is not a Python int.
    """
    if _eager(arr, values, obj):
        return np.insert(arr, obj, values, axis)
    if isinstance(obj, (bool, np.bool_)) or not isinstance(obj, (int, np.integer)):
        raise UnsupportedError(f"insert at {user_location()}: accy inserts at one static "
                               "position (an int); insert several with a Python loop or "
                               "concatenate", feature="insert positions",
                               alternative="concatenate")
    if axis is None:
        arr, axis = ravel(arr), 0
    ax = _axes(axis, arr.ndim)[0]
    n = arr.shape[ax]
    pos = int(obj) + n if int(obj) < 0 else int(obj)
    if not 0 <= pos <= n:
        raise _err("insert", f"position {obj} is out of range for an axis of extent {n}")
    vshape = tuple(shape_of(values))
    if arr.ndim == 1 and len(vshape) == 1:
        block = values
    else:
        slab = tuple(1 if i == ax else s for i, s in enumerate(arr.shape))
        block = broadcast_to(values, slab)
    if not isinstance(block, Tracer):
        block = np.asarray(block, dtype=arr.dtype)
    lo = tuple(slice(0, pos) if i == ax else slice(None) for i in range(arr.ndim))
    hi = tuple(slice(pos, n) if i == ax else slice(None) for i in range(arr.ndim))
    parts = [p for p in (arr[lo], block, arr[hi]) if tuple(shape_of(p))[ax] > 0]
    return concatenate(parts, axis=ax)


def _along(arr: Tracer, indices: Any, axis: int | None, what: str) -> tuple[Any, tuple]:
    """The flattened-or-not array and numpy's index grid for ``*_along_axis``."""
    if axis is None:
        arr, axis = ravel(arr), 0
    ax = _axes(axis, arr.ndim)[0]
    ishape = tuple(shape_of(indices))
    if len(ishape) != arr.ndim:
        raise _err(what, f"indices of rank {len(ishape)} for an array of rank {arr.ndim}; "
                   "they need the same rank (add axes of extent 1)")
    grid = []
    for d in range(arr.ndim):
        if d == ax:
            grid.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            grid.append(np.arange(arr.shape[d], dtype=np.int32).reshape(shape))
    return arr, tuple(grid)


def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    """``arr`` picked at ``indices`` along ``axis`` (numpy's: ``indices`` has ``arr``'s
    rank and broadcasts against it on the other axes); e.g. with ``argsort``."""
    if _eager(arr, indices):
        return np.take_along_axis(arr, indices, axis)
    a, grid = _along(arr, indices, axis, "take_along_axis")
    return a[grid]


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None) -> None:
    """Write ``values`` into the traced ``arr`` at ``indices`` along ``axis`` in place."""
    if _eager(arr, indices, values) and not isinstance(arr, Tracer):
        np.put_along_axis(arr, indices, values, axis)
        return
    if not isinstance(arr, Tracer):
        raise UnsupportedError(f"put_along_axis at {user_location()} into a numpy array made "
                               "inside the jitted function: make it traced "
                               "(np.zeros_like(t))", feature="put_along_axis host",
                               alternative="np.zeros_like")
    if axis is None:
        flat = reshape(arr, (-1,))  # a view: the write reaches arr
        _, grid = _along(flat, indices, 0, "put_along_axis")
        flat[grid] = values
        return
    _, grid = _along(arr, indices, axis, "put_along_axis")
    arr[grid] = values


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Any, ...]:
    """The coordinates (i32 arrays) of flat ``indices`` in an array of ``shape`` (row-major).

    Raises:
        UnsupportedError: ``order="F"``.
    """
    if _eager(indices):
        return np.unravel_index(indices, shape, order)
    if order != "C":
        raise UnsupportedError(f"unravel_index at {user_location()} with order={order!r}: "
                               "accy unravels row-major only", feature="unravel order F",
                               alternative="order='C'")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s)
                                                                           for s in shape)
    idx = astype(indices, np.int32) if int(np.prod(dims)) < 2**31 else astype(indices,
                                                                             np.int64)
    out, stride = [], int(np.prod(dims, dtype=np.int64))
    for d in dims:
        stride //= d
        q = floor_divide(idx, stride) if stride != 1 else idx
        out.append(q if not out else mod(q, d))
    return tuple(out)


def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise",
                      order: str = "C") -> Any:
    """The flat (row-major) index of the coordinates ``multi_index`` in ``dims``."""
    if _eager(*multi_index):
        return np.ravel_multi_index(multi_index, dims, mode=mode, order=order)
    if mode != "raise" or order != "C":
        raise UnsupportedError(f"ravel_multi_index at {user_location()}: accy takes "
                               "mode='raise', order='C'", feature="ravel_multi_index args",
                               alternative="mode='raise'")
    dims = tuple(int(d) for d in dims)
    flat: Any = 0
    for k, i in enumerate(multi_index):
        stride = int(np.prod(dims[k + 1:], dtype=np.int64))
        flat = add(flat, multiply(i, stride) if stride != 1 else i)
    return flat
