"""Scans, arg-reductions and counting for ``accy.numpy``: ``cumsum``, ``cumprod``,
``argmax``, ``argmin``, ``histogram``, ``bincount``.

``cumsum``/``cumprod`` are log-step (Hillis-Steele) scans built from ``tensor.slice``,
``tensor.pad`` and one add or multiply per step: ``ceil(log2(n))`` fused elementwise steps,
exact for integers, in the input's dtype (bool sums count in i32, like ``sum``).
``argmax``/``argmin`` give the first position of the extreme (a NaN counts as the extreme,
as in numpy) as i32. ``histogram`` counts with a one-hot comparison (i32 counts);
``bincount`` adds into ``minlength`` bins with a scatter-add (``x.at[i].add``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.frontend.numpy_api import (
    _axes,
    astype,
    greater_equal,
    less,
    less_equal,
    logical_and,
    max,
    min,
    not_equal,
    shape_of,
    sum,
    sum_dtype,
    trace_of,
    value_of,
    where,
    wrap,
)
from accy.frontend.shape_api import ravel, reshape
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType, TensorType

__all__ = ["argmax", "argmin", "bincount", "cumprod", "cumsum", "histogram"]


def _scan(a: Any, axis: Any, dtype: Any, kind: str) -> Any:
    tr = trace_of(a)
    if tr is None or not isinstance(a, Tracer):
        return (np.cumsum if kind == "add" else np.cumprod)(a, axis=axis, dtype=dtype)
    if dtype is not None:
        a = astype(a, dtype)
    elif kind in ("add", "mul") and sum_dtype(a.accy_dtype) != a.accy_dtype:
        a = astype(a, sum_dtype(a.accy_dtype).numpy)  # bool → i32, int8 → int64, ...
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axes(axis, a.ndim)[0]
    fb, v = tr.fb, a.value
    n, rank, d = a.shape[ax], a.ndim, 1
    while d < n:
        start, limit = [0] * rank, list(v.type.shape)
        limit[ax] = n - d
        low, high = [0] * rank, [0] * rank
        low[ax] = d
        shifted = fb.pad(fb.slice(v, start, limit), low, high, _identity(kind))
        if kind in ("max", "min"):  # the first d keep their own value (idempotent op)
            one = [1] * rank
            one[ax] = n
            keep = value_of(tr, (np.arange(n) >= d).reshape(one), DType.BOOL)
            shifted = fb.select(fb.broadcast_to(keep, v.type.shape), shifted, v)
        v = getattr(fb, kind)(v, shifted)
        d *= 2
    return wrap(tr, v)


def _identity(kind: str) -> float:
    """The scan's padding: the identity of add / mul (max and min select instead)."""
    return 1.0 if kind == "mul" else 0.0


def accumulate(a: Any, op: str, axis: int = 0, dtype: Any = None) -> Any:
    """``numpy.<ufunc>.accumulate`` for ``op`` add | multiply | maximum | minimum:
    the running sum, product, maximum (``np.maximum.accumulate``, a running peak) or minimum
    along ``axis`` (numpy's default 0; NaN propagates forward, as numpy's)."""
    kind = {"add": "add", "multiply": "mul", "maximum": "max", "minimum": "min"}[op]
    if trace_of(a) is None or not isinstance(a, Tracer):
        return getattr(np, op).accumulate(a, axis=axis, dtype=dtype)
    if axis is None:
        raise VerifyError(f"np.{op}.accumulate at {user_location()}: axis=None is not "
                          "allowed (numpy's rule too); flatten first")
    return _scan(a, axis, dtype, kind)


def cumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """Running sum along ``axis`` (the flattened array when None); same shape."""
    return _scan(a, axis, dtype, "add")


def cumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """Running product along ``axis`` (the flattened array when None); same shape."""
    return _scan(a, axis, dtype, "mul")


def _arg(a: Any, axis: Any, keepdims: bool, largest: bool) -> Any:
    tr = trace_of(a)
    if tr is None or not isinstance(a, Tracer):
        return (np.argmax if largest else np.argmin)(a, axis=axis, keepdims=keepdims)
    if a.size == 0:
        raise VerifyError(f"{'argmax' if largest else 'argmin'} at {user_location()}: "
                          "attempt to get the position in an empty sequence")
    if axis is None:
        out = _arg(ravel(a), 0, False, largest)
        return reshape(out, (1,) * a.ndim) if keepdims else out
    ax = _axes(axis, a.ndim)[0]
    ext = (max if largest else min)(a, axis=ax, keepdims=True)
    hit = a == ext
    if a.accy_dtype.is_float:
        nan = not_equal(a, a)
        any_nan = max(astype(nan, np.int32), axis=ax, keepdims=True) > 0
        hit = where(any_nan, nan, hit)
    # positions along ax only, broadcast by where(): no full-shape iota, which accy.dask
    # could not split along the other (chunked) axes
    pos_shape = tuple(n if i == ax else 1 for i, n in enumerate(a.shape))
    pos = wrap(tr, tr.fb.iota(TensorType(DType.I32, pos_shape), dim=ax))
    return min(where(hit, pos, a.shape[ax]), axis=ax, keepdims=keepdims)


