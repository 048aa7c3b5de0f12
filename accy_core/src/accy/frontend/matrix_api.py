"""Diagonals and norms for ``accy.numpy``: ``diag``, ``diagonal``, ``trace`` and
``linalg.norm``.

``diagonal`` gathers the flattened last two axes at constant positions; ``diag`` of a
vector selects it under a constant ``eye`` mask; ``norm`` is the reduction numpy defines
for each ``ord`` (``sqrt(sum(x * x))`` by default). ``anp.linalg`` holds ``norm``; other
``numpy.linalg`` names (factorisations, ``solve``, ``svd``) raise
:class:`~accy.frontend.errors.UnsupportedFunctionError` with an alternative.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.indexing import take
from accy.frontend.numpy_api import (
    abs,
    astype,
    max,
    min,
    not_equal,
    power,
    sqrt,
    sum,
    trace_of,
    where,
)
from accy.frontend.shape_api import reshape, transpose
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["diag", "diagonal", "norm", "trace"]


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.diagonal``: the ``offset``-th diagonal of the ``axis1``/``axis2`` planes,
    as the last axis of the result.

    Raises:
        VerifyError: ``a`` of rank < 2 or equal axes.
    """
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.diagonal(a, offset, axis1, axis2)
    if a.ndim < 2:
        raise VerifyError(f"diagonal at {user_location()} needs rank >= 2, got shape "
                          f"{list(a.shape)}")
    ax1, ax2 = axis1 % a.ndim, axis2 % a.ndim
    if ax1 == ax2:
        raise VerifyError(f"diagonal at {user_location()}: axis1 and axis2 are both {ax1}")
    rest = [k for k in range(a.ndim) if k not in (ax1, ax2)]
    x = transpose(a, (*rest, ax1, ax2)) if (ax1, ax2) != (a.ndim - 2, a.ndim - 1) else a
    r, c = x.shape[-2:]
    k = int(offset)
    n = builtins.max(0, builtins.min(r, c - k) if k >= 0 else builtins.min(r + k, c))
    i = np.arange(n)
    flat = ((i + (-k if k < 0 else 0)) * c + i + (k if k > 0 else 0)).astype(np.int32)
    return take(reshape(x, (*x.shape[:-2], r * c)), flat, axis=x.ndim - 2)


def diag(v: Any, k: int = 0) -> Any:
    """``numpy.diag``: the ``k``-th diagonal of a 2-D ``v``, or a square matrix with the
    1-D ``v`` on its ``k``-th diagonal (zeros elsewhere).

    Raises:
        VerifyError: ``v`` of rank other than 1 or 2.
    """
    if trace_of(v) is None or not isinstance(v, Tracer):
        return np.diag(v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise VerifyError(f"diag at {user_location()} needs a 1-D or 2-D array, got shape "
                          f"{list(v.shape)}")
    n = v.shape[0]
    size = n + (k if k >= 0 else -k)
    cols = np.clip(np.arange(size) - (k if k > 0 else 0), 0, builtins.max(n - 1, 0))
    row = take(v, cols.astype(np.int32), axis=0)
    return where(np.eye(size, k=k, dtype=bool), reshape(row, (1, size)), 0)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.trace``: the sum of :func:`diagonal` (integers sum in accy's sum dtype)."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.trace(a, offset, axis1, axis2)
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


def _vector_norm(x: Tracer, ord: Any, axes: tuple[int, ...], keepdims: bool) -> Any:  # noqa: A002
    a = abs(x)
    if ord is None or ord == 2:
        return sqrt(sum(x * x, axis=axes, keepdims=keepdims))
    if ord == np.inf:
        return max(a, axis=axes, keepdims=keepdims)
    if ord == -np.inf:
        return min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return astype(sum(not_equal(x, 0), axis=axes, keepdims=keepdims), x.dtype)
    if ord == 1:
        return sum(a, axis=axes, keepdims=keepdims)
    if isinstance(ord, (int, float)) and not isinstance(ord, bool):
        return power(sum(power(a, float(ord)), axis=axes, keepdims=keepdims), 1.0 / float(ord))
    return None


def _matrix_norm(x: Tracer, ord: Any, axes: tuple[int, ...], keepdims: bool) -> Any:  # noqa: A002
    r, c = axes
    if ord is None or ord == "fro":
        return sqrt(sum(x * x, axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        inner, outer = (r, c) if ord in (1, -1) else (c, r)
        s = sum(abs(x), axis=inner, keepdims=True)
        out = (max if ord in (1, np.inf) else min)(s, axis=outer, keepdims=True)
        return out if keepdims else reshape(out, tuple(
            n for k, n in enumerate(x.shape) if k not in axes))
    if ord in (2, -2, "nuc"):
        raise UnsupportedError(
            f"linalg.norm(ord={ord!r}) of a matrix at {user_location()} needs singular "
            "values, which accy does not compute; use ord='fro', 1 or inf, or estimate "
            "the largest singular value by power iteration (accy.lax.while_loop)",
            feature=f"norm ord={ord!r}", alternative="ord='fro', power iteration")
    return None


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """``numpy.linalg.norm``: vector norms (``ord`` None/2, 1, inf, -inf, 0, any p) over
    one axis (or a 1-D array), matrix norms (None/'fro', 1, -1, inf, -inf) over two axes
    (or a 2-D array); integer input is computed in f32.

    Raises:
        UnsupportedError: ``ord`` 2, -2 or 'nuc' of a matrix (singular values; estimate
            the largest with power iteration), or another ``ord``.
    """
    if trace_of(x) is None or not isinstance(x, Tracer):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    if not x.accy_dtype.is_float:
        x = astype(x, np.float32)
    if axis is None and ord is None:
        return sqrt(sum(x * x, axis=None, keepdims=keepdims))
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(int(a) % x.ndim for a in axes)
    out = None
    if len(axes) == 1:
        out = _vector_norm(x, ord, axes, keepdims)
    elif len(axes) == 2:
        out = _matrix_norm(x, ord, axes, keepdims)
    if out is None:
        raise UnsupportedError(f"linalg.norm(ord={ord!r}, axis={axis!r}) at "
                               f"{user_location()} is not supported; use ord None, 1, 2, inf "
                               "or 'fro'", feature=f"norm ord={ord!r}", alternative="ord=None")
    return out
