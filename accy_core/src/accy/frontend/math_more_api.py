"""More of numpy's elementwise math for ``accy.numpy``, written with the existing ops.

``log1p expm1 log2 log10 exp2 tan sinh cosh arcsin arccos arcsinh arccosh arctanh hypot
cbrt reciprocal round/around/rint fix deg2rad rad2deg degrees radians fmax fmin copysign
signbit logaddexp logaddexp2 heaviside sinc nan_to_num isclose logical_xor positive fabs``.

Each is a short composition of IR ops that fuses into its neighbours' kernel; on host data
it is numpy's function. Integer inputs of float functions give f32 (accy's rule for ``/``
and ``sqrt``). Accuracy (all compared with numpy in the tests): ``log1p`` and ``expm1`` use
the compensations of Goldberg ("What every computer scientist should know about
floating-point arithmetic", 1991, theorem 4) and Kahan, so small arguments keep their
relative accuracy; ``hypot`` scales by the larger magnitude (no overflow for finite
inputs, ``inf`` where a part is infinite even with a NaN, as C99); ``round`` rounds halves
to even as numpy does; ``sinh`` goes through ``expm1`` near zero. ``signbit`` of a NaN is
False (numpy reads the sign bit of the NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.frontend.intmath_api import arctan2, floor, trunc
from accy.frontend.numpy_api import (
    abs,
    add,
    astype,
    common,
    cos,
    divide,
    equal,
    exp,
    greater,
    less,
    log,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    sin,
    sqrt,
    subtract,
    trace_of,
    where,
)
from accy.frontend.predicates_api import isfinite, isinf, isnan
from accy.frontend.tracer import Tracer
from accy.ir import DType

__all__ = ["arccos", "arccosh", "arcsin", "arcsinh", "arctanh", "around", "cbrt", "copysign",
           "cosh", "deg2rad", "degrees", "exp2", "expm1", "fabs", "fix", "fmax", "fmin",
           "heaviside", "hypot", "isclose", "log10", "log1p", "log2", "logaddexp",
           "logaddexp2", "logical_xor", "nan_to_num", "positive", "rad2deg", "radians",
           "reciprocal", "rint", "round", "signbit", "sinc", "sinh", "tan"]

_LN2 = float(np.log(2.0))


def _eager(*xs: Any) -> bool:
    return trace_of(*xs) is None or not any(isinstance(x, Tracer) for x in xs)


def _f(x: Any, *others: Any) -> Any:
    """``x`` as a float array of the operands' common float dtype (integers → f32)."""
    dt = common(x, *others)
    dt = dt if dt.is_float else DType.F32
    return astype(x, dt.numpy) if isinstance(x, Tracer) and x.accy_dtype != dt else x


def _unary(np_fn: Any, build: Any) -> Any:
    def fn(x: Any) -> Any:
        if _eager(x):
            return np_fn(x)
        return build(_f(x))

    fn.__name__ = np_fn.__name__
    fn.__doc__ = f"Elementwise ``numpy.{np_fn.__name__}`` (integers give f32); same shape."
    return fn


def _log1p(x: Any) -> Any:
    u = add(x, 1.0)
    d = subtract(u, 1.0)
    safe = where(equal(d, 0), 1.0, d)
    return where(equal(d, 0), x, where(isinf(u), u, divide(multiply(log(u), x), safe)))


def _expm1(x: Any) -> Any:
    u = exp(x)
    um1 = subtract(u, 1.0)
    lu = log(u)
    safe = where(equal(lu, 0), 1.0, lu)
    good = divide(multiply(um1, x), safe)
    out = where(equal(u, 1.0), x, where(equal(um1, -1.0), -1.0, good))
    return where(isinf(u), u, out)


def _tan(x: Any) -> Any:
    return divide(sin(x), cos(x))


def _sinh(x: Any) -> Any:
    a = abs(x)
    big = greater(a, 700.0 if x.dtype == np.float64 else 85.0)
    e = _expm1(where(big, 0.0, a))
    s = multiply(add(e, divide(e, add(e, 1.0))), 0.5)  # (e^a - e^-a) / 2 without cancelling
    s = where(big, exp(subtract(a, _LN2)), s)
    return where(less(x, 0), negative(s), s)


def _cosh(x: Any) -> Any:
    a = abs(x)
    big = greater(a, 700.0 if x.dtype == np.float64 else 85.0)
    e = exp(where(big, 0.0, a))
    return where(big, exp(subtract(a, _LN2)), multiply(add(e, divide(1.0, e)), 0.5))


