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
from accy.frontend.array_more_api import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    convolve,
    copyto,
    correlate,
    cross,
    digitize,
    fill_diagonal,
    identity,
    inner,
    interp,
    isin,
    kron,
    moveaxis,
    repeat,
    searchsorted,
    select,
    split,
    tensordot,
    tile,
    vdot,
)
from accy.frontend.errors import UnsupportedFunctionError as _Unsupported
from accy.frontend.grid_api import empty, empty_like, linspace, meshgrid, mgrid, ogrid, tril, triu
from accy.frontend.indexing import take
from accy.frontend.intmath_api import (
    arctan,
    arctan2,
    ceil,
    divmod,
    floor,
    floor_divide,
    fmod,
    left_shift,
    mod,
    power,
    remainder,
    right_shift,
    trunc,
)
from accy.frontend.join_api import (
    array,
    asarray,
    column_stack,
    concatenate,
    diff,
    dstack,
    flip,
    hstack,
    roll,
    stack,
    vstack,
)
from accy.frontend.linalg_api import einsum, outer
from accy.frontend.linalg_namespace import linalg
from accy.frontend.math_more_api import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctanh,
    around,
    cbrt,
    copysign,
    cosh,
    deg2rad,
    degrees,
    exp2,
    expm1,
    fabs,
    fix,
    fmax,
    fmin,
    heaviside,
    hypot,
    isclose,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_xor,
    nan_to_num,
    positive,
    rad2deg,
    radians,
    reciprocal,
    rint,
    round,
    signbit,
    sinc,
    sinh,
    tan,
)
from accy.frontend.matrix_api import diag, diagonal, trace
from accy.frontend.numpy_api import (
    amax,
    amin,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    clip,
    cos,
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
    min,
    minimum,
    relu,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softmax,
    sqrt,
    square,
    std,
    tanh,
    var,
    where,
)
from accy.frontend.ordering import argpartition, argsort, partition, sort
from accy.frontend.pad_api import pad
from accy.frontend.predicates_api import all, any, count_nonzero, isfinite, isinf, isnan
from accy.frontend.rearrange_api import (
    append,
    delete,
    fliplr,
    flipud,
    insert,
    put_along_axis,
    ravel_multi_index,
    rot90,
    take_along_axis,
    unravel_index,
)
from accy.frontend.scan_api import argmax, argmin, bincount, cumprod, cumsum, histogram
from accy.frontend.shape_api import (
    arange,
    broadcast_to,
    expand_dims,
    eye,
    full,
    full_like,
    ndim,
    ones,
    ones_like,
    ravel,
    reshape,
    shape,
    size,
    squeeze,
    swapaxes,
    transpose,
    zeros,
    zeros_like,
)
from accy.frontend.stats_api import (
    average,
    corrcoef,
    cov,
    gradient,
    median,
    nanmax,
    nanmean,
    nanmin,
    nansum,
    percentile,
    ptp,
    quantile,
    trapezoid,
)

bitwise_not = invert
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def copy(a: Any) -> Any:
    """A new array with ``a``'s values (writes to it do not reach ``a``)."""
    from accy.frontend.tracer import Tracer as _Tracer

    if isinstance(a, _Tracer):
        return a.copy()
    return _np.array(a, copy=True)


from accy.frontend import complex_api as _complex  # noqa: E402
from accy.frontend.methods import NAMES as _NAMES  # noqa: E402

# complex operands go to complex_api (a complex array is a pair of float arrays): the
# namespace's versions of these names are the complex-aware ones of accy.frontend.methods
add, subtract, multiply = _NAMES["add"], _NAMES["subtract"], _NAMES["multiply"]
divide, true_divide = _NAMES["divide"], _NAMES["true_divide"]
negative, equal, not_equal = _NAMES["negative"], _NAMES["equal"], _NAMES["not_equal"]
abs, exp, sum = _NAMES["abs"], _NAMES["exp"], _NAMES["sum"]  # noqa: A001 - numpy's names
absolute = abs
mean, astype, matmul, dot = _NAMES["mean"], _NAMES["astype"], _NAMES["matmul"], _NAMES["dot"]
angle, prod, real, imag = _NAMES["angle"], _NAMES["prod"], _NAMES["real"], _NAMES["imag"]
conj = conjugate = _NAMES["conj"]
make_complex = _complex.make_complex
from accy.frontend import complex_struct as _complex_struct  # noqa: E402

for _n in _complex_struct.FUNCTIONS:  # where, concatenate, roll, ...: complex-aware versions
    globals()[_n] = _NAMES[_n]
