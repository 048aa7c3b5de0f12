"""complex64 / complex128 under ``accy.jit``: a complex array is a pair of float arrays.

A :class:`ComplexTracer` holds two traced float arrays of one dtype and shape, the real
and imaginary parts (f32 for complex64, f64 for complex128). Every complex operation is
written with real ones, so the tensor IR, the kernel IR and every backend's code generator
see only floats (one shared lowering; ``f.lower(z)`` shows the pairs). A backend without
f64 refuses complex128 at compile time with the ``CapabilityError`` of the ``f64``
feature. At the boundary (:mod:`accy.frontend.tree`) a complex numpy argument is split
into its two parts, and a complex result is put back together.

Supported: ``+ - * /`` (division: Smith's algorithm, as numpy), unary ``-``, ``abs``
(scaled hypot: ``inf`` when either part is infinite, even with a NaN), ``angle``
(``arctan2(imag, real)``), ``conj``, ``real``, ``imag``, ``exp``, ``==``/``!=``, ``sum``,
``mean``, ``prod`` (pairwise), ``matmul``/``dot``/``@`` (four real products through
``dot_general``), ``astype`` (to complex: the parts cast; to a real dtype: the real part,
as numpy does with a ComplexWarning), basic indexing, ``reshape``, ``.T``. Anything else
raises :class:`~accy.errors.UnsupportedError` naming the user's line; ``x[idx] = v`` into a
complex array is refused (build a new array).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from accy.errors import InputError, UnsupportedError
from accy.frontend import linalg_api, numpy_api, shape_api
from accy.frontend.intmath_api import arctan2
from accy.frontend.modulus_compare import record_modulus
from accy.frontend.numpy_api import value_of, wrap
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["ComplexTracer", "FUNCTIONS", "aware", "is_complex", "make_complex"]


def _refuse(what: str, fix: str = "split into real and imaginary parts with .real/.imag"
            ) -> UnsupportedError:
    return UnsupportedError(f"{what} on a complex array at {user_location()} is not "
                            f"supported; {fix}", feature=f"complex: {what}", alternative=fix)


def is_complex(x: Any) -> bool:
    """A complex traced array, a complex Python number or a complex numpy array/scalar."""
    if isinstance(x, ComplexTracer):
        return True
    if isinstance(x, complex):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "c"


def _float_of(cdt: Any) -> type:
    if np.dtype(cdt) not in (np.complex64, np.complex128):
        raise InputError(f"{np.dtype(cdt)} is not supported (only complex64 and complex128): "
                         "cast with .astype(np.complex128)")
    return np.float32 if np.dtype(cdt) == np.complex64 else np.float64


def _parts(x: Any) -> tuple[Any, Any]:
    """``(real, imag)`` of an operand: traced parts, host arrays or Python numbers."""
    if isinstance(x, ComplexTracer):
        return x.re, x.im
    if isinstance(x, complex):
        return x.real, x.imag
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "c":
        f = _float_of(x.dtype)
        return np.ascontiguousarray(x.real, f), np.ascontiguousarray(x.imag, f)
    return x, 0.0


class ComplexTracer:
    """A traced complex array: ``re`` and ``im`` are traced float arrays (same dtype, shape).

    Attributes:
        re: the real part (f32 for complex64, f64 for complex128).
        im: the imaginary part.
    """

    __slots__ = ("re", "im")
    __array_priority__ = 2000  # above Tracer's: numpy and Tracer defer to us

    def __init__(self, re: Any, im: Any) -> None:
        if not isinstance(re, Tracer):
            re = numpy_api.add(im * 0, re)
        if not isinstance(im, Tracer):
            im = numpy_api.add(re * 0, im)
        if re.shape != im.shape:
            shape = numpy_api.broadcast_shape("complex parts", re.shape, im.shape)
            re, im = shape_api.broadcast_to(re, shape), shape_api.broadcast_to(im, shape)
        if not re.accy_dtype.is_float:
            re = numpy_api.astype(re, np.float32)
        if im.accy_dtype != re.accy_dtype:
            im = numpy_api.astype(im, re.dtype)
        self.re, self.im = re, im

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return self.re.shape

    @property
    def ndim(self) -> int:
        return self.re.ndim

    @property
    def size(self) -> int:
        return self.re.size

    @property
    def dtype(self) -> np.dtype:
        """``complex64`` (f32 parts) or ``complex128`` (f64 parts)."""
        return np.dtype(np.complex64 if self.re.dtype == np.float32 else np.complex128)

    @property
    def real(self) -> Tracer:
        return self.re

    @property
    def imag(self) -> Tracer:
        return self.im

    @property
    def T(self) -> ComplexTracer:  # noqa: N802 - numpy's name
        return ComplexTracer(self.re.T, self.im.T)

    def __repr__(self) -> str:
        return f"ComplexTracer<{self.dtype}{list(self.shape)}>"

    def __len__(self) -> int:
        return len(self.re)

    # ------------------------------------------------------------ methods
    def conj(self) -> ComplexTracer:
        return ComplexTracer(self.re, numpy_api.negative(self.im))

    conjugate = conj

    def astype(self, dtype: Any) -> Any:
        return astype(self, dtype)

    def sum(self, axis: Any = None, keepdims: bool = False) -> ComplexTracer:
        return sum(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> ComplexTracer:
        return mean(self, axis, keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False) -> ComplexTracer:
        return prod(self, axis, keepdims)

    def reshape(self, *shape: Any) -> ComplexTracer:
        s = shape[0] if len(shape) == 1 else shape
        return ComplexTracer(shape_api.reshape(self.re, s), shape_api.reshape(self.im, s))

    def dot(self, other: Any) -> ComplexTracer:
        return matmul(self, other)

    def __getitem__(self, index: Any) -> ComplexTracer:
        return ComplexTracer(self.re[index], self.im[index])

    def __setitem__(self, index: Any, value: Any) -> None:
        raise _refuse("x[idx] = v", "build a new array: make_complex(re, im) from updated "
                      "parts (z.real and z.imag are float arrays you can write into)")

    def __bool__(self) -> bool:
        raise _refuse("bool()", "compare the parts (z.real, z.imag) or use a mask")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise _refuse("conversion to a numpy array", "return it from the jitted function")

    def __getattr__(self, name: str) -> Any:
        raise _refuse(f".{name}")

    # ------------------------------------------------------------ numpy protocol
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = FUNCTIONS.get(ufunc.__name__)
        if method != "__call__" or fn is None or kwargs:
            raise _refuse(f"numpy.{ufunc.__name__}")
        return fn(*inputs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        fn = FUNCTIONS.get(func.__name__)
        if fn is None:
            raise _refuse(f"numpy.{func.__name__}")
        return fn(*args, **kwargs)


# ---------------------------------------------------------------- elementwise
def make_complex(re: Any, im: Any) -> Any:
    """``re + 1j * im`` from two traced float arrays (broadcast, promoted to one dtype);
    on host data (outside a trace) numpy's complex array."""
    if numpy_api.trace_of(re, im) is None:
        re, im = np.asarray(re), np.asarray(im)
        return (re + 1j * im).astype(np.result_type(re.dtype, im.dtype, np.complex64))
    return ComplexTracer(re, im)


