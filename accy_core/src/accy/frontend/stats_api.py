"""Statistics for ``accy.numpy``: ``ptp average median percentile quantile nansum nanmean
nanmax nanmin cov corrcoef trapezoid gradient``.

Written with the reductions, ``sort`` (the sort kernel family) and static slices.
``quantile`` (and ``median``, ``percentile``) sorts along the axis and interpolates
linearly between the two neighbouring order statistics at the virtual index
``q * (n - 1)`` with numpy's ``_lerp`` (numpy's default ``method="linear"``, Hyndman & Fan
type 7); a slice holding a NaN gives NaN, as numpy's. Integer inputs give f32 (accy's rule
for means). On host data each is numpy's function.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.join_api import stack
from accy.frontend.numpy_api import (
    _axes,
    add,
    astype,
    divide,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    sqrt,
    subtract,
    sum,
    trace_of,
    where,
)
from accy.frontend.ordering import sort
from accy.frontend.predicates_api import any as any_
from accy.frontend.predicates_api import isnan
from accy.frontend.shape_api import broadcast_to, expand_dims, full_like, ravel, reshape, transpose
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["average", "corrcoef", "cov", "gradient", "median", "nanmax", "nanmean", "nanmin",
           "nansum", "percentile", "ptp", "quantile", "trapezoid"]


def _eager(*xs: Any) -> bool:
    return trace_of(*xs) is None or not builtins.any(isinstance(x, Tracer) for x in xs)


def _float(x: Tracer) -> Tracer:
    return x if x.accy_dtype.is_float else astype(x, np.float32)


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Range ``max - min`` along ``axis`` (all axes when None)."""
    if _eager(a):
        return np.ptp(a, axis=axis, keepdims=keepdims)
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Weighted mean along ``axis``; 1-D ``weights`` of the axis's length apply along it.

    Returns ``(average, sum of weights)`` with ``returned=True``.

    Raises:
        VerifyError: weights of another shape without an axis, or not 1-D (numpy's rules).
    """
    if _eager(a, weights):
        return np.average(a, axis=axis, weights=weights, returned=returned, keepdims=keepdims)
    a = _float(a) if isinstance(a, Tracer) else a
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        return avg, full_like(avg, a.size // builtins.max(avg.size, 1))
    w = weights if isinstance(weights, Tracer) else np.asarray(weights, np.float32)
    if tuple(w.shape) != tuple(a.shape):
        if axis is None or len(w.shape) != 1:
            raise VerifyError(f"average at {user_location()}: weights of shape "
                              f"{list(w.shape)} for an array of shape {list(a.shape)} need "
                              "an axis and one weight per element along it")
        ax = _axes(axis, a.ndim)[0]
        w = reshape(w, tuple(-1 if i == ax else 1 for i in range(a.ndim)))
        w = broadcast_to(w, a.shape) if isinstance(w, Tracer) else np.broadcast_to(w, a.shape)
    wsum = sum(w, axis=axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


def _lerp(lo: Any, hi: Any, t: float) -> Any:
    """numpy's ``_lerp``: ``lo + (hi - lo) * t``, from the upper end when ``t >= 0.5``."""
    d = subtract(hi, lo)
    return subtract(hi, multiply(d, 1.0 - t)) if t >= 0.5 else add(lo, multiply(d, t))


def quantile(a: Any, q: Any, axis: Any = None, keepdims: bool = False,
             method: str = "linear") -> Any:
    """The ``q``-th quantile(s) (``q`` in [0, 1], a static number or host array) along
    ``axis`` (the flattened array when None); shape ``q.shape + reduced shape``.

    Raises:
        UnsupportedError: a traced ``q`` or a method other than ``"linear"``.
        VerifyError: ``q`` outside [0, 1].
    """
    if _eager(a, q):
        return np.quantile(a, q, axis=axis, keepdims=keepdims, method=method)
    loc = user_location()
    if isinstance(q, Tracer) or method != "linear":
        raise UnsupportedError(
            f"quantile/percentile/median at {loc}: accy needs q as a static number or host "
            "array and method='linear'", feature="quantile arguments",
            alternative="anp.sort(x, axis) and static slices")
    qs = np.asarray(q, np.float64)
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        raise VerifyError(f"quantile at {loc}: q must be in [0, 1] (percentile: [0, 100])")
    x = _float(a)
    if axis is None:
        x, ax, kshape = ravel(x), 0, (1,) * a.ndim
    else:
        ax = _axes(axis, x.ndim)[0]
        kshape = tuple(1 if i == ax else s for i, s in enumerate(x.shape))
    if ax != x.ndim - 1:
        x = transpose(x, [i for i in range(x.ndim) if i != ax] + [ax])
    s = sort(x, axis=-1)
    n = s.shape[-1]
    has_nan = any_(isnan(x), axis=-1)
    outs = []
    for qv in qs.reshape(-1):
        vi = float(qv) * (n - 1)
        lo = int(np.floor(vi))
        hi = builtins.min(lo + 1, n - 1)
        r = _lerp(s[..., lo], s[..., hi], vi - lo)
        r = where(has_nan, np.nan, r)
        outs.append(reshape(r, kshape) if keepdims else r)
    out = outs[0] if qs.ndim == 0 else reshape(stack(outs), qs.shape + outs[0].shape)
    return out


def percentile(a: Any, q: Any, axis: Any = None, keepdims: bool = False,
               method: str = "linear") -> Any:
    """``quantile(a, q / 100, ...)``."""
    if _eager(a, q):
        return np.percentile(a, q, axis=axis, keepdims=keepdims, method=method)
    return quantile(a, np.asarray(q, np.float64) / 100.0, axis=axis, keepdims=keepdims,
                    method=method)


def median(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The median along ``axis`` (the mean of the two middle values for an even count)."""
    if _eager(a):
        return np.median(a, axis=axis, keepdims=keepdims)
    return quantile(a, 0.5, axis=axis, keepdims=keepdims)


def nansum(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Sum treating NaN as zero."""
    if _eager(a):
        return np.nansum(a, axis=axis, keepdims=keepdims)
    if not a.accy_dtype.is_float:
        return sum(a, axis=axis, keepdims=keepdims)
    return sum(where(isnan(a), 0.0, a), axis=axis, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Mean of the non-NaN elements (NaN where all are NaN)."""
    if _eager(a):
        return np.nanmean(a, axis=axis, keepdims=keepdims)
    a = _float(a)
    ok = ~isnan(a)
    cnt = sum(astype(ok, a.dtype), axis=axis, keepdims=keepdims)
    return divide(sum(where(ok, a, 0.0), axis=axis, keepdims=keepdims), cnt)


def _nan_extreme(a: Any, axis: Any, keepdims: bool, big: bool) -> Any:
    if not a.accy_dtype.is_float:
        return (max if big else min)(a, axis=axis, keepdims=keepdims)
    nan = isnan(a)
    r = (max if big else min)(where(nan, -np.inf if big else np.inf, a), axis=axis,
                              keepdims=keepdims)
    all_nan = ~any_(~nan, axis=axis, keepdims=keepdims)
    return where(all_nan, np.nan, r)


def nanmax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Maximum ignoring NaN (NaN where all are NaN)."""
    if _eager(a):
        return np.nanmax(a, axis=axis, keepdims=keepdims)
    return _nan_extreme(a, axis, keepdims, True)


def nanmin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Minimum ignoring NaN (NaN where all are NaN)."""
    if _eager(a):
        return np.nanmin(a, axis=axis, keepdims=keepdims)
    return _nan_extreme(a, axis, keepdims, False)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None) -> Any:
    """Covariance matrix of the variables (rows when ``rowvar``, else columns) of ``m``
    (and ``y``, stacked below); a single variable gives a 0-d array."""
    if _eager(m, y):
        return np.cov(m, y, rowvar=rowvar, bias=bias, ddof=ddof)
    x = _float(m) if isinstance(m, Tracer) else m
    x = reshape(x, (1, -1)) if len(np.shape(x) if not isinstance(x, Tracer) else x.shape) == 1 \
        else (x if rowvar else transpose(x))
    if y is not None:
        yy = reshape(y, (1, -1)) if len(y.shape if isinstance(y, Tracer) else np.shape(y)) == 1 \
            else (y if rowvar else transpose(y))
        from accy.frontend.join_api import concatenate

        x = concatenate([x, yy], axis=0)
    n = x.shape[1]
    d = ddof if ddof is not None else (0 if bias else 1)
    xc = subtract(x, mean(x, axis=1, keepdims=True))
    c = divide(xc @ transpose(xc), float(n - d))
    return reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients (``cov`` normalised by the standard deviations,
    clipped to [-1, 1] as numpy's)."""
    if _eager(x, y):
        return np.corrcoef(x, y, rowvar=rowvar)
    c = cov(x, y, rowvar=rowvar)
    if c.ndim == 0:
        return divide(c, c)
    from accy.frontend.matrix_api import diag

    d = sqrt(diag(c))
    r = divide(divide(c, expand_dims(d, 1)), expand_dims(d, 0))
    return minimum(maximum(r, -1.0), 1.0)


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (sample points ``x`` or a
    spacing ``dx``)."""
    if _eager(y, x):
        return np.trapezoid(y, x, dx=dx, axis=axis)
    y = _float(y)
    ax = _axes(axis, y.ndim)[0]
    lo = tuple(slice(None, -1) if i == ax else slice(None) for i in range(y.ndim))
    hi = tuple(slice(1, None) if i == ax else slice(None) for i in range(y.ndim))
    avg = multiply(add(y[hi], y[lo]), 0.5)
    if x is None:
        return multiply(sum(avg, axis=ax), dx)
    xs = x if isinstance(x, Tracer) else np.asarray(x)
    if len(xs.shape) == 1 and y.ndim > 1:
        xs = reshape(xs, tuple(-1 if i == ax else 1 for i in range(y.ndim)))
    d = subtract(xs[hi] if len(xs.shape) == y.ndim else xs[1:],
                 xs[lo] if len(xs.shape) == y.ndim else xs[:-1])
    return sum(multiply(avg, d), axis=ax)


def _gradient_1d(f: Tracer, ax: int, h: float, edge_order: int) -> Any:
    n = f.shape[ax]

    def sl(a: int | None, b: int | None) -> Any:
        return f[tuple(slice(a, b) if i == ax else slice(None) for i in range(f.ndim))]

    inner = divide(subtract(sl(2, None), sl(None, -2)), 2.0 * h)
    if edge_order == 1:
        first = divide(subtract(sl(1, 2), sl(0, 1)), h)
        last = divide(subtract(sl(n - 1, n), sl(n - 2, n - 1)), h)
    else:
        first = divide(add(add(multiply(sl(0, 1), -3.0), multiply(sl(1, 2), 4.0)),
                           multiply(sl(2, 3), -1.0)), 2.0 * h)
        last = divide(add(add(multiply(sl(n - 1, n), 3.0), multiply(sl(n - 2, n - 1), -4.0)),
                          sl(n - 3, n - 2)), 2.0 * h)
    from accy.frontend.join_api import concatenate

    return concatenate([first, inner, last], axis=ax)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """numpy's ``gradient`` with uniform spacings (one scalar, or one per axis): central
    differences inside, one-sided ones of order ``edge_order`` (1 or 2) at the ends; one
    array per axis (a tuple when there are several).

    Raises:
        UnsupportedError: coordinate arrays as spacings (non-uniform grids).
        VerifyError: an axis shorter than ``edge_order + 1``.
    """
    if _eager(f):
        return np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f = _float(f)
    axes = list(range(f.ndim)) if axis is None else list(_axes(axis, f.ndim))
    if len(varargs) == 0:
        hs = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0 and not isinstance(varargs[0], Tracer):
        hs = [float(varargs[0])] * len(axes)
    elif len(varargs) == len(axes) and builtins.all(
            np.ndim(h) == 0 and not isinstance(h, Tracer) for h in varargs):
        hs = [float(h) for h in varargs]
    else:
        raise UnsupportedError(
            f"gradient at {user_location()} with coordinate arrays: accy takes uniform "
            "spacings (one number, or one per axis); for a non-uniform grid divide "
            "np.diff(f) by np.diff(x)", feature="gradient coordinates",
            alternative="np.diff(f) / np.diff(x)")
    if edge_order not in (1, 2):
        raise VerifyError(f"gradient at {user_location()}: edge_order must be 1 or 2")
    out = []
    for ax, h in zip(axes, hs, strict=True):
        if f.shape[ax] < edge_order + 1:
            raise VerifyError(f"gradient at {user_location()}: axis {ax} has "
                              f"{f.shape[ax]} elements; edge_order={edge_order} needs at "
                              f"least {edge_order + 1}")
        out.append(_gradient_1d(f, ax, h, edge_order))
    return out[0] if len(out) == 1 else tuple(out)