def argmax(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Position (i32) of the first maximum along ``axis`` (of the flattened array when
    None); a NaN is the maximum, like numpy.

    Raises:
        VerifyError: an empty array.
    """
    return _arg(a, axis, keepdims, True)


def argmin(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Position (i32) of the first minimum along ``axis``; see :func:`argmax`."""
    return _arg(a, axis, keepdims, False)


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
              density: bool | None = None) -> Any:
    """``(counts, edges)`` of the flattened ``a`` like ``numpy.histogram``: ``bins`` is an
    int (equal bins over ``range``, default ``(a.min(), a.max())``) or host bin edges; the
    last bin is closed. Counts are i32 (weights' dtype with ``weights``); with ``density``
    the counts divided by their total and the bin widths (float, integrating to 1).

    Raises:
        VerifyError: edges that do not increase.
    """
    tr = trace_of(a, weights)
    if tr is None or not isinstance(a, Tracer):
        return np.histogram(a, bins=bins, range=range, weights=weights, density=density)
    if density:
        counts, e = histogram(a, bins, range, weights)
        c = astype(counts, e.dtype) if np.dtype(counts.dtype).kind != "f" else counts
        return c / sum(c) / (e[1:] - e[:-1]), e
    x = ravel(a)
    if not x.accy_dtype.is_float:
        x = astype(x, np.float32)
    if isinstance(bins, (int, np.integer)):
        lo, hi = (min(x), max(x)) if range is None else range
        nb = int(bins)
        # numpy.linspace's rounding: start + i * ((stop - start) / n), so values that sit
        # on an edge fall in the same bin as numpy's (lo + (hi - lo) * (i / n) is an ulp off)
        steps = np.arange(nb + 1, dtype=x.dtype)
        traced = isinstance(lo, Tracer) or isinstance(hi, Tracer)
        edges = (lo + steps * ((hi - lo) / x.dtype.type(nb)) if traced
                 else np.linspace(lo, hi, nb + 1).astype(x.dtype))
    else:
        edges = np.asarray(bins, x.dtype)
        if edges.ndim != 1 or (np.diff(edges) < 0).any():
            raise VerifyError(f"histogram at {user_location()}: bins must increase "
                              "monotonically")
    e = edges if isinstance(edges, Tracer) else wrap(tr, value_of(tr, edges))
    xs = reshape(x, (-1, 1))
    last = np.zeros(e.shape[0] - 1, bool)
    last[-1] = True
    left, right = e[None, :-1], where(last, e[-1:], e[1:])[None, :]
    if isinstance(bins, (int, np.integer)):  # the last edge is exactly the range's end
        right = where(last, hi, e[1:])[None, :]
    inside = logical_and(greater_equal(xs, left),
                         where(last, less_equal(xs, right), less(xs, right)))
    if weights is None:
        return sum(inside, axis=0), e
    w = reshape(ravel(weights), (-1, 1))
    return sum(where(inside, w, 0), axis=0), e


def bincount(x: Any, weights: Any = None, minlength: int = 0) -> Any:
    """``numpy.bincount``: how often each value ``0 .. minlength-1`` occurs in the 1-D
    non-negative integer array ``x`` (summed ``weights`` instead, with weights).

    Under ``accy.jit`` the result length cannot depend on the data: it is ``minlength``
    (JAX's ``jnp.bincount(x, length=minlength)``), and values outside ``[0, minlength)``
    are not counted. Counts are i32; weighted sums have the weights' dtype. A host ``x``
    is numpy's ``bincount``.

    Raises:
        VerifyError: ``x`` not a 1-D integer array, a traced ``x`` without ``minlength``,
            or ``weights`` of another shape.
    """
    tr = trace_of(x, weights)
    if tr is None:
        return np.bincount(x, weights=weights, minlength=minlength)
    if not isinstance(x, Tracer):
        x = wrap(tr, value_of(tr, np.asarray(x)))
    if x.ndim != 1 or x.accy_dtype.is_float or x.dtype == np.bool_:
        raise VerifyError(f"bincount at {user_location()}: x must be a 1-D integer array, got "
                          f"{x.dtype}{list(x.shape)}")
    n = int(minlength)
    if n <= 0:
        raise VerifyError(f"bincount at {user_location()}: under accy.jit the number of bins "
                          "cannot depend on the data; pass minlength= (the number of bins; "
                          "larger values are not counted)")
    # values outside [0, n) go to an extra bin n, cut off after: the weights go into the
    # scatter as they are (a where() over them was one more pass over memory; a jitted
    # bincount of 16M f64 weights took 122 ms of CPU time that way, 94 ms this way)
    if x.accy_dtype.bits < 32 or x.accy_dtype.is_unsigned:  # u8 pixels: bin n = 256 fits
        x = astype(x, np.int64 if x.accy_dtype.bits >= 32 else np.int32)
    idx = where(logical_and(greater_equal(x, 0), less(x, n)), x, n)
    if weights is None:
        w = astype(greater_equal(x, x), np.int32)  # ones, of x's shape
    else:
        if shape_of(weights) != tuple(x.shape):
            raise VerifyError(f"bincount at {user_location()}: weights shape "
                              f"{list(shape_of(weights))} differs from x's {list(x.shape)}")
        w = weights
    from accy.frontend.shape_api import zeros

    return zeros((n + 1,), dtype=w.dtype).at[idx].add(w)[:n]