def _arcsin(x: Any) -> Any:
    return arctan2(x, sqrt(multiply(subtract(1.0, x), add(1.0, x))))


def _arccos(x: Any) -> Any:
    return arctan2(sqrt(multiply(subtract(1.0, x), add(1.0, x))), x)


def _arcsinh(x: Any) -> Any:
    a = abs(x)
    big = greater(a, 2.0 ** 28)
    small = add(a, divide(multiply(a, a), add(1.0, sqrt(add(1.0, multiply(a, a))))))
    r = where(big, add(log(where(big, a, 1.0)), _LN2), _log1p(where(big, 0.0, small)))
    return where(less(x, 0), negative(r), r)


def _arccosh(x: Any) -> Any:
    big = greater(x, 2.0 ** 28)
    t = subtract(x, 1.0)
    small = _log1p(add(t, sqrt(add(multiply(t, t), multiply(t, 2.0)))))
    return where(big, add(log(where(big, x, 1.0)), _LN2), small)


def _arctanh(x: Any) -> Any:
    return multiply(_log1p(divide(multiply(x, 2.0), subtract(1.0, x))), 0.5)


def _cbrt(x: Any) -> Any:
    a = abs(x)
    r = power(a, 1.0 / 3.0)
    r = add(r, divide(subtract(divide(a, multiply(r, r)), r), 3.0))  # one Newton step
    r = where(logical_or(equal(a, 0), isinf(a)), a, r)
    return where(less(x, 0), negative(r), r)


def _rint(x: Any) -> Any:
    """Round half to even: ``floor(x + 0.5)``, one less where that was a tie to odd."""
    r = floor(add(x, 0.5))
    tie = equal(subtract(r, x), 0.5)
    odd = not_equal(subtract(r, multiply(floor(multiply(r, 0.5)), 2.0)), 0)
    r = where(logical_and(tie, odd), subtract(r, 1.0), r)
    big = 2.0 ** (52 if x.dtype == np.float64 else 23)
    return where(less(abs(x), big), r, x)  # already integral (and x + 0.5 would round)


log1p = _unary(np.log1p, _log1p)
expm1 = _unary(np.expm1, _expm1)
log2 = _unary(np.log2, lambda x: divide(log(x), _LN2))
log10 = _unary(np.log10, lambda x: divide(log(x), float(np.log(10.0))))
exp2 = _unary(np.exp2, lambda x: exp(multiply(x, _LN2)))
tan = _unary(np.tan, _tan)
sinh = _unary(np.sinh, _sinh)
cosh = _unary(np.cosh, _cosh)
arcsin = _unary(np.arcsin, _arcsin)
arccos = _unary(np.arccos, _arccos)
arcsinh = _unary(np.arcsinh, _arcsinh)
arccosh = _unary(np.arccosh, _arccosh)
arctanh = _unary(np.arctanh, _arctanh)
cbrt = _unary(np.cbrt, _cbrt)
rint = _unary(np.rint, _rint)
deg2rad = radians = _unary(np.deg2rad, lambda x: multiply(x, float(np.pi / 180.0)))
rad2deg = degrees = _unary(np.rad2deg, lambda x: multiply(x, float(180.0 / np.pi)))
sinc = _unary(np.sinc, lambda x: where(equal(x, 0), 1.0, divide(
    sin(multiply(x, float(np.pi))), multiply(where(equal(x, 0), 1.0, x), float(np.pi)))))
fix = _unary(np.fix, trunc)