def add(a: Any, b: Any) -> Any:
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    return ComplexTracer(numpy_api.add(ar, br), numpy_api.add(ai, bi))


def subtract(a: Any, b: Any) -> Any:
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    return ComplexTracer(numpy_api.subtract(ar, br), numpy_api.subtract(ai, bi))


def multiply(a: Any, b: Any) -> Any:
    # a real operand is a complex one with imaginary part 0, as numpy converts it: the cross
    # terms are kept, so inf * 0 gives numpy's NaN parts
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    m = numpy_api.multiply
    return ComplexTracer(numpy_api.subtract(m(ar, br), m(ai, bi)),
                         numpy_api.add(m(ar, bi), m(ai, br)))


def divide(a: Any, b: Any) -> Any:
    """``a / b`` by Smith's algorithm exactly as numpy's complex divide loop computes it
    (``scl = 1 / (br + bi * rat)`` multiplied in, so the same bits; a zero divisor gives
    ``a.real / 0`` and ``a.imag / 0``: inf or NaN parts, as numpy's)."""
    (ar, ai), (br, bi) = _parts(a), _parts(b)  # a real divisor too: numpy's special values
    n, m, s, d, w = (numpy_api.add, numpy_api.multiply, numpy_api.subtract, numpy_api.divide,
                     numpy_api.where)
    abr, abi = numpy_api.abs(br), numpy_api.abs(bi)
    big = numpy_api.greater_equal(abr, abi)
    r1 = d(bi, br)
    scl1 = d(1.0, n(br, m(bi, r1)))
    re1, im1 = m(n(ar, m(ai, r1)), scl1), m(s(ai, m(ar, r1)), scl1)
    r2 = d(br, bi)
    scl2 = d(1.0, n(bi, m(br, r2)))
    re2, im2 = m(n(m(ar, r2), ai), scl2), m(s(m(ai, r2), ar), scl2)
    zero = numpy_api.logical_and(numpy_api.equal(abr, 0), numpy_api.equal(abi, 0))
    re1, im1 = w(zero, d(ar, abr), re1), w(zero, d(ai, abr), im1)
    return ComplexTracer(w(big, re1, re2), w(big, im1, im2))


