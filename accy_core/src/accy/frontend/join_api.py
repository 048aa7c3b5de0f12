"""Joining and rearranging arrays for ``accy.numpy``: ``concatenate``, ``stack``,
``hstack``/``vstack``/``dstack``/``column_stack``, ``flip``, ``roll``, ``diff``, and
``array``/``asarray`` of nested lists that hold traced values (``anp.array([x, y, z])``: a
stack).

``concatenate`` pads each piece to the joined extent (``tensor.pad``) and selects it under a
constant mask of its positions, so the pieces fuse into one elementwise kernel; ``roll`` is
such a join of two static slices (it fuses too: a gather per roll made a 5-point periodic
stencil five kernels per step); ``flip`` is a gather with constant indices. Dtypes promote
as in :mod:`accy.frontend.trace`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.frontend import shape_api
from accy.frontend.numpy_api import _axes, common, not_equal, subtract, trace_of, value_of, wrap
from accy.frontend.shape_api import expand_dims, ravel, reshape
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType

__all__ = ["array", "asarray", "column_stack", "concatenate", "diff", "dstack", "flip", "hstack",
           "roll", "stack", "vstack"]


def _err(what: str, why: str) -> VerifyError:
    loc = user_location()
    return VerifyError(f"{what} at {loc}: {why}", position=loc)


def concatenate(arrays: Any, axis: int | None = 0) -> Any:
    """The arrays joined along ``axis`` (None: flattened first), like ``numpy.concatenate``.

    Raises:
        VerifyError: ranks or the other axes' extents differ (names the user's line).
    """
    arrays = list(arrays)
    tr = trace_of(*arrays)
    if tr is None or not any(isinstance(a, Tracer) for a in arrays):
        return _host(np.concatenate([np.asarray(a) for a in arrays], axis=axis))
    if not arrays:
        raise _err("concatenate", "needs at least one array")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    dt = common(*arrays)
    work = DType.I32 if dt == DType.BOOL else dt
    vals = [value_of(tr, a, dt) for a in arrays]
    vals = [tr.fb.cast(v, work) if work != dt else v for v in vals]
    rank = vals[0].type.rank
    if rank == 0 or any(v.type.rank != rank for v in vals):
        raise _err("concatenate", "all arrays need the same rank >= 1, got shapes "
                   + ", ".join(str(list(v.type.shape)) for v in vals))
    ax = _axes(axis, rank)[0]
    rest = [v.type.shape[:ax] + v.type.shape[ax + 1:] for v in vals]
    if any(r != rest[0] for r in rest):
        raise _err("concatenate", f"extents off axis {ax} differ: "
                   + ", ".join(str(list(v.type.shape)) for v in vals))
    total = sum(v.type.shape[ax] for v in vals)
    out, off = None, 0
    for v in vals:
        n = v.type.shape[ax]
        if n == 0:
            continue
        low, high = [0] * rank, [0] * rank
        low[ax], high[ax] = off, total - off - n
        piece = tr.fb.pad(v, low, high)
        if out is None:
            out = piece
        else:
            sel = np.zeros(total, bool)
            sel[off:off + n] = True
            shape = [1] * rank
            shape[ax] = total
            m = tr.fb.broadcast_to(tr.fb.reshape(value_of(tr, sel, DType.BOOL), shape),
                                   piece.type.shape)
            out = tr.fb.select(m, piece, out)
        off += n
    if out is None:  # every piece empty
        shape = list(vals[0].type.shape)
        shape[ax] = 0
        return _host_in(tr, np.zeros(shape, dt.numpy))
    return wrap(tr, tr.fb.cast(out, dt) if work != dt else out)


def _host(arr: np.ndarray) -> Any:
    from accy.frontend.shape_api import _make

    return _make(arr)


def _host_in(tr: Any, arr: np.ndarray) -> Any:
    return wrap(tr, value_of(tr, arr))


def stack(arrays: Any, axis: int = 0) -> Any:
    """The arrays (all of one shape) joined along a new ``axis``."""
    arrays = list(arrays)
    if trace_of(*arrays) is None or not any(isinstance(a, Tracer) for a in arrays):
        return _host(np.stack([np.asarray(a) for a in arrays], axis=axis))
    shapes = {tuple(np.shape(a)) if not isinstance(a, Tracer) else a.shape for a in arrays}
    if len(shapes) != 1:
        raise _err("stack", f"all arrays need the same shape, got {sorted(shapes)}")
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis)


def _holds_tracer(a: Any) -> bool:
    return isinstance(a, Tracer) or (isinstance(a, (list, tuple)) and
                                     any(_holds_tracer(e) for e in a))


def asarray(a: Any, dtype: Any = None) -> Any:
    """``a`` as an array (see :func:`accy.frontend.shape_api.asarray`); a (nested) list or
    tuple that holds traced arrays is stacked, as ``numpy.array([x, y])`` is:
    ``anp.array([sigma * (y - x), x * (rho - z) - y])`` has shape ``(2,) + x.shape``.

    Raises:
        VerifyError: the elements' shapes differ (names the user's line).
    """
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        if not a:
            return shape_api.asarray(a, dtype)
        out = stack([asarray(e) if isinstance(e, (list, tuple)) else e for e in a])
        return out if dtype is None else shape_api.asarray(out, dtype)
    return shape_api.asarray(a, dtype)


array = asarray


def _atleast(a: Any, n: int) -> Any:
    shape = a.shape if isinstance(a, Tracer) else np.shape(a)
    if len(shape) >= n:
        return a
    if n == 2:
        return reshape(a, (1,) * (2 - len(shape)) + tuple(shape))
    new = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
    return reshape(a, new)


def hstack(tup: Any) -> Any:
    """Join along axis 1 (axis 0 for 1-D arrays), like ``numpy.hstack``."""
    arrs = list(tup)
    nd1 = all(len(a.shape if isinstance(a, Tracer) else np.shape(a)) <= 1 for a in arrs)
    return concatenate([_atleast(a, 1) if nd1 else a for a in arrs], axis=0 if nd1 else 1)


def vstack(tup: Any) -> Any:
    """Join along axis 0 after making 1-D arrays rows, like ``numpy.vstack``."""
    return concatenate([_atleast(a, 2) for a in tup], axis=0)


def dstack(tup: Any) -> Any:
    """Join along axis 2 after making arrays at least 3-D, like ``numpy.dstack``."""
    return concatenate([_atleast(a, 3) for a in tup], axis=2)


def column_stack(tup: Any) -> Any:
    """1-D arrays as columns (2-D arrays as they are), joined along axis 1."""
    cols = [reshape(a, (-1, 1)) if len(np.shape(a) if not isinstance(a, Tracer) else a.shape)
            < 2 else a for a in tup]
    return concatenate(cols, axis=1)


def flip(m: Any, axis: Any = None) -> Any:
    """``m`` with the order of elements reversed along ``axis`` (all axes when None)."""
    if trace_of(m) is None or not isinstance(m, Tracer):
        return np.flip(m, axis)
    index = [slice(None)] * m.ndim
    for a in _axes(axis, m.ndim):
        index[a] = slice(None, None, -1)
    return m[tuple(index)]


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Elements shifted by ``shift`` along ``axis`` (the flattened array when None),
    wrapping around, like ``numpy.roll``; shifts are static ints."""
    tr = trace_of(a)
    if tr is None or not isinstance(a, Tracer):
        return np.roll(a, shift, axis)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) * (1 if isinstance(axis, int) else len(axis)) if isinstance(
        shift, int) else tuple(shift)
    axes = _axes(axis, a.ndim)
    if len(shifts) != len(axes):
        raise _err("roll", f"{len(shifts)} shifts for {len(axes)} axes")
    out = a
    for s, ax in zip(shifts, axes, strict=True):
        n = a.shape[ax]
        if n and s % n:  # two static slices joined: fuses with the elementwise code around
            k = n - s % n
            lo, hi = [slice(None)] * a.ndim, [slice(None)] * a.ndim
            lo[ax], hi[ax] = slice(k, None), slice(0, k)
            out = concatenate([out[tuple(lo)], out[tuple(hi)]], axis=ax)
    return out if out is not a else wrap(tr, a.value)


def diff(a: Any, n: int = 1, axis: int = -1) -> Any:
    """``n``-th discrete difference along ``axis`` (bool: ``!=``), like ``numpy.diff``."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.diff(a, n, axis)
    if n < 0:
        raise _err("diff", f"order n must be non-negative, got {n}")
    ax = _axes(axis, a.ndim)[0]
    for _ in range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[ax], lo[ax] = slice(1, None), slice(None, -1)
        a = (not_equal if a.accy_dtype == DType.BOOL else subtract)(a[tuple(hi)], a[tuple(lo)])
    return a
