"""The functions behind ``accy.numpy``: elementwise math, comparisons, reductions, linalg.

Every function accepts traced arrays (:class:`~accy.frontend.tracer.Tracer`), host arrays
(which become IR constants) and Python scalars (weak constants, see
:mod:`accy.frontend.trace`). Inside a jitted function they append tensor IR ops; outside
any trace, called on host data, they compute eagerly with numpy and return numpy arrays.

Shapes broadcast numpy-style. A shape error names the expression and the user's line:
``shape mismatch in a + b at model.py:12: operand shapes [3] and [4] do not broadcast``.
Shape helpers and creation live in :mod:`accy.frontend.shape_api`, ``matmul``/``einsum``
in :mod:`accy.frontend.linalg_api`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.int_compare import out_of_range_compare
from accy.frontend.modulus_compare import SWAP as _SWAP
from accy.frontend.modulus_compare import modulus_compare as _modulus_compare
from accy.frontend.reduce_axes import _axes, reduced_shape, sum_dtype
from accy.frontend.trace import (
    Trace,
    array_dtype,
    constant,
    current_trace,
    is_weak,
    promote,
    user_location,
)
from accy.frontend.tracer import Tracer
from accy.ir import DType, Value

__all__ = [
    "abs", "absolute", "add", "amax", "amin", "astype", "binary_op", "bitwise_and",
    "bitwise_or", "bitwise_xor", "clip", "cos", "divide", "equal", "exp",
    "gelu", "greater", "greater_equal", "invert", "less", "less_equal", "log", "logical_and",
    "logical_not", "logical_or", "max", "maximum", "mean", "min", "minimum",
    "multiply", "negative", "not_equal", "power", "relu", "rsqrt", "sigmoid", "sign",
    "sin", "softmax", "sqrt", "square", "std", "subtract", "sum", "tanh", "true_divide", "var",
    "where",
]

_BUILDER = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "power": "pow",
    "maximum": "max", "minimum": "min", "bitwise_and": "and_", "bitwise_or": "or_",
    "bitwise_xor": "xor", "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
    "greater": "gt", "greater_equal": "ge",
}
_COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
_BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor"}
_BOOL_AS = {"add": "or_", "maximum": "or_", "multiply": "and_", "minimum": "and_"}


# ---------------------------------------------------------------- plumbing
def trace_of(*xs: Any) -> Trace | None:
    """The trace the traced operands belong to (or the current one); None when eager.

    Raises:
        UnsupportedError: a traced array escaped the jitted function that made it.
    """
    cur = current_trace()
    for x in xs:
        if isinstance(x, Tracer) and x.trace is not cur and not (
                cur is not None and cur.encloses(x.trace)):
            raise UnsupportedError(
                f"traced array {x.value.type} from jitted function '{x.trace.name}' was used "
                f"outside it (at {user_location()}); return it from the function instead of "
                "storing it", feature="leaked tracer",
            )
    return cur


def dtype_of(x: Any) -> DType | None:
    """The strong dtype of ``x``; None for weak scalars."""
    if isinstance(x, Tracer):
        return x.accy_dtype
    if is_weak(x) and np.ndim(x) == 0:
        return None
    arr = np.asarray(x)
    if isinstance(x, (list, tuple)):  # Python data: f32/i32 like scalars
        return DType.F32 if arr.dtype.kind == "f" else DType.I32 if arr.dtype.kind in "iu" else (
            array_dtype(arr, "constant"))
    return array_dtype(arr, "constant")


def value_of(tr: Trace, x: Any, dtype: DType | None = None) -> Value:
    """``x`` as an IR value of ``dtype`` (cast or constant)."""
    if isinstance(x, Tracer):
        v = x.value
        return v if dtype is None or v.type.dtype == dtype else tr.fb.cast(v, dtype)
    if isinstance(x, Value):
        return x
    dt = dtype or dtype_of(x) or promote([None], [x])
    arr = np.asarray(x)
    try:
        with np.errstate(all="ignore"):
            conv = arr.astype(dt.numpy)
    except OverflowError:  # a Python int beyond 64 bits (an object array)
        conv = None
    if conv is None or (dt.is_int and arr.dtype.kind in "iub" and not np.array_equal(conv, arr)):
        raise VerifyError(
            f"constant {x!r} at {user_location()} does not fit {dt}; cast the array to a wider "
            "dtype or use a smaller constant"
        )
    return constant(tr.fb, conv, dt)


def wrap(tr: Trace, v: Value) -> Tracer:
    return Tracer(v, tr)


def common(*xs: Any) -> DType:
    """The promoted dtype of operands ``xs`` (arrays strong, scalars weak)."""
    strong = [dtype_of(x) for x in xs]
    weak = [x for x, d in zip(xs, strong, strict=True) if d is None]
    return promote(strong, weak)


def shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def broadcast_shape(expr: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcast of ``shapes``; a VerifyError naming ``expr`` and the user's line."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        loc = user_location()
        got = " and ".join(str(list(s)) for s in shapes)
        raise VerifyError(
            f"shape mismatch in {expr} at {loc}: operand shapes {got} do not broadcast; "
            "trailing axes must be equal or 1 — reshape or index one operand (x[:, None])",
            position=loc,
        ) from None


def _float(dt: DType) -> DType:
    return dt if dt.is_float else DType.F32


# ---------------------------------------------------------------- elementwise
_HOST = (bool, int, float, np.generic)


def binary_op(name: str, symbol: str, a: Any, b: Any) -> Any:
    """``a <symbol> b`` as ``accy.numpy.<name>``; used by the tracer's operators.

    Raises:
        VerifyError: the shapes do not broadcast (names the expression and the user's line).
        UnsupportedError: a bitwise op on floats.
    """
    tr = trace_of(a, b)
    if tr is None or (isinstance(a, _HOST) and isinstance(b, _HOST)):
        # two host operands (x % 2**40 compares 2**40 with 0 inside): numpy's answer, not
        # an IR constant of accy's default integer type that may not hold them
        with np.errstate(all="ignore"):
            return getattr(np, name)(a, b)
    if name in _SWAP:
        res = _modulus_compare(name, a, b)
        if res is not None:
            return res
    dt = common(a, b)
    if name in ("divide", "true_divide", "power"):
        dt = _float(dt)
    if name in _BITWISE and dt.is_float:
        raise UnsupportedError(
            f"'{symbol}' at {user_location()} needs bool or integer operands, got {dt}; "
            "compare first (x > 0) or cast with .astype(anp.int32)", feature=name,
        )
    method = _BUILDER["divide" if name == "true_divide" else name]
    if dt == DType.BOOL and name not in _COMPARE and name not in _BITWISE:
        if name == "subtract" or name not in _BOOL_AS:  # numpy's TypeError for bool '-'
            raise UnsupportedError(
                f"'{symbol}' at {user_location()} on two bool arrays is not supported (numpy "
                "refuses it too); use ^ or logical_xor, or cast with .astype(anp.int32)",
                feature=f"bool {name}")
        method = _BOOL_AS[name]  # numpy: + and maximum are 'or', * and minimum are 'and'
    shape = broadcast_shape(f"a {symbol} b", shape_of(a), shape_of(b))
    if name in _COMPARE and dt.is_int:  # x_u8 < 256: numpy 2 answers from the constant
        res = out_of_range_compare(tr, name, a, b, dt, shape)
        if res is not None:
            return res
    fb = tr.fb
    va, vb = (fb.broadcast_to(value_of(tr, x, dt), shape) for x in (a, b))
    return wrap(tr, getattr(fb, method)(va, vb))


def _binary(name: str, symbol: str):
    def fn(x1: Any, x2: Any) -> Any:
        return binary_op(name, symbol, x1, x2)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``x1 {symbol} x2`` with numpy broadcasting (like ``numpy.{name}``)."
    return fn


add = _binary("add", "+")
subtract = _binary("subtract", "-")
multiply = _binary("multiply", "*")
divide = _binary("divide", "/")
true_divide = _binary("true_divide", "/")
power = _binary("power", "**")
maximum = _binary("maximum", "max")
minimum = _binary("minimum", "min")
equal = _binary("equal", "==")
not_equal = _binary("not_equal", "!=")
less = _binary("less", "<")
less_equal = _binary("less_equal", "<=")
greater = _binary("greater", ">")
greater_equal = _binary("greater_equal", ">=")
bitwise_and = _binary("bitwise_and", "&")
bitwise_or = _binary("bitwise_or", "|")
bitwise_xor = _binary("bitwise_xor", "^")


def logical_and(x1: Any, x2: Any) -> Any:
    """Elementwise logical and; operands are compared with 0 first when not bool."""
    return bitwise_and(_as_bool(x1), _as_bool(x2))


def logical_or(x1: Any, x2: Any) -> Any:
    """Elementwise logical or."""
    return bitwise_or(_as_bool(x1), _as_bool(x2))


def logical_not(x: Any) -> Any:
    """Elementwise logical not."""
    return invert(_as_bool(x))


def _as_bool(x: Any) -> Any:
    if isinstance(x, Tracer) and x.accy_dtype != DType.BOOL:
        return not_equal(x, 0)
    return x if isinstance(x, Tracer) else np.asarray(x).astype(bool)


def _unary(np_name: str, method: str, float_only: bool):
    def fn(x: Any) -> Any:
        tr = trace_of(x)
        if tr is None:
            return _EAGER.get(np_name, getattr(np, np_name, None))(x)
        v = value_of(tr, x)
        if float_only and not v.type.dtype.is_float:
            v = tr.fb.cast(v, DType.F32)
        return wrap(tr, getattr(tr.fb, method)(v))

    fn.__name__ = np_name
    fn.__doc__ = (f"Elementwise ``{np_name}``; same shape" +
                  ("; integer input is cast to f32 first." if float_only else "."))
    return fn


def _np_sigmoid(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return 1 / (1 + np.exp(-x))


def _np_gelu(x: Any) -> np.ndarray:
    x = np.asarray(x)
    c = x.dtype.type(np.sqrt(2.0 / np.pi))
    return x.dtype.type(0.5) * x * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x * x * x)))


_EAGER = {
    "sigmoid": _np_sigmoid, "relu": lambda x: np.maximum(x, 0), "gelu": _np_gelu,
    "rsqrt": lambda x: 1 / np.sqrt(x), "negative": np.negative, "invert": np.invert,
}
exp = _unary("exp", "exp", True)
log = _unary("log", "log", True)
sqrt = _unary("sqrt", "sqrt", True)
rsqrt = _unary("rsqrt", "rsqrt", True)
tanh = _unary("tanh", "tanh", True)
sin = _unary("sin", "sin", True)
cos = _unary("cos", "cos", True)
sigmoid = _unary("sigmoid", "sigmoid", True)
relu = _unary("relu", "relu", True)
gelu = _unary("gelu", "gelu", True)
negative = _unary("negative", "neg", False)
_abs = _unary("abs", "abs", False)


def abs(x: Any) -> Any:  # noqa: A001 - numpy's name
    """Elementwise ``|x|``; unsigned and bool arrays are their own (numpy's)."""
    if isinstance(x, Tracer) and (x.accy_dtype.is_unsigned or x.accy_dtype == DType.BOOL):
        return Tracer(x.value, x.trace)
    return _abs(x)


absolute = abs
invert = _unary("invert", "not_", False)


def square(x: Any) -> Any:
    """Elementwise ``x * x``."""
    return multiply(x, x)


def sign(x: Any) -> Any:
    """Elementwise sign: -1, 0 or 1 in ``x``'s dtype (NaN stays NaN, like numpy)."""
    if trace_of(x) is None:
        return np.sign(x)
    s = where(greater(x, 0), 1, where(less(x, 0), -1, 0)).astype(x.dtype)
    return where(not_equal(x, x), x, s) if np.dtype(x.dtype).kind == "f" else s


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """Elementwise ``min(max(a, a_min), a_max)``; either bound may be None."""
    if a_min is not None:
        a = maximum(a, a_min)
    return a if a_max is None else minimum(a, a_max)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` else ``y``, elementwise with broadcasting.

    ``condition`` that is not bool is compared with 0. This is how a data-dependent
    choice is written in a traced function (a Python ``if`` cannot see array data).

    Raises:
        UnsupportedError: ``where(condition)`` alone (numpy's ``nonzero``) on traced data:
            the number of positions depends on the data.
    """
    if x is None or y is None:
        if x is None and y is None and trace_of(condition) is None:
            return np.where(condition)
        given = "neither" if x is None and y is None else "only one"
        raise UnsupportedError(
            f"where(condition) at {user_location()} with {given} of x and y returns "
            "positions, whose count depends on the data; use "
            "where(condition, x, y) to select, or sum(condition) to count",
            feature="where(condition)", alternative="where(condition, x, y)")
    tr = trace_of(condition, x, y)
    if tr is None:
        return np.where(condition, x, y)
    dt = common(x, y)
    c = _as_bool(condition)
    shape = broadcast_shape("where(condition, x, y)", shape_of(c), shape_of(x), shape_of(y))
    fb = tr.fb
    vc, vx, vy = (fb.broadcast_to(value_of(tr, v, d), shape)
                  for v, d in ((c, DType.BOOL), (x, dt), (y, dt)))
    return wrap(tr, fb.select(vc, vx, vy))


def astype(x: Any, dtype: Any) -> Any:
    """``x`` converted to ``dtype`` (numpy dtype, ``"float32"`` or accy's ``"f32"``)."""
    tr = trace_of(x)
    dt = DType.parse(dtype)
    if tr is None:
        return np.asarray(x).astype(dt.numpy)
    return wrap(tr, value_of(tr, x, dt))


# ---------------------------------------------------------------- reductions
def _reduce(kind: str, np_fn, x: Any, axis: Any, keepdims: bool) -> Any:
    tr = trace_of(x)
    if tr is None:
        return np_fn(x, axis=axis, keepdims=keepdims)
    v = value_of(tr, x)
    if kind == "mean" and not v.type.dtype.is_float:
        v = tr.fb.cast(v, DType.F32)
    elif kind == "sum" and sum_dtype(v.type.dtype) != v.type.dtype:
        v = tr.fb.cast(v, sum_dtype(v.type.dtype))
    axes = _axes(axis, v.type.rank)
    if kind in ("max", "min") and v.type.dtype == DType.BOOL:  # numpy's: logical or / and
        out = getattr(tr.fb, f"reduce_{kind}")(tr.fb.cast(v, DType.U8), axes, keepdims)
        return wrap(tr, tr.fb.cast(out, DType.BOOL))
    return wrap(tr, getattr(tr.fb, f"reduce_{kind}")(v, axes, keepdims))


def _masked(a: Any, where_: Any, fill: Any) -> Any:
    """``a`` with the elements outside numpy's ``where=`` mask replaced by ``fill``."""
    if where_ is None or where_ is True:
        return a
    return where(where_, a, fill)


def sum(a: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None,  # noqa: A001
        where: Any = None) -> Any:
    """Sum over ``axis`` (int, tuple or None for all); bool counts as i32, 8- and 16-bit
    integers accumulate in (u)int64 as numpy's do (:func:`sum_dtype`); ``dtype``: the
    accumulator and result dtype (the input is cast to it first); ``where``: a bool mask
    broadcast against ``a``, elements outside it count as 0 (numpy's)."""
    if trace_of(a, where) is None:
        return np.sum(a, axis=axis, keepdims=keepdims, dtype=dtype,
                      **({} if where is None else {"where": where}))
    if dtype is not None:
        a = astype(a, dtype)
    return _reduce("sum", np.sum, _masked(a, where, 0), axis, keepdims)


def mean(a: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None,
         where: Any = None) -> Any:
    """Mean over ``axis``; integer input gives f32; ``dtype`` as for :func:`sum`;
    ``where``: the mean of the elements inside the mask (NaN where none is, as numpy's)."""
    if trace_of(a, where) is None:
        return np.mean(a, axis=axis, keepdims=keepdims, dtype=dtype,
                       **({} if where is None else {"where": where}))
    if dtype is not None:
        a = astype(a, dtype)
    if where is None or where is True:
        return _reduce("mean", np.mean, a, axis, keepdims)
    tr = trace_of(a, where)
    v = value_of(tr, a)
    if not v.type.dtype.is_float:
        v = tr.fb.cast(v, DType.F32)
    total = _reduce("sum", np.sum, _masked(wrap(tr, v), where, 0), axis, keepdims)
    ones = value_of(tr, _masked(np.asarray(1, v.type.dtype.numpy), where, 0), v.type.dtype)
    shape = broadcast_shape("mean(where=)", tuple(ones.type.shape), tuple(v.type.shape))
    count = _reduce("sum", np.sum, wrap(tr, tr.fb.broadcast_to(ones, shape)), axis, keepdims)
    return divide(total, count)


def _extreme(kind: str, np_fn: Any, a: Any, axis: Any, keepdims: bool, initial: Any,
             where_: Any) -> Any:
    if trace_of(a, where_) is None:
        extra = {} if where_ is None else {"where": where_}
        return np_fn(a, axis=axis, keepdims=keepdims,
                     **({} if initial is None else {"initial": initial}), **extra)
    if initial is not None and isinstance(a, Tracer) and not isinstance(initial, Tracer):
        initial = np.asarray(initial).astype(a.accy_dtype.numpy)  # numpy casts it to a's
    if where_ is not None and where_ is not True:
        if initial is None:
            raise VerifyError(f"{kind} with where= at {user_location()} needs initial= (the "
                              "value where the mask selects nothing), as numpy's does")
        a = _masked(a, where_, initial)
    if initial is not None:
        tr = trace_of(a, initial)
        v = value_of(tr, a)
        axes = _axes(axis, v.type.rank)
        if any(v.type.shape[i] == 0 for i in axes):  # nothing to reduce: numpy gives initial
            shape = reduced_shape(tuple(v.type.shape), axes, keepdims)
            init = value_of(tr, initial, v.type.dtype)
            return wrap(tr, tr.fb.broadcast_to(init, shape))
    out = _reduce(kind, np_fn, a, axis, keepdims)
    if initial is None:
        return out
    return (maximum if kind == "max" else minimum)(out, initial)


def max(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None,  # noqa: A001
        where: Any = None) -> Any:
    """Maximum over ``axis`` (and ``initial``, when given, as numpy's); ``where`` needs
    ``initial``.

    Raises:
        VerifyError: ``where`` without ``initial``.
    """
    return _extreme("max", np.max, a, axis, keepdims, initial, where)


def min(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None,  # noqa: A001
        where: Any = None) -> Any:
    """Minimum over ``axis`` (and ``initial``, when given, as numpy's); ``where`` needs
    ``initial``.

    Raises:
        VerifyError: ``where`` without ``initial``.
    """
    return _extreme("min", np.min, a, axis, keepdims, initial, where)


amax, amin = max, min


def var(a: Any, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Any:
    """Variance over ``axis`` with numpy's ``ddof`` (divisor ``n - ddof``; 0: population)."""
    if trace_of(a) is None:
        return np.var(a, axis=axis, keepdims=keepdims, ddof=ddof)
    d = subtract(a, mean(a, axis=axis, keepdims=True))
    v = mean(multiply(d, d), axis=axis, keepdims=keepdims)
    if not ddof:
        return v
    shape = tuple(a.shape)
    n = int(np.prod([shape[i] for i in _axes(axis, len(shape))], dtype=np.int64))
    if n > ddof:
        return multiply(v, n / (n - ddof))
    return true_divide(multiply(v, float(n)), 0.0)  # numpy: sum / 0 (inf, or nan for 0)


def std(a: Any, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Any:
    """Standard deviation over ``axis`` with numpy's ``ddof``."""
    return sqrt(var(a, axis=axis, keepdims=keepdims, ddof=ddof))


def softmax(x: Any, axis: int = -1) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis`` (an accy extension); floats."""
    tr = trace_of(x)
    if tr is None:
        x = np.asarray(x)
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)
    v = value_of(tr, x)
    if not v.type.dtype.is_float:
        v = tr.fb.cast(v, DType.F32)
    return wrap(tr, tr.fb.softmax(v, axis=axis))
