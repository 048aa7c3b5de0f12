"""Shape manipulation and array creation for ``accy.numpy``.

``reshape`` (one ``-1`` allowed), ``transpose``, ``swapaxes``, ``expand_dims``, ``squeeze``,
``ravel``, ``broadcast_to``; creation (``zeros``, ``ones``, ``full``, ``*_like``, ``arange``,
``eye``, ``asarray``/``array``) makes IR constants inside a trace and numpy arrays outside.
Shapes are static: they are Python ints at trace time, so ``x.shape[0] * 2`` is an int.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from accy.errors import AccyError, VerifyError
from accy.frontend.numpy_api import shape_of, trace_of, value_of, wrap
from accy.frontend.trace import constant, current_trace, default_dtype, user_location
from accy.frontend.tracer import Tracer
from accy.frontend.views import mark_view
from accy.ir import DType

__all__ = [
    "arange", "array", "asarray", "broadcast_to", "expand_dims", "eye", "full", "full_like",
    "ndim", "ones", "ones_like", "ravel", "reshape", "shape", "size", "squeeze", "swapaxes",
    "transpose", "zeros", "zeros_like",
]


def _shape_error(what: str, why: str) -> VerifyError:
    loc = user_location()
    return VerifyError(f"{what} at {loc}: {why}", position=loc)


def _resolve_shape(size: int, newshape: Any) -> tuple[int, ...]:
    shape = (int(newshape),) if isinstance(newshape, (int, np.integer)) else tuple(
        int(s) for s in newshape)
    if shape.count(-1) > 1:
        raise _shape_error("reshape", f"only one -1 is allowed in {list(shape)}")
    if -1 in shape:
        rest = math.prod(s for s in shape if s != -1)
        if rest == 0 or size % rest:
            raise _shape_error("reshape", f"cannot infer -1 in {list(shape)} for {size} elements")
        shape = tuple(size // rest if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise _shape_error(
            "reshape", f"cannot reshape {size} elements to {list(shape)} "
            f"({math.prod(shape)} elements); the element counts must agree")
    return shape


def _order(what: str, order: str) -> bool:
    """Whether numpy's ``order`` asks for column-major (``"F"``); ``"C"``, ``"A"`` and
    ``"K"`` are row-major for a traced array (its values are laid out row-major)."""
    if order not in ("C", "F", "A", "K"):
        raise _shape_error(what, f"order must be 'C', 'F', 'A' or 'K', got {order!r}")
    return order == "F"


def reshape(a: Any, newshape: Any, order: str = "C") -> Any:
    """``a`` with shape ``newshape`` (one extent may be -1), read and written in numpy's
    ``order``: row-major (a view that follows writes), or ``"F"`` column-major (a copy,
    as numpy's for a row-major array).

    Raises:
        VerifyError: the element counts differ (names the user's line), or a bad order.
    """
    tr = trace_of(a)
    if tr is None:
        return np.reshape(a, newshape, order=order)
    if _order("reshape", order):
        shape = _resolve_shape(a.size if isinstance(a, Tracer) else int(np.size(a)), newshape)
        out = transpose(reshape(transpose(a), tuple(shape)[::-1]))
        return wrap(tr, value_of(tr, out))  # detached: not a view
    shape = _resolve_shape(a.size if isinstance(a, Tracer) else int(np.size(a)), newshape)
    out = wrap(tr, tr.fb.reshape(value_of(tr, a), shape))
    if not isinstance(a, Tracer):
        return out
    return mark_view(out, a, lambda b: tr.fb.reshape(b.value, shape),
                     lambda b, v: b.__setitem__(..., tr.fb.reshape(v.value, b.shape)))


def transpose(a: Any, axes: Any = None) -> Any:
    """``a`` with its axes permuted (reversed when ``axes`` is None)."""
    tr = trace_of(a)
    if tr is None:
        return np.transpose(a, axes)
    rank = len(a.shape)
    perm = tuple(range(rank))[::-1] if axes is None else tuple(int(x) % max(rank, 1)
                                                                   for x in axes)
    if sorted(perm) != list(range(rank)):
        raise _shape_error("transpose", f"axes {list(axes)} are not a permutation of 0..{rank - 1}")
    if perm == tuple(range(rank)):
        return a
    out = wrap(tr, tr.fb.transpose(value_of(tr, a), perm))
    if not isinstance(a, Tracer):
        return out
    inverse = tuple(int(i) for i in np.argsort(perm))
    return mark_view(out, a, lambda b: tr.fb.transpose(b.value, perm),
                     lambda b, v: b.__setitem__(..., tr.fb.transpose(v.value, inverse)))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``a`` with two axes exchanged."""
    if trace_of(a) is None:
        return np.swapaxes(a, axis1, axis2)
    perm = list(range(a.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return transpose(a, perm)


def expand_dims(a: Any, axis: Any) -> Any:
    """``a`` with new axes of extent 1 at ``axis`` (an int or a tuple, positions in the
    result as numpy's)."""
    if trace_of(a) is None or not isinstance(a, Tracer):  # host data stays host data
        return np.expand_dims(a, axis)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    rank = len(a.shape) + len(axes)
    pos = {int(x) % rank for x in axes if isinstance(x, (int, np.integer)) and -rank <= x < rank}
    if len(pos) != len(axes):
        raise _shape_error("expand_dims", f"axis {axis!r} must be distinct ints in "
                           f"[{-rank}, {rank}) for a result of rank {rank}")
    dims = iter(a.shape)
    return reshape(a, [1 if i in pos else next(dims) for i in range(rank)])


def squeeze(a: Any, axis: Any = None) -> Any:
    """``a`` without the axes of extent 1 (all of them, or those in ``axis``)."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.squeeze(a, axis)
    rank = len(a.shape)
    axes = {i for i, s in enumerate(a.shape) if s == 1} if axis is None else {
        int(x) % rank for x in ((axis,) if isinstance(axis, int) else axis)}
    for i in axes:
        if a.shape[i] != 1:
            raise _shape_error("squeeze", f"axis {i} has extent {a.shape[i]}, not 1")
    return reshape(a, [s for i, s in enumerate(a.shape) if i not in axes])


def ravel(a: Any, order: str = "C") -> Any:
    """``a`` flattened to 1-D (in numpy's ``order``, see :func:`reshape`)."""
    if trace_of(a) is None:
        return np.ravel(a, order=order)
    return reshape(a, (-1,), order)


def broadcast_to(a: Any, shape: Any) -> Any:
    """``a`` broadcast to ``shape`` (numpy rules)."""
    tr = trace_of(a)
    if tr is None:
        return np.broadcast_to(a, shape)
    shape = tuple(int(s) for s in shape)
    try:
        np.broadcast_shapes(shape_of(a), shape)
    except ValueError:
        raise _shape_error("broadcast_to", f"cannot broadcast {list(shape_of(a))} to "
                           f"{list(shape)}; trailing axes must be equal or 1") from None
    return wrap(tr, tr.fb.broadcast_to(value_of(tr, a), shape))


# ---------------------------------------------------------------- creation
def _make(arr: np.ndarray) -> Any:
    tr = current_trace()
    if tr is None:
        return arr
    return wrap(tr, constant(tr.fb, arr))


def _dtype(dtype: Any, fill: Any = 0.0) -> np.dtype:
    if dtype is None:
        if isinstance(fill, int) and not isinstance(fill, bool) and \
                not -2**31 <= fill < 2**31:  # numpy's: the smallest of int64/uint64 holding it
            return np.dtype(np.int64 if -2**63 <= fill < 2**63 else np.uint64)
        return default_dtype(fill).numpy
    return DType.parse(dtype).numpy


#: a traced ``full`` (``zeros``, ``ones``, ``*_like``, ``empty``) of more elements than this
#: is one constant element broadcast to the shape: a dense constant of ``n`` elements would
#: be printed, hashed, pickled into the pipeline cache and bound as a buffer (a 4096 x 4096
#: ``zeros`` is 64 MiB); smaller ones stay dense constants (host folding sees their values)
SPLAT_ELEMENTS = 1024


def _creation_dims(what: str, shape: Any) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints, numpy's spelling) as a tuple of non-negative
    ints.

    Raises:
        VerifyError: an extent is not an integer (a float, a string, a traced value: shapes
            are static) or is negative; the message names the user's line.
    """
    if isinstance(shape, (str, bytes)):
        raise _shape_error(what, f"the shape must be an int or a tuple of ints, not {shape!r}")
    try:
        dims = tuple(operator.index(n) for n in (shape if np.iterable(shape) else (shape,)))
    except (TypeError, ValueError):
        raise _shape_error(what, f"the shape must be an int or a tuple of ints, not {shape!r}"
                           " (shapes are static: Python ints at trace time)") from None
    if any(n < 0 for n in dims):
        raise _shape_error(what, f"negative extent in shape {list(dims)}")
    return dims


def host_numpy(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` (a numpy creation function called on static arguments), its
    ``TypeError``/``ValueError`` (a float extent, a negative count, a string) raised as a
    VerifyError that names ``what`` and the user's line.

    Raises:
        VerifyError: numpy refused the arguments.
    """
    try:
        return fn(*args, **kwargs)
    except AccyError:
        raise
    except (TypeError, ValueError) as e:
        raise _shape_error(what, str(e)) from None


def full(shape: Any, fill_value: Any, dtype: Any = None, *, what: str = "full") -> Any:
    """An array of ``shape`` filled with ``fill_value`` (f32/i32/bool from the value; an
    integer past int32 gives int64, or uint64 past int64).

    Raises:
        VerifyError: ``fill_value`` does not fit ``dtype``; ``shape`` is not a tuple of
            non-negative ints (``what`` names the creation function in the message).
    """
    if isinstance(fill_value, Tracer):  # np.full_like(a, a.max()): the value broadcast
        dims = _creation_dims(what, shape)
        v = value_of(fill_value.trace, fill_value,
                     None if dtype is None else DType.parse(dtype))
        if v.type.rank:
            v = value_of(fill_value.trace, broadcast_to(wrap(fill_value.trace, v), dims))
        return wrap(fill_value.trace, fill_value.trace.fb.broadcast_to(v, dims))
    dt = _dtype(dtype, fill_value)
    dims = _creation_dims(what, shape)
    try:
        tr = current_trace()
        if tr is not None and math.prod(dims) > SPLAT_ELEMENTS:  # one element, broadcast
            fill = constant(tr.fb, np.full((), fill_value, dtype=dt))
            return wrap(tr, tr.fb.broadcast_to(fill, dims))
        return _make(np.full(dims, fill_value, dtype=dt))
    except OverflowError:
        raise VerifyError(f"{what} at {user_location()}: {fill_value!r} does not fit "
                          f"{dt.name}; give a wider dtype") from None


def zeros(shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (f32 unless ``dtype``)."""
    return full(shape, 0.0, DType.F32 if dtype is None else dtype, what="zeros")


def ones(shape: Any, dtype: Any = None) -> Any:
    """An array of ones (f32 unless ``dtype``)."""
    return full(shape, 1.0, DType.F32 if dtype is None else dtype, what="ones")


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Any:
    """An array shaped like ``a`` filled with ``fill_value`` (``a``'s dtype by default)."""
    return full(shape_of(a), fill_value, a.dtype if dtype is None else dtype)


def zeros_like(a: Any, dtype: Any = None) -> Any:
    """Zeros shaped like ``a``."""
    return full_like(a, 0, dtype)


def ones_like(a: Any, dtype: Any = None) -> Any:
    """Ones shaped like ``a``."""
    return full_like(a, 1, dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Any:
    """``numpy.arange`` with static bounds (i32 for ints, f32 for floats by default)."""
    arr = host_numpy("arange", np.arange, start, stop, step) if stop is not None else \
        host_numpy("arange", np.arange, start)
    dt = _dtype(dtype, arr.flat[0] if arr.size else 0) if dtype is None else _dtype(dtype)
    if dtype is None and arr.dtype.kind == "f":
        dt = np.dtype(np.float32)
    return _make(arr.astype(dt))


def eye(n: int, m: int | None = None, dtype: Any = None) -> Any:
    """Identity matrix ``(n, m)`` (f32 by default)."""
    return _make(host_numpy("eye", np.eye, n, m,
                            dtype=_dtype(DType.F32 if dtype is None else dtype)))


def asarray(a: Any, dtype: Any = None) -> Any:
    """``a`` as an array: traced arrays pass through (cast to ``dtype``); host data becomes
    a constant inside a trace (Python floats f32, ints i32) and numpy outside."""
    if isinstance(a, Tracer):
        from accy.frontend.numpy_api import astype

        return a if dtype is None else astype(a, dtype)
    if hasattr(a, "__accy_device_array__"):
        a = np.asarray(a)
    arr = np.asarray(a)
    if dtype is not None:
        arr = arr.astype(_dtype(dtype))
    elif not isinstance(a, np.ndarray) and arr.dtype.kind in "fi":
        arr = arr.astype(np.float32 if arr.dtype.kind == "f" else np.int32)
    return _make(arr)


array = asarray


def shape(a: Any) -> tuple[int, ...]:
    """``numpy.shape``: the static shape (Python ints) of a traced or host array."""
    return tuple(shape_of(a))


def ndim(a: Any) -> int:
    """``numpy.ndim``: the number of axes."""
    return len(shape_of(a))


def size(a: Any, axis: int | None = None) -> int:
    """``numpy.size``: the number of elements (along ``axis``)."""
    s = shape_of(a)
    return math.prod(s) if axis is None else s[axis]