def negative(z: Any) -> Any:
    r, i = _parts(z)
    return ComplexTracer(numpy_api.negative(r), numpy_api.negative(i))


def equal(a: Any, b: Any) -> Any:
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    return numpy_api.logical_and(numpy_api.equal(ar, br), numpy_api.equal(ai, bi))


def not_equal(a: Any, b: Any) -> Any:
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    return numpy_api.logical_or(numpy_api.not_equal(ar, br), numpy_api.not_equal(ai, bi))


def absolute(z: Any) -> Any:
    """``|z|`` as a scaled hypot: ``m * sqrt(1 + (n/m)**2)`` with ``m``, ``n`` the larger
    and smaller of ``|re|``, ``|im|``; ``inf`` when a part is infinite (C99 ``cabs``),
    NaN when a part is NaN and none is infinite."""
    r, i = _parts(z)
    ar, ai = numpy_api.abs(r), numpy_api.abs(i)
    big, small = numpy_api.maximum(ar, ai), numpy_api.minimum(ar, ai)
    q = numpy_api.divide(small, numpy_api.where(numpy_api.equal(big, 0), 1, big))
    h = numpy_api.multiply(big, numpy_api.sqrt(numpy_api.add(1, numpy_api.multiply(q, q))))
    inf = numpy_api.logical_or(numpy_api.equal(ar, np.inf), numpy_api.equal(ai, np.inf))
    out = numpy_api.where(inf, np.inf, h)
    if isinstance(out, Tracer) and isinstance(r, Tracer) and isinstance(i, Tracer):
        record_modulus(out, r, i)  # abs(z) <= radius compares |z|^2 instead
    return out


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z`` in radians (degrees with ``deg=True``): ``arctan2(im, re)``."""
    r, i = _parts(z)
    if not isinstance(r, Tracer):
        return np.angle(z, deg=deg)
    if not isinstance(i, Tracer):  # a real array: 0 or pi
        i = numpy_api.multiply(r, 0.0) if r.accy_dtype.is_float else numpy_api.astype(
            numpy_api.multiply(r, 0), np.float32)
        r = r if r.accy_dtype.is_float else numpy_api.astype(r, np.float32)
    a = arctan2(i, r)
    return numpy_api.multiply(a, 180.0 / np.pi) if deg else a


def conj(z: Any) -> Any:
    return z.conj() if isinstance(z, ComplexTracer) else z


def real(z: Any) -> Any:
    return _parts(z)[0]


def imag(z: Any) -> Any:
    r, i = _parts(z)
    return shape_api.zeros_like(r) if isinstance(r, Tracer) and not isinstance(i, Tracer) else i


def exp(z: Any) -> Any:
    """``exp(re) * (cos(im) + 1j sin(im))``; an imaginary part of 0 stays exactly 0."""
    r, i = _parts(z)
    e = numpy_api.exp(r)
    im = numpy_api.where(numpy_api.equal(i, 0), i, numpy_api.multiply(e, numpy_api.sin(i)))
    return ComplexTracer(numpy_api.multiply(e, numpy_api.cos(i)), im)


# ---------------------------------------------------------------- reductions, products
def sum(a: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:  # noqa: A001
    if dtype is not None:
        a = astype(a, dtype)
    return ComplexTracer(numpy_api.sum(a.re, axis, keepdims), numpy_api.sum(a.im, axis,
                                                                             keepdims))


def mean(a: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    if dtype is not None:
        a = astype(a, dtype)
    return ComplexTracer(numpy_api.mean(a.re, axis, keepdims), numpy_api.mean(a.im, axis,
                                                                               keepdims))


def prod(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Product over ``axis`` by pairwise multiplication (log2(n) products); a real array
    gives a real product."""
    if not isinstance(a, ComplexTracer):
        return prod(ComplexTracer(a, 0.0), axis, keepdims).re  # the zero parts fold away
    z = a
    if axis is None:
        out = _prod_axis(z.reshape(-1) if z.ndim != 1 else z, 0)
        return out.reshape((1,) * z.ndim) if keepdims else out.reshape(())
    axes = sorted({int(x) % z.ndim for x in (axis if isinstance(axis, (tuple, list))
                                               else (axis,))}, reverse=True)
    for ax in axes:
        z = _prod_axis(z, ax)  # keeps the axis with extent 1
    if not keepdims:
        shape = tuple(n for k, n in enumerate(z.shape) if k not in axes)
        z = z.reshape(shape)
    return z


