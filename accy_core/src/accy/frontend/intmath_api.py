"""Integer-style and angle math for ``accy.numpy``, composed from existing IR ops:
``floor``, ``ceil``, ``trunc``, ``floor_divide``, ``mod``/``remainder``, ``fmod``,
``left_shift``, ``right_shift``, ``power``, ``arctan``, ``arctan2``.

``floor`` converts through an integer and corrects by one (values past 2**23 (f32) or
2**52 (f64) are already integral, NaN and inf pass through). ``floor_divide`` and ``mod``
follow numpy: the quotient rounds toward minus infinity, the remainder has the divisor's
sign, integer division by zero gives 0; on floats they are numpy's ``npy_divmod`` on the
exact remainder ``arith.rem`` (C's ``fmod``): numpy's bits on the CPU and OpenCL (lavapipe's
``OpFRem`` is ``a - b * trunc(a / b)``, so on Vulkan a remainder can be some ulps off, and
a quotient one off where ``a / b`` rounds onto an integer). Shifts on integers compose
multiplications and floor divisions by powers of two (a count outside [0, bits) is
undefined, as in C).
``power`` of integers stays an integer, exact and wrapping as numpy's, by binary
exponentiation (Knuth, *TAOCP* vol. 2, 4.6.3): a static exponent unrolls into its squarings
and multiplications, a traced one selects per bit; a negative exponent is numpy's error when
static, and the integer part of the real power when traced (0, or 1 / -1 for 1 / -1).
``arctan`` is Cephes' rational approximation (to about 1e-16 relative in f64), ``arctan2``
adds numpy's quadrant and signed-zero rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.numpy_api import (
    abs,
    add,
    astype,
    common,
    divide,
    equal,
    greater,
    less,
    logical_and,
    logical_or,
    multiply,
    negative,
    not_equal,
    subtract,
    trace_of,
    where,
)
from accy.frontend.shape_api import full_like
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType

__all__ = ["arctan", "arctan2", "ceil", "divmod", "floor", "floor_divide", "fmod", "left_shift",
           "mod", "power", "remainder", "right_shift", "trunc"]


def _float_of(x: Any) -> Any:
    return x if np.dtype(x.dtype).kind == "f" else astype(x, np.float32)


def trunc(x: Any) -> Any:
    """Elementwise rounding toward zero (floats; integers are returned as they are)."""
    if trace_of(x) is None:
        return np.trunc(x)
    if np.dtype(x.dtype).kind != "f":
        return x
    big = 2.0 ** (23 if x.dtype == np.float32 else 52)
    t = astype(astype(x, np.int32 if x.dtype == np.float32 else np.int64), x.dtype)
    return where(less(abs(x), big), t, x)


def floor(x: Any) -> Any:
    """Elementwise largest integer <= ``x`` (floats; integers unchanged)."""
    if trace_of(x) is None:
        return np.floor(x)
    t = trunc(x)
    return t if np.dtype(x.dtype).kind != "f" else subtract(t, astype(greater(t, x), x.dtype))


def ceil(x: Any) -> Any:
    """Elementwise smallest integer >= ``x``."""
    if trace_of(x) is None:
        return np.ceil(x)
    return negative(floor(negative(x)))


def floor_divide(x1: Any, x2: Any) -> Any:
    """Elementwise ``x1 // x2``: the quotient rounded toward minus infinity (numpy's)."""
    tr = trace_of(x1, x2)
    if tr is None:
        return np.floor_divide(x1, x2)
    dt = common(x1, x2)
    if dt.is_float:
        return _float_divmod(x1, x2, dt)[0]
    _no_bool(dt, "//")
    q = divide_int(x1, x2)
    if dt.is_unsigned:
        return q  # truncation is the floor; x // 0 is already 0
    r = subtract(x1, multiply(q, x2))
    # a Python scalar divisor's sign is known here (as a weak operand it could overflow i32)
    neg2 = bool(x2 < 0) if not hasattr(x2, "dtype") and np.ndim(x2) == 0 else less(x2, 0)
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), neg2))
    return where(equal(x2, 0), 0, subtract(q, astype(fix, q.dtype)))


def _rem(x1: Any, x2: Any, dt: DType) -> Any:
    """C's ``fmod`` of floats (``arith.rem``): exact, with the sign of ``x1``."""
    from accy.frontend.numpy_api import broadcast_shape, shape_of, value_of, wrap

    tr = trace_of(x1, x2)
    shape = broadcast_shape("a % b", shape_of(x1), shape_of(x2))
    a, b = (tr.fb.broadcast_to(value_of(tr, v, dt), shape) for v in (x1, x2))
    return wrap(tr, tr.fb.rem(a, b))


