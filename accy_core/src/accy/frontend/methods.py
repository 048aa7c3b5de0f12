"""What makes a :class:`~accy.frontend.tracer.Tracer` behave like a numpy array.

Installed on the class when this module is imported (by :mod:`accy.frontend`): the
operators (``+ - * / // % ** @ & | ^ << >> ~``, comparisons, in-place ``+=`` ...),
indexing and ``x[idx] = v``, ``.at``, the numpy protocol (``np.exp(t)``,
``np.sum(t, axis=0)``, ``np.add.outer(t, u)`` dispatch to :mod:`accy.numpy`), and the
ndarray methods that mirror ``accy.numpy`` functions (``.sum()``, ``.var()``, ``.argmax()``,
``.cumsum()``, ``.dot()``, ``.copy()``, ...). An ndarray method accy lacks raises
:class:`~accy.frontend.errors.UnsupportedFunctionError` (an ``AttributeError``) naming the
user's line and an alternative.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

from accy.frontend import (
    array_more_api,
    complex_api,
    complex_struct,  # noqa: F401 - adds the part-wise complex functions to complex_api
    grid_api,
    indexing,
    intmath_api,
    join_api,
    linalg_api,
    linalg_namespace,
    math_more_api,
    matrix_api,
    numpy_api,
    ordering,
    pad_api,
    predicates_api,
    rearrange_api,
    scan_api,
    setitem,
    shape_api,
    stats_api,
    ufunc_out,
)
from accy.frontend.errors import UnsupportedFunctionError
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["NAMES", "UFUNC_OUTER", "call_checked"]

_GROUPS = (numpy_api, shape_api, linalg_api, indexing, ordering, grid_api, join_api, scan_api,
           intmath_api, pad_api, matrix_api, predicates_api, math_more_api, stats_api,
           array_more_api, rearrange_api)
NAMES: dict[str, Any] = {n: getattr(m, n) for m in _GROUPS for n in m.__all__}
NAMES["norm"] = linalg_namespace.linalg.norm  # numpy.linalg.norm's __name__
_ACCUMULATE = ("add", "multiply", "maximum", "minimum")
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
UFUNC_OUTER = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
               "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")

_METHOD_HINTS = {
    "nonzero": "a boolean mask with anp.where (the count of nonzeros is data-dependent)",
    "item": "return the array from the jitted function and read it outside",
    "tolist": "return the array from the jitted function and read it outside",
}


def _outer(fn: Any) -> Any:
    def outer(a: Any, b: Any) -> Any:
        sa = a.shape if isinstance(a, Tracer) else shape_api.np.shape(a)
        sb = b.shape if isinstance(b, Tracer) else shape_api.np.shape(b)
        return fn(shape_api.reshape(a, tuple(sa) + (1,) * len(sb)), b)

    outer.__name__ = f"{fn.__name__}.outer"
    outer.__doc__ = f"``numpy.{fn.__name__}.outer``: shape ``a.shape + b.shape``."
    return outer


for _n in complex_api.FUNCTIONS:  # complex operands go to complex_api (pairs of floats)
    NAMES[_n] = complex_api.aware(_n, NAMES.get(_n))
for _n in UFUNC_OUTER:
    NAMES[_n].outer = _outer(NAMES[_n])


# ---------------------------------------------------------------- operators
def _binary(fname: str) -> Any:
    special = {"matmul": linalg_api.matmul, "floor_divide": intmath_api.floor_divide,
               "remainder": intmath_api.mod, "left_shift": intmath_api.left_shift,
               "right_shift": intmath_api.right_shift, "power": intmath_api.power}
    return special.get(fname)


_OPS = {
    "add": ("add", "+"), "sub": ("subtract", "-"), "mul": ("multiply", "*"),
    "truediv": ("divide", "/"), "pow": ("power", "**"), "matmul": ("matmul", "@"),
    "and": ("bitwise_and", "&"), "or": ("bitwise_or", "|"), "xor": ("bitwise_xor", "^"),
    "floordiv": ("floor_divide", "//"), "mod": ("remainder", "%"),
    "lshift": ("left_shift", "<<"), "rshift": ("right_shift", ">>"),
}
_CMP = {"eq": ("equal", "=="), "ne": ("not_equal", "!="), "lt": ("less", "<"),
        "le": ("less_equal", "<="), "gt": ("greater", ">"), "ge": ("greater_equal", ">=")}


def _apply(fname: str, sym: str, a: Any, b: Any) -> Any:
    if complex_api.is_complex(a) or complex_api.is_complex(b):
        if fname not in complex_api.FUNCTIONS:
            raise numpy_api.UnsupportedError(
                f"'{sym}' with a complex operand at {user_location()} is not supported; "
                "use + - * / @ == != or work on .real and .imag", feature=f"complex {sym}")
        return NAMES[fname](a, b)
    fn = _binary(fname)
    return fn(a, b) if fn is not None else numpy_api.binary_op(fname, sym, a, b)


def _inplace(fname: str, sym: str) -> Any:
    def iop(self: Tracer, other: Any) -> Tracer:
        res = _apply(fname, sym, self, other)
        if isinstance(res, complex_api.ComplexTracer):
            raise numpy_api.UnsupportedError(
                f"'{sym}=' at {user_location()} would store a complex result into a real "
                "array (numpy refuses this cast too); write x = x {sym} y",
                feature=f"in-place {sym}")
        if res.accy_dtype.is_float and not self.accy_dtype.is_float:
            raise numpy_api.UnsupportedError(
                f"'{sym}=' at {user_location()} would store a {res.accy_dtype} result into "
                f"a {self.accy_dtype} array (numpy refuses this cast too); write "
                f"x = x {sym} y to make a new array", feature=f"in-place {sym}")
        self[...] = res
        return self

    iop.__name__ = f"__i{fname}__"
    return iop


def _install_operators() -> None:
    for dunder, (fname, sym) in {**_OPS, **_CMP}.items():
        def fwd(self, other, _f=fname, _s=sym):
            return _apply(_f, _s, self, other)

        setattr(Tracer, f"__{dunder}__", fwd)
        if dunder in _OPS:
            def rev(self, other, _f=fname, _s=sym):
                return _apply(_f, _s, other, self)

            setattr(Tracer, f"__r{dunder}__", rev)
            if dunder != "matmul":
                setattr(Tracer, f"__i{dunder}__", _inplace(fname, sym))
    Tracer.__neg__ = lambda self: numpy_api.negative(self)  # type: ignore[method-assign]
    Tracer.__pos__ = lambda self: self  # type: ignore[method-assign]
    Tracer.__abs__ = lambda self: numpy_api.abs(self)  # type: ignore[method-assign]
    Tracer.__divmod__ = lambda self, o: intmath_api.divmod(self, o)  # type: ignore[attr-defined]
    Tracer.__rdivmod__ = lambda self, o: intmath_api.divmod(o, self)  # type: ignore[attr-defined]
    Tracer.__invert__ = lambda self: numpy_api.invert(self)  # type: ignore[method-assign]
    Tracer.__getitem__ = indexing.getitem  # type: ignore[method-assign]
    Tracer.__setitem__ = setitem.setitem  # type: ignore[method-assign]


# ---------------------------------------------------------------- numpy protocol
def _array_ufunc(self: Tracer, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    # first, as ufunc_out._Probe measures it: the references to a host out= array
    refs = sys.getrefcount(kwargs["out"][0]) if "out" in kwargs and kwargs["out"] else 0
    fn = NAMES.get(ufunc.__name__)
    if method == "outer" and fn is not None and hasattr(fn, "outer") and not kwargs:
        return fn.outer(*inputs)
    if method == "at" and not kwargs:
        return ufunc_out.ufunc_at(ufunc.__name__, *inputs)
    if method == "accumulate" and ufunc.__name__ in _ACCUMULATE:
        return call_checked(functools.partial(scan_api.accumulate, op=ufunc.__name__),
                            f"np.{ufunc.__name__}.accumulate", inputs, kwargs)
    if method == "reduce" and ufunc.__name__ in _REDUCE:
        kwargs = {"axis": 0, **kwargs}  # numpy's default axis for ufunc.reduce
        return call_checked(NAMES[_REDUCE[ufunc.__name__]], f"np.{ufunc.__name__}.reduce",
                            inputs, kwargs)
    if method == "__call__" and fn is not None and "out" in kwargs and \
            set(kwargs) <= {"out", "where"}:  # np.add(a, b, out=o, where=m): o kept outside m
        mask, out = kwargs.get("where", True), kwargs["out"]
        f = fn if mask is True or not isinstance(out[0], Tracer) else (
            lambda *xs: numpy_api.where(mask, fn(*xs), out[0]))
        return ufunc_out.call_with_out(f, ufunc.__name__, inputs, out, refs)
    if method != "__call__" or fn is None or kwargs:
        extra = f" with {', '.join(f'{k}=' for k in sorted(kwargs))}" if kwargs else ""
        raise numpy_api.UnsupportedError(
            f"numpy ufunc np.{ufunc.__name__}.{method}{extra} on a traced array at "
            f"{user_location()} is not supported by accy; use the accy.numpy function of the "
            "same name where one exists", feature=f"np.{ufunc.__name__}",
            alternative="accy.numpy")
    return fn(*inputs)


def _array_function(self: Tracer, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    fn = NAMES.get(func.__name__)
    module = getattr(func, "__module__", "") or ""
    if fn is None and module.startswith("numpy.linalg"):  # refusal with linalg alternatives
        fn = getattr(linalg_namespace.linalg, func.__name__)
    if fn is None and module.startswith("numpy.fft"):
        raise UnsupportedFunctionError(
            f"numpy.fft.{func.__name__} on a traced array at {user_location()} is not "
            "supported by accy; write the DFT as a matrix product "
            "(np.exp(-2j * np.pi * np.outer(k, n) / N).astype(np.complex64) @ x) or a radix-2 "
            "FFT with x[0::2], x[1::2] and np.concatenate, or call numpy.fft outside the "
            "jitted function", feature=f"numpy.fft.{func.__name__}",
            alternative="DFT matrix product, radix-2 with slices")
    if fn is None:  # the namespace's refusal names the closest alternatives
        namespace = sys.modules.get("accy.numpy")
        if namespace is not None:
            fn = getattr(namespace, func.__name__)
        else:
            raise UnsupportedFunctionError(
                f"numpy.{func.__name__} on a traced array at {user_location()} is not "
                "supported by accy; see accy.numpy.__all__ for the supported names",
                feature=f"numpy.{func.__name__}")
    return call_checked(fn, f"numpy.{func.__name__}", args, kwargs)


_NO_OUT = object()


def call_checked(fn: Any, what: str, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` for numpy's ``what`` on traced arrays.

    ``out=`` that ``fn`` does not take itself is numpy's: the result is written into a
    traced ``out`` (``np.clip(x, 0, 1, out=x)``) and ``out`` returned. Arguments ``fn``
    does not take raise :class:`~accy.errors.UnsupportedError` naming them and the user's
    line, instead of Python's bare ``TypeError``.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to check against
        return fn(*args, **kwargs)
    out = _NO_OUT
    if "out" in kwargs and "out" not in sig.parameters:
        kwargs = dict(kwargs)
        out = kwargs.pop("out")
    try:
        sig.bind(*args, **kwargs)
    except TypeError as err:
        params = ", ".join(p for p in sig.parameters if p not in ("args", "kwargs"))
        raise numpy_api.UnsupportedError(
            f"{what} at {user_location()}: {err} (accy supports {what}({params}))",
            feature=f"{what} arguments", alternative=f"{what}({params})") from None
    res = fn(*args, **kwargs)
    if out is _NO_OUT or out is None:
        return res
    return ufunc_out.store_out(what, res, out)


# ---------------------------------------------------------------- methods
def _method(fname: str, doc: str) -> Any:
    fn = NAMES[fname]

    def m(self: Tracer, *args: Any, **kwargs: Any) -> Any:
        return call_checked(fn, f"ndarray.{fname}", (self, *args), kwargs)

    m.__name__ = fname
    m.__doc__ = f"``{doc}``; see ``accy.numpy.{fname}``."
    return m


def _reshape(self: Tracer, *shape: Any, order: str = "C") -> Any:
    """``accy.numpy.reshape(x, shape, order)``; ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    return shape_api.reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _transpose(self: Tracer, *axes: Any) -> Any:
    """``accy.numpy.transpose(x, axes)``."""
    return shape_api.transpose(self, axes[0] if len(axes) == 1 else (axes or None))


