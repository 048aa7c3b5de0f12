"""Complex arrays through the functions that move or copy elements without arithmetic.

A :class:`~accy.frontend.complex_api.ComplexTracer` is a pair of float arrays, so any
function that is linear in its array operands and does not mix elements of the two parts
(creation ``*_like``, ``where``, joining, ``roll``/``flip``, shape functions, ``take``,
``diff``, ``cumsum``, ``trace``/``diag``) is applied to the real parts and to the
imaginary parts separately; a real operand joins with a zero imaginary part. ``square``
is ``z * z``. Importing this module adds these names to
:data:`accy.frontend.complex_api.FUNCTIONS` (so ``np.zeros_like(z)``,
``np.where(m, z * z + c, z)`` and ``np.concatenate([a, b])`` work on complex tracers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from accy.frontend import complex_api, grid_api, join_api, numpy_api, scan_api, shape_api
from accy.frontend.complex_api import ComplexTracer, is_complex
from accy.frontend.indexing import take
from accy.frontend.tracer import Tracer

__all__ = ["FUNCTIONS"]


def _pair(x: Any, like: Any = None) -> tuple[Any, Any]:
    """``(re, im)`` of ``x``; a real traced array gets a zero imaginary part."""
    if is_complex(x):
        return complex_api._parts(x)
    if isinstance(x, Tracer):
        return x, shape_api.zeros_like(x) if x.accy_dtype.is_float else \
            shape_api.zeros_like(x, dtype=np.float32)
    return x, np.zeros_like(np.asarray(x), dtype=np.float64 if like is None else like)


def _float_dtype(xs: list[Any]) -> Any:
    for x in xs:
        if isinstance(x, ComplexTracer):
            return x.re.dtype
    return np.float32


def _unary(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(z, *rest)`` on each part of ``z``."""
    def g(a: Any, *args: Any, **kwargs: Any) -> Any:
        re, im = _pair(a)
        return ComplexTracer(fn(re, *args, **kwargs), fn(im, *args, **kwargs))

    g.__name__ = fn.__name__
    g.__doc__ = f"``{fn.__name__}`` of each part of a complex array."
    return g


def _sequence(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(arrays, *rest)`` on the real parts and on the imaginary parts of ``arrays``."""
    def g(arrays: Any, *args: Any, **kwargs: Any) -> Any:
        arrays = list(arrays)
        f = _float_dtype(arrays)
        parts = [_pair(a, f) for a in arrays]
        return ComplexTracer(fn([p[0] for p in parts], *args, **kwargs),
                             fn([p[1] for p in parts], *args, **kwargs))

    g.__name__ = fn.__name__
    g.__doc__ = f"``{fn.__name__}`` of complex arrays (part by part)."
    return g


def _like(fn: Callable[..., Any], fill: Any) -> Callable[..., Any]:
    """``zeros_like``/``ones_like``/``empty_like``: complex unless ``dtype`` is real."""
    def g(a: Any, dtype: Any = None) -> Any:
        re = complex_api._parts(a)[0]
        if dtype is not None and np.dtype(dtype).kind != "c":
            return fn(re, dtype=dtype)
        f = complex_api._float_of(dtype) if dtype is not None else re.dtype
        return ComplexTracer(shape_api.full_like(re, fill, dtype=f),
                             shape_api.zeros_like(re, dtype=f))

    g.__name__ = fn.__name__
    return g


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Any:
    """``numpy.full_like`` of a complex array (or with a complex fill or dtype)."""
    re = complex_api._parts(a)[0]
    if dtype is not None and np.dtype(dtype).kind != "c":
        return shape_api.full_like(re, np.real(fill_value), dtype=dtype)
    f = complex_api._float_of(dtype) if dtype is not None else (
        re.dtype if isinstance(a, ComplexTracer) else np.float32)
    c = complex(fill_value)
    return ComplexTracer(shape_api.full_like(re, c.real, dtype=f),
                         shape_api.full_like(re, c.imag, dtype=f))


def where(condition: Any, x: Any, y: Any) -> Any:
    """``numpy.where(condition, x, y)`` with a complex ``x`` or ``y``."""
    f = _float_dtype([x, y])
    (xr, xi), (yr, yi) = _pair(x, f), _pair(y, f)
    return ComplexTracer(numpy_api.where(condition, xr, yr), numpy_api.where(condition, xi, yi))


def square(x: Any) -> Any:
    """``z * z``."""
    return complex_api.multiply(x, x)


def _copy(a: Any) -> Any:
    """A new array with ``a``'s values (writes to it do not reach ``a``)."""
    if not is_complex(a):
        return a.copy() if isinstance(a, Tracer) else np.array(a, copy=True)
    re, im = complex_api._parts(a)
    return ComplexTracer(re.copy(), im.copy())


FUNCTIONS: dict[str, Any] = {
    "zeros_like": _like(shape_api.zeros_like, 0.0), "ones_like": _like(shape_api.ones_like, 1.0),
    "empty_like": _like(grid_api.empty_like, 0.0), "full_like": full_like, "where": where,
    "square": square, "copy": _copy,
    **{fn.__name__: _unary(fn) for fn in (
        join_api.roll, join_api.flip, join_api.diff, shape_api.transpose, shape_api.swapaxes,
        shape_api.expand_dims, shape_api.squeeze, shape_api.ravel, shape_api.broadcast_to,
        shape_api.reshape,
        take, scan_api.cumsum, grid_api.triu, grid_api.tril)},
    **{fn.__name__: _sequence(fn) for fn in (
        join_api.concatenate, join_api.stack, join_api.hstack, join_api.vstack,
        join_api.dstack, join_api.column_stack)},
}
complex_api.FUNCTIONS.update(FUNCTIONS)


def _install_methods() -> None:
    """The ndarray methods of complex tracers that mirror these functions."""
    for name in ("copy", "ravel", "squeeze", "swapaxes", "take", "cumsum", "transpose"):
        setattr(ComplexTracer, name, FUNCTIONS[name])
    ComplexTracer.flatten = lambda self: _copy(FUNCTIONS["ravel"](self))  # type: ignore


_install_methods()