def _float_divmod(x1: Any, x2: Any, dt: DType) -> tuple[Any, Any]:
    """``(x1 // x2, x1 % x2)`` of floats as numpy computes them (``npy_divmod``): the
    remainder from the exact ``fmod``, moved to the divisor's sign, and the quotient
    ``(x1 - fmod) / x2`` rounded to the nearest integer; ``floor(x1 / x2)`` was one off
    where ``x1 / x2`` rounds onto an integer (``-4.5 // 0.3``, ``7.0 % 0.1``, ``1e17 % 3``).
    A zero divisor gives ``x1 / x2`` and NaN, as numpy's."""
    a = astype(x1, dt.numpy) if isinstance(x1, Tracer) else np.asarray(x1, dt.numpy)
    b = astype(x2, dt.numpy) if isinstance(x2, Tracer) else np.asarray(x2, dt.numpy)
    m = _rem(a, b, dt)
    div = divide(subtract(a, m), b)
    fix = logical_and(not_equal(m, 0), not_equal(less(b, 0), less(m, 0)))
    zero_b = where(_negative_signed(b), -0.0, 0.0)
    m = where(fix, add(m, b), where(equal(m, 0), zero_b, m))
    div = where(fix, subtract(div, 1.0), div)
    fl = floor(div)
    fl = where(greater(subtract(div, fl), 0.5), add(fl, 1.0), fl)
    q = divide(a, b)
    fl = where(equal(div, 0), where(_negative_signed(q), -0.0, 0.0), fl)
    return where(equal(b, 0), q, fl), where(equal(b, 0), np.nan, m)


def divide_int(x1: Any, x2: Any) -> Any:
    """Integer division rounding toward zero (``arith.div`` on integers; x / 0 gives 0)."""
    from accy.frontend.numpy_api import value_of, wrap

    tr = trace_of(x1, x2)
    dt = common(x1, x2)
    from accy.frontend.numpy_api import broadcast_shape, shape_of

    shape = broadcast_shape("a // b", shape_of(x1), shape_of(x2))
    a, b = (tr.fb.broadcast_to(value_of(tr, v, dt), shape) for v in (x1, x2))
    return wrap(tr, tr.fb.div(a, b))


def _no_bool(dt: DType, sym: str) -> None:
    if dt == DType.BOOL:
        raise UnsupportedError(f"'{sym}' at {user_location()} on bool arrays is not "
                               "supported; cast with .astype(anp.int32) first", feature=sym)


def mod(x1: Any, x2: Any) -> Any:
    """Elementwise remainder with the sign of ``x2`` (numpy's ``%``); x % 0 is 0 for
    integers and NaN for floats."""
    tr = trace_of(x1, x2)
    if tr is None:
        return np.mod(x1, x2)
    dt = common(x1, x2)
    if dt.is_float:
        return _float_divmod(x1, x2, dt)[1]
    _no_bool(dt, "%")
    return where(equal(x2, 0), 0, subtract(x1, multiply(floor_divide(x1, x2), x2)))


remainder = mod


def divmod(x1: Any, x2: Any) -> tuple[Any, Any]:  # noqa: A001 - numpy's name
    """numpy's ``divmod`` (and Python's ``divmod(t, y)``): ``(x1 // x2, x1 % x2)``."""
    if trace_of(x1, x2) is None:
        return np.divmod(x1, x2)
    return floor_divide(x1, x2), mod(x1, x2)


def fmod(x1: Any, x2: Any) -> Any:
    """Elementwise C remainder (the sign of ``x1``)."""
    tr = trace_of(x1, x2)
    if tr is None:
        return np.fmod(x1, x2)
    dt = common(x1, x2)
    if dt.is_float:
        return _rem(x1, x2, dt)
    return where(equal(x2, 0), 0, subtract(x1, multiply(divide_int(x1, x2), x2)))


def _shift(x1: Any, x2: Any, left: bool) -> Any:
    dt = common(x1, x2)
    if not dt.is_int:
        raise UnsupportedError(f"shift at {user_location()} needs integer operands, got {dt}",
                               feature="shift")
    x = astype(x1, dt.numpy) if hasattr(x1, "dtype") else x1
    n = x2
    # numpy's answer for a count outside 0 .. bits-1 (negative too): 0, or -1 for a negative
    # x shifted right (npy_lshift / npy_rshift); the loop below sees only the low bits
    fill = where(less(x, 0), -1, 0) if not left and not dt.is_unsigned else 0
    if isinstance(n, (int, np.integer)) and not isinstance(n, Tracer) and \
            not 0 <= int(n) < dt.bits:
        return where(True, fill, x)  # x's shape and dtype
    for k in range(dt.bits.bit_length() - 1):  # shift counts 0 .. bits-1, bit by bit
        p = 1 << (1 << k)
        bit = not_equal(_bitand(n, 1 << k), 0)
        x = where(bit, multiply(x, p) if left else floor_divide(x, p), x)
    if isinstance(n, (int, np.integer)) and not isinstance(n, Tracer):
        return x
    return where(logical_or(less(n, 0), greater(n, dt.bits - 1)), fill, x)


def _bitand(n: Any, m: int) -> Any:
    from accy.frontend.numpy_api import bitwise_and

    return bitwise_and(n, m)


def left_shift(x1: Any, x2: Any) -> Any:
    """Elementwise ``x1 << x2`` on integers (wraps like C)."""
    if trace_of(x1, x2) is None:
        return np.left_shift(x1, x2)
    return _shift(x1, x2, True)


