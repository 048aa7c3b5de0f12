"""``import accy.numpy as anp``: the numpy-like namespace for jitted functions.

Inside ``accy.jit`` these functions build tensor IR; outside, on host data, they compute
with numpy. A numpy function accy does not support raises
:class:`~accy.frontend.errors.UnsupportedFunctionError` (an ``AttributeError``) that names
it and lists the closest supported alternatives; ``anp.__all__`` lists everything.

Beyond numpy: ``softmax``, ``relu``, ``gelu``, ``sigmoid``, ``rsqrt`` (neural-network
primitives that map to single IR ops), ``take`` (gather) and ``random`` (explicit keys).
"""

from __future__ import annotations

import difflib
from typing import Any

import numpy as _np

from accy.frontend import random  # noqa: F401 - anp.random
from accy.frontend.errors import UnsupportedFunctionError as _Unsupported
from accy.frontend.indexing import take
from accy.frontend.linalg_api import dot, einsum, matmul, outer
from accy.frontend.numpy_api import (
    abs,
    absolute,
    add,
    amax,
    amin,
    astype,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    clip,
    cos,
    divide,
    equal,
    exp,
    gelu,
    greater,
    greater_equal,
    invert,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    relu,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softmax,
    sqrt,
    square,
    std,
    subtract,
    sum,
    tanh,
    true_divide,
    var,
    where,
)
from accy.frontend.ordering import argsort, sort
from accy.frontend.shape_api import (
    arange,
    array,
    asarray,
    broadcast_to,
    expand_dims,
    eye,
    full,
    full_like,
    ones,
    ones_like,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
    zeros,
    zeros_like,
)

float32 = _np.float32
float64 = _np.float64
int32 = _np.int32
int64 = _np.int64
uint32 = _np.uint32
bool_ = _np.bool_
newaxis = None
pi = float(_np.pi)
e = float(_np.e)
inf = float("inf")
nan = float("nan")

__all__ = [
    "abs", "absolute", "add", "amax", "amin", "arange", "argsort", "array", "asarray", "astype",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bool_", "broadcast_to", "clip", "cos",
    "divide", "dot", "e", "einsum", "equal", "exp", "expand_dims", "eye", "float32", "float64",
    "full", "full_like", "gelu", "greater", "greater_equal", "inf", "int32", "int64", "invert",
    "less", "less_equal", "log", "logical_and", "logical_not", "logical_or", "matmul", "max",
    "maximum", "mean", "min", "minimum", "multiply", "nan", "negative", "newaxis",
    "not_equal", "ones", "ones_like", "outer", "pi", "power", "random", "ravel", "relu",
    "reshape", "rsqrt", "sigmoid", "sign", "sin", "softmax", "sort", "sqrt", "square",
    "squeeze", "std", "subtract", "sum", "swapaxes", "take", "tanh", "transpose",
    "true_divide", "uint32", "var", "where", "zeros", "zeros_like",
]

_HINTS = {
    "argmax": "argsort(x)[..., -1] or where(x == max(x, axis, keepdims=True), ...)",
    "argmin": "argsort(x)[..., 0]",
    "concatenate": "build the pieces in separate jitted outputs, or pad with where",
    "cumsum": "matmul with a triangular mask: x @ (arange(n)[:, None] <= arange(n))",
    "floor_divide": "divide and where", "mod": "divide and where", "remainder": "divide and where",
    "prod": "exp(sum(log(x))) for positive x",
    "tensordot": "einsum", "inner": "einsum", "vdot": "einsum", "mat": "matmul",
}


_OVERVIEW = ("elementwise math (add, exp, where, ...), reductions (sum, mean, max, min), "
             "linalg (matmul, einsum, dot), shape (reshape, transpose, broadcast_to)")


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    close = difflib.get_close_matches(name, __all__, n=5, cutoff=0.6)
    hint = _HINTS.get(name)
    alts = ([hint] if hint else []) + close
    alt_text = "; supported alternatives: " + ", ".join(alts if alts else [_OVERVIEW])
    kind = f"numpy.{name}" if hasattr(_np, name) else f"'{name}'"
    raise _Unsupported(
        f"accy.numpy.{name}: {kind} is not supported by accy{alt_text}; see "
        f"accy.numpy.__all__ for the {len(__all__)} supported names",
        feature=f"numpy.{name}", alternative=", ".join(alts))


def __dir__() -> list[str]:
    return list(__all__)