def _prod_axis(z: ComplexTracer, ax: int) -> ComplexTracer:
    n = z.shape[ax]
    if n == 0:  # the empty product is 1
        shape = list(z.shape)
        shape[ax] = 1
        tr = z.re.trace
        return ComplexTracer(wrap(tr, value_of(tr, np.ones(shape, z.re.dtype))), 0.0)
    while n > 1:
        half = n // 2
        lo = z[_take(z.ndim, ax, slice(0, half))]
        hi = z[_take(z.ndim, ax, slice(half, 2 * half))]
        p = multiply(lo, hi)
        if n % 2:
            from accy.frontend.join_api import concatenate

            last = z[_take(z.ndim, ax, slice(n - 1, n))]
            p = ComplexTracer(concatenate([p.re, last.re], axis=ax),
                              concatenate([p.im, last.im], axis=ax))
        z, n = p, half + n % 2
    return z


def _take(rank: int, ax: int, s: slice) -> tuple:
    return tuple(s if k == ax else slice(None) for k in range(rank))


def matmul(a: Any, b: Any) -> Any:
    """``a @ b``: ``(ar@br - ai@bi) + 1j (ar@bi + ai@br)``; a real operand skips the
    products with its zero imaginary part (so ``inf * 0`` terms numpy would add are absent)."""
    (ar, ai), (br, bi) = _parts(a), _parts(b)
    mm = linalg_api.matmul
    real_a, real_b = isinstance(ai, float), isinstance(bi, float)
    if real_b:
        return ComplexTracer(mm(ar, br), mm(ai, br))
    if real_a:
        return ComplexTracer(mm(ar, br), mm(ar, bi))
    return ComplexTracer(numpy_api.subtract(mm(ar, br), mm(ai, bi)),
                         numpy_api.add(mm(ar, bi), mm(ai, br)))