def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x`` in ``x``'s dtype (numpy's: integers stay integers, floats)."""
    if _eager(x):
        return np.reciprocal(x)
    if not x.accy_dtype.is_float:
        return astype(divide(1, x), x.dtype)
    return divide(1.0, x)


def round(a: Any, decimals: int = 0) -> Any:  # noqa: A001 - numpy's name
    """``numpy.round``: to ``decimals`` places, halves to even (integers pass through)."""
    if _eager(a):
        return np.round(a, decimals)
    if not a.accy_dtype.is_float:
        return a
    if decimals == 0:
        return _rint(a)
    s = float(10.0 ** decimals)
    return divide(_rint(multiply(a, s)), s)


around = round


def fabs(x: Any) -> Any:
    """Elementwise ``|x|`` as a float."""
    return np.fabs(x) if _eager(x) else abs(_f(x))


def positive(x: Any) -> Any:
    """``+x`` (a copy)."""
    return np.positive(x) if _eager(x) else add(x, 0)


def hypot(x1: Any, x2: Any) -> Any:
    """Elementwise ``sqrt(x1**2 + x2**2)`` without overflow or underflow in between."""
    if _eager(x1, x2):
        return np.hypot(x1, x2)
    a, b = abs(_f(x1, x2)), abs(_f(x2, x1))
    hi, lo = maximum(a, b), minimum(a, b)
    r = divide(lo, where(equal(hi, 0), 1.0, hi))
    h = multiply(hi, sqrt(add(1.0, multiply(r, r))))
    h = where(equal(hi, 0), 0.0, h)
    return where(logical_or(isinf(a), isinf(b)), np.inf, h)


def signbit(x: Any) -> Any:
    """Elementwise: whether ``x`` is negative, -0.0 included (NaN: False)."""
    if _eager(x):
        return np.signbit(x)
    if not x.accy_dtype.is_float:
        return less(x, 0)
    return logical_or(less(x, 0), logical_and(equal(x, 0), less(divide(1.0, x), 0)))


def copysign(x1: Any, x2: Any) -> Any:
    """Elementwise ``|x1|`` with the sign of ``x2``."""
    if _eager(x1, x2):
        return np.copysign(x1, x2)
    a = abs(_f(x1, x2))
    return where(signbit(_f(x2, x1)), negative(a), a)


def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum that ignores a NaN (NaN only where both are)."""
    if _eager(x1, x2):
        return np.fmax(x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, maximum(x1, x2)))


def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum that ignores a NaN (NaN only where both are)."""
    if _eager(x1, x2):
        return np.fmin(x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, minimum(x1, x2)))


def logaddexp(x1: Any, x2: Any) -> Any:
    """Elementwise ``log(exp(x1) + exp(x2))`` without overflow."""
    if _eager(x1, x2):
        return np.logaddexp(x1, x2)
    a, b = _f(x1, x2), _f(x2, x1)
    m = maximum(a, b)
    d = abs(subtract(a, b))
    out = add(m, _log1p(exp(negative(where(isnan(d), 0.0, d)))))
    return where(equal(a, b), add(a, _LN2), where(isnan(d), add(a, b), out))


def logaddexp2(x1: Any, x2: Any) -> Any:
    """Elementwise ``log2(2**x1 + 2**x2)``."""
    if _eager(x1, x2):
        return np.logaddexp2(x1, x2)
    return divide(logaddexp(multiply(_f(x1, x2), _LN2), multiply(_f(x2, x1), _LN2)), _LN2)


def heaviside(x1: Any, x2: Any) -> Any:
    """Elementwise step: 0 below zero, ``x2`` at zero, 1 above (NaN stays NaN)."""
    if _eager(x1, x2):
        return np.heaviside(x1, x2)
    x = _f(x1, x2)
    h = where(less(x, 0), 0.0, where(greater(x, 0), 1.0, x2))
    return where(isnan(x), x, h)


def logical_xor(x1: Any, x2: Any) -> Any:
    """Elementwise exclusive or of the truth values."""
    if _eager(x1, x2):
        return np.logical_xor(x1, x2)
    return not_equal(logical_not(logical_not(x1)), logical_not(logical_not(x2)))


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (numpy's test; infinities equal only to
    themselves, NaN equal to NaN only with ``equal_nan``)."""
    if _eager(a, b):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    fa, fb = _f(a, b), _f(b, a)
    finite = logical_and(isfinite(fa), isfinite(fb))
    close = logical_not(greater(abs(subtract(fa, fb)), add(atol, multiply(rtol, abs(fb)))))
    out = where(finite, close, equal(fa, fb))
    return logical_or(out, logical_and(isnan(fa), isnan(fb))) if equal_nan else out


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """``x`` with NaN → ``nan``, +inf → ``posinf``, -inf → ``neginf`` (default: the
    dtype's largest finite magnitudes, as numpy's)."""
    if _eager(x):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if not x.accy_dtype.is_float:
        return x
    big = float(np.finfo(x.dtype).max)
    x = where(isnan(x), nan, x)
    x = where(equal(x, np.inf), big if posinf is None else posinf, x)
    return where(equal(x, -np.inf), -big if neginf is None else neginf, x)