def _copy(self: Tracer, order: str = "K") -> Tracer:
    """A new array with the same values (writes to it do not reach ``x``); ``order`` is
    numpy's memory layout, which a traced array does not have."""
    return Tracer(self.value, self.trace)


def _fill(self: Tracer, value: Any) -> None:
    """Set every element to ``value`` in place."""
    self[...] = value


def _any(self: Tracer, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether any element (along ``axis``) is nonzero (False over an empty axis)."""
    return predicates_api.any(self, axis=axis, keepdims=keepdims)


def _all(self: Tracer, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether every element (along ``axis``) is nonzero (True over an empty axis)."""
    return predicates_api.all(self, axis=axis, keepdims=keepdims)


def _sort(self: Tracer, axis: int = -1, kind: Any = None, order: Any = None) -> None:
    """Sort in place along ``axis`` (stable, whatever ``kind``), as ``ndarray.sort``."""
    if order is not None:
        raise numpy_api.UnsupportedError(
            f"ndarray.sort(order=...) at {user_location()}: accy arrays have no fields",
            feature="sort order", alternative="x.sort(axis)")
    self[...] = ordering.sort(self, axis)


def _round(self: Tracer, ndigits: int | None = None) -> Any:
    """Python's ``round(x)``: numpy's ``round`` (halves to even)."""
    return math_more_api.round(self, 0 if ndigits is None else ndigits)


def _missing(self: Tracer, name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    hint = _METHOD_HINTS.get(name, "the accy.numpy function of the same name where one "
                             "exists (accy.numpy.__all__ lists them)")
    raise UnsupportedFunctionError(
        f"ndarray method .{name}() on a traced array at {user_location()} is not supported "
        f"by accy; use {hint}", feature=f"ndarray.{name}", alternative=hint)


def _install_methods() -> None:
    simple = {
        "astype": "astype(x, dtype)", "sum": "sum(x, axis)", "mean": "mean(x, axis)",
        "max": "max(x, axis)", "min": "min(x, axis)", "var": "var(x, axis)",
        "std": "std(x, axis)", "clip": "clip(x, lo, hi)", "squeeze": "squeeze(x, axis)",
        "argmax": "argmax(x, axis)", "argmin": "argmin(x, axis)", "dot": "dot(x, y)",
        "ravel": "ravel(x)", "cumsum": "cumsum(x, axis)", "cumprod": "cumprod(x, axis)",
        "swapaxes": "swapaxes(x, a, b)", "take": "take(x, indices, axis)",
        "prod": "prod(x, axis)", "conj": "conj(x)", "conjugate": "conj(x)",
        "diagonal": "diagonal(x, offset)",
    }
    for name, doc in simple.items():
        setattr(Tracer, name, _method(name, doc))
    Tracer.real = property(lambda self: self, doc="The real part (the array itself).")  # type: ignore
    Tracer.imag = property(lambda self: shape_api.zeros_like(self),  # type: ignore
                           doc="The imaginary part of a real array: zeros.")
    Tracer.flatten = lambda self, order="C": shape_api.reshape(_copy(self), (-1,), order)  # type: ignore
    Tracer.flatten.__doc__ = "A flattened copy (1-D, in numpy's ``order``)."
    Tracer.argsort = _method("argsort", "argsort(x, axis)")  # type: ignore[attr-defined]
    Tracer.nbytes = property(lambda self: self.size * self.dtype.itemsize,  # type: ignore
                             doc="Bytes of the values (numpy's nbytes).")
    Tracer.itemsize = property(lambda self: self.dtype.itemsize,  # type: ignore
                               doc="Bytes of one element.")
    Tracer.reshape = _reshape  # type: ignore[attr-defined]
    Tracer.transpose = _transpose  # type: ignore[attr-defined]
    Tracer.copy = _copy  # type: ignore[attr-defined]
    Tracer.fill = _fill  # type: ignore[attr-defined]
    Tracer.sort = _sort  # type: ignore[attr-defined]
    Tracer.__round__ = _round  # type: ignore[attr-defined]
    Tracer.round = lambda self, decimals=0: math_more_api.round(self, decimals)  # type: ignore
    Tracer.round.__doc__ = "``accy.numpy.round(x, decimals)``."
    Tracer.any = _any  # type: ignore[attr-defined]
    Tracer.all = _all  # type: ignore[attr-defined]
    Tracer.T = property(lambda self: shape_api.transpose(self),  # type: ignore
                        doc="The transpose (axes reversed; a view).")
    Tracer.at = property(lambda self: setitem.AtIndexer(self),  # type: ignore
                         doc="Functional updates: x.at[idx].set/add/multiply/min/max(v).")
    Tracer.__array_ufunc__ = _array_ufunc  # type: ignore[attr-defined]
    Tracer.__array_function__ = _array_function  # type: ignore[attr-defined]
    Tracer.__getattr__ = _missing  # type: ignore[attr-defined]


_install_operators()
_install_methods()