def astype(x: Any, dtype: Any) -> Any:
    """To complex64/complex128: the parts cast; from complex to a real dtype: the real part
    cast (numpy's result, which it accompanies with a ComplexWarning)."""
    target = np.dtype(dtype)
    r, i = _parts(x)
    if target.kind == "c":
        f = _float_of(target)
        return ComplexTracer(numpy_api.astype(r, f), numpy_api.astype(
            i if isinstance(i, Tracer) else shape_api.zeros_like(r, dtype=f), f))
    return numpy_api.astype(r, target)


#: numpy names → their complex versions (used where an operand is complex)
FUNCTIONS: dict[str, Any] = {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
    "true_divide": divide, "negative": negative, "equal": equal, "not_equal": not_equal,
    "absolute": absolute, "abs": absolute, "angle": angle, "conj": conj,
    "conjugate": conj, "real": real, "imag": imag, "exp": exp, "sum": sum, "mean": mean,
    "prod": prod, "matmul": matmul, "dot": matmul, "astype": astype,
}


def aware(name: str, real_fn: Any) -> Any:
    """``real_fn`` (an ``accy.numpy`` function) that hands complex operands to
    :data:`FUNCTIONS` ``[name]``; ``astype`` also goes there for a complex target dtype."""
    complex_fn = FUNCTIONS[name]

    def fn(*args: Any, **kwargs: Any) -> Any:
        flat = [b for a in args for b in (a if isinstance(a, (list, tuple)) else (a,))]
        tr = any(isinstance(a, (Tracer, ComplexTracer)) for a in flat)
        to_complex = name == "astype" and len(args) > 1 and np.dtype(args[1]).kind == "c"
        if tr and (to_complex or any(is_complex(a) for a in flat)):
            return complex_fn(*args, **kwargs)
        if not tr and (to_complex or any(is_complex(a) for a in flat)):  # host data: numpy
            if name == "astype":
                return np.asarray(args[0]).astype(args[1])
            return getattr(np, name)(*args, **kwargs)
        if real_fn is None:
            return complex_fn(*args, **kwargs) if tr else getattr(np, name)(*args, **kwargs)
        return real_fn(*args, **kwargs)

    if real_fn is not None:
        functools.update_wrapper(fn, real_fn)  # name, signature (__wrapped__), attributes
    else:
        functools.update_wrapper(fn, complex_fn)
    fn.__doc__ = (fn.__doc__ or "") + (
        "\n\nComplex operands: see :mod:`accy.frontend.complex_api`.")
    return fn


def _inplace(op: str) -> Any:
    raise _refuse(f"in-place __i{op}__", "write z = z op v (a new array); writes into "
                  "complex arrays are not supported")


def _install() -> None:
    ops = {"add": add, "sub": subtract, "mul": multiply, "truediv": divide,
           "matmul": matmul, "eq": equal, "ne": not_equal}
    for dunder, fn in ops.items():
        setattr(ComplexTracer, f"__{dunder}__", lambda s, o, _f=fn: _f(s, o))
        setattr(ComplexTracer, f"__r{dunder}__", lambda s, o, _f=fn: _f(o, s))
        # z += v writes into z in numpy (and into the caller's array): refused, not rebound
        setattr(ComplexTracer, f"__i{dunder}__", lambda s, o, _d=dunder: _inplace(_d))
    ComplexTracer.__neg__ = negative  # type: ignore[assignment]
    ComplexTracer.__pos__ = lambda self: self  # type: ignore[assignment]
    ComplexTracer.__abs__ = absolute  # type: ignore[assignment]
    ComplexTracer.__hash__ = None  # type: ignore[assignment]


_install()