complex64 = _np.complex64
complex128 = _np.complex128
float32 = _np.float32
float64 = _np.float64
int8 = _np.int8
int16 = _np.int16
int32 = _np.int32
int64 = _np.int64
uint8 = _np.uint8
uint16 = _np.uint16
uint32 = _np.uint32
uint64 = _np.uint64
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
    "full", "full_like", "gelu", "greater", "greater_equal", "inf", "int8", "int16", "int32",
    "int64", "invert",
    "less", "less_equal", "log", "logical_and", "logical_not", "logical_or", "matmul", "max",
    "maximum", "mean", "min", "minimum", "multiply", "nan", "negative", "newaxis",
    "not_equal", "ones", "ones_like", "outer", "pi", "power", "random", "ravel", "relu",
    "reshape", "rsqrt", "sigmoid", "sign", "sin", "softmax", "sort", "sqrt", "square",
    "squeeze", "std", "subtract", "sum", "swapaxes", "take", "tanh", "transpose",
    "true_divide", "angle", "conj", "conjugate", "real", "imag", "prod", "complex64",
    "complex128", "make_complex", "uint8", "uint16", "uint32", "uint64", "var", "where",
    "zeros", "zeros_like",
    "arctan", "arctan2", "argmax", "argmin", "ceil", "column_stack", "concatenate", "copy",
    "cumprod", "cumsum", "diff", "dstack", "empty", "empty_like", "flip", "floor",
    "divmod", "floor_divide", "fmod", "histogram", "hstack", "left_shift", "linspace", "meshgrid",
    "mgrid", "mod", "ogrid", "remainder", "right_shift", "roll", "stack", "tril", "triu",
    "trunc", "vstack", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
    "bincount", "diag", "diagonal", "linalg", "ndim", "pad", "shape", "size", "trace",
    "all", "any", "count_nonzero", "isfinite", "isinf", "isnan",
    # elementwise math written with the ops above (accy.frontend.math_more_api)
    "arccos", "arccosh", "arcsin", "arcsinh", "arctanh", "around", "cbrt", "copysign", "cosh",
    "deg2rad", "degrees", "exp2", "expm1", "fabs", "fix", "fmax", "fmin", "heaviside",
    "hypot", "isclose", "log1p", "log2", "log10", "logaddexp", "logaddexp2", "logical_xor",
    "nan_to_num", "positive", "rad2deg", "radians", "reciprocal", "rint", "round", "signbit",
    "sinc", "sinh", "tan",
    # statistics (accy.frontend.stats_api)
    "average", "corrcoef", "cov", "gradient", "median", "nanmax", "nanmean", "nanmin", "nansum",
    "percentile", "ptp", "quantile", "trapezoid",
    # array functions (accy.frontend.array_more_api)
    "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "convolve",
    "copyto", "correlate", "cross", "digitize", "fill_diagonal", "identity", "inner", "interp",
    "isin",
    "kron", "moveaxis", "repeat", "searchsorted", "select", "split", "tensordot", "tile",
    "vdot",
    # rearranging and index helpers (accy.frontend.rearrange_api)
    "append", "delete", "fliplr", "flipud", "insert", "put_along_axis", "ravel_multi_index",
    "rot90", "take_along_axis", "unravel_index", "argpartition", "partition",
]

_DATA_SHAPE = ("the result shape would depend on data; use where(cond, x, 0) or a "
               "boolean mask multiplied in")
#: numpy names accy lacks → what to write instead (tests run the main ones).
_HINTS = {
    "nonzero": _DATA_SHAPE,
    "allclose": "isclose(a, b).all() returned, then a host check of the result",
    "argwhere": _DATA_SHAPE, "unique": _DATA_SHAPE,
    "flatnonzero": _DATA_SHAPE, "compress": _DATA_SHAPE, "extract": _DATA_SHAPE,
    "fft": "no FFT in accy; use numpy.fft on the host",
}


_OVERVIEW = ("elementwise math (add, exp, where, ...), reductions (sum, mean, max, min), "
             "linalg (matmul, einsum, dot), shape (reshape, transpose, broadcast_to)")


def _alternatives(name: str) -> str:
    """The hint text for ``accy.numpy.<name>`` that accy lacks.

    A numpy name gets its entry in :data:`_HINTS` (or the overview): spelling-alike names
    (``stack`` → ``take``) would be irrelevant. Any other name is a misspelling: the closest
    supported names, as "did you mean".
    """
    if hasattr(_np, name):
        return "; supported alternatives: " + _HINTS.get(name, _OVERVIEW)
    close = difflib.get_close_matches(name, __all__, n=3, cutoff=0.7)
    if close:
        return "; did you mean " + " or ".join(f"anp.{c}" for c in close) + "?"
    return "; supported: " + _OVERVIEW


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    kind = f"numpy.{name}" if hasattr(_np, name) else f"'{name}'"
    alt_text = _alternatives(name)
    raise _Unsupported(
        f"accy.numpy.{name}: {kind} is not supported by accy{alt_text}; see "
        f"accy.numpy.__all__ for the {len(__all__)} supported names",
        feature=f"numpy.{name}", alternative=alt_text.split(": ", 1)[-1].removesuffix("?"))


def __dir__() -> list[str]:
    return list(__all__)