def right_shift(x1: Any, x2: Any) -> Any:
    """Elementwise ``x1 >> x2`` on integers (arithmetic for signed ones)."""
    if trace_of(x1, x2) is None:
        return np.right_shift(x1, x2)
    return _shift(x1, x2, False)


_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
      -1.228866684490136173410e2, -6.485021904942025371773e1)
_Q = (2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
      4.853903996359136964868e2, 1.945506571482613964425e2)


def _poly(z: Any, coeffs: tuple[float, ...], monic: bool) -> Any:
    if monic:  # z**n + c0 z**(n-1) + ... (Cephes p1evl)
        acc, rest = add(z, coeffs[0]), coeffs[1:]
    else:  # c0 z**(n-1) + ... (Cephes polevl)
        acc, rest = add(multiply(z, coeffs[0]), coeffs[1]), coeffs[2:]
    for c in rest:
        acc = add(multiply(acc, z), c)
    return acc


def arctan(x: Any) -> Any:
    """Elementwise inverse tangent in radians (integers give f32)."""
    if trace_of(x) is None:
        return np.arctan(x)
    x = _float_of(x)
    ax = abs(x)
    big = greater(ax, 2.41421356237309504880)
    mid = logical_and(greater(ax, 0.66), ~big)
    safe = where(equal(ax, 0), 1.0, ax)
    r = where(big, divide(-1.0, safe), where(mid, divide(subtract(ax, 1.0), add(ax, 1.0)), ax))
    base = where(big, np.pi / 2, where(mid, np.pi / 4, full_like(ax, 0.0)))  # in x's dtype
    z = multiply(r, r)
    p = multiply(z, divide(_poly(z, _P, False), _poly(z, _Q, True)))
    y = add(base, add(multiply(r, p), r))
    y = where(equal(ax, np.inf), np.pi / 2, y)
    return where(less(x, 0), negative(y), y)


def _negative_signed(v: Any) -> Any:
    """``v < 0``, counting -0.0 as negative (``1 / -0.0`` is ``-inf``)."""
    return logical_or(less(v, 0), logical_and(equal(v, 0), less(divide(1.0, v), 0)))


def arctan2(x1: Any, x2: Any) -> Any:
    """Elementwise angle of the point ``(x2, x1)`` in radians, in ``[-pi, pi]``, with
    numpy's rules for zeros (signed), infinities and NaN."""
    tr = trace_of(x1, x2)
    if tr is None:
        return np.arctan2(x1, x2)
    dt = common(x1, x2)
    dt = dt if dt.is_float else DType.F32
    y, x = astype(x1, dt.numpy), astype(x2, dt.numpy)
    ay, ax = abs(y), abs(x)
    both_inf = logical_and(equal(ay, np.inf), equal(ax, np.inf))
    both_zero = logical_and(equal(ay, 0), equal(ax, 0))
    ratio = where(both_inf, 1.0, where(both_zero, 0.0, divide(ay, where(both_zero, 1.0, ax))))
    a = arctan(ratio)
    a = where(_negative_signed(x), subtract(np.pi, a), a)
    return where(_negative_signed(y), negative(a), a)


def power(x1: Any, x2: Any) -> Any:
    """Elementwise ``x1 ** x2`` with numpy broadcasting. Floats as ``arith.pow``; two
    integer operands give an integer (see the module docstring), where the float power
    would round (``5 ** 3`` is 124.99998 in f32 on some devices).

    Raises:
        VerifyError: an integer array to a static negative integer power (numpy's
            ``ValueError``).
    """
    from accy.frontend.numpy_api import binary_op

    tr = trace_of(x1, x2)
    if tr is None:
        return np.power(x1, x2)
    dt = common(x1, x2)
    if not dt.is_int:
        return binary_op("power", "**", x1, x2)
    # a host base is held in the result dtype, so its squarings wrap as numpy's do
    base = astype(x1, dt.numpy) if isinstance(x1, Tracer) else np.asarray(x1, dt.numpy)
    if not hasattr(x2, "dtype") or (np.ndim(x2) == 0 and not isinstance(x2, Tracer)):
        e = int(x2)
        if e < 0:
            raise VerifyError(f"'**' at {user_location()}: integers to negative integer "
                              "powers are not allowed (numpy refuses them too); use a float "
                              "base: x.astype(anp.float32) ** -2")
        out = None
        while e:
            if e & 1:
                out = base if out is None else multiply(out, base)
            e >>= 1
            if e:
                base = multiply(base, base)
        return out if out is not None else add(multiply(base, 0), 1)
    e = astype(x2, dt.numpy)
    out = add(multiply(e, 0), add(multiply(base, 0), 1))  # ones of the broadcast shape
    for k in range(dt.bits - (0 if dt.is_unsigned else 1)):
        bit = not_equal(_bitand(e, 1 << k), 0)
        out = where(bit, multiply(out, base), out)
        base = multiply(base, base)
    if dt.is_unsigned:
        return out
    odd = not_equal(_bitand(e, 1), 0)
    tiny = where(equal(x1, 1), 1, where(equal(x1, -1), where(odd, -1, 1), 0))
    return where(less(e, 0), astype(tiny, dt.numpy), out)
