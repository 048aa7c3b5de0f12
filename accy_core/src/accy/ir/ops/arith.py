"""``arith`` ops: elementwise arithmetic, comparison, select and cast.

Example::

    %2 = arith.add %0, %1 : (f32[4], f32[4]) -> f32[4]
    %3 = arith.gt %2, %0 : (f32[4], f32[4]) -> bool[4]

Binary ops need equal operand types (the builder inserts ``tensor.broadcast_to`` for
numpy-style broadcasting). Integer ``div`` truncates toward zero and gives 0 for a zero
divisor; float ``rem`` is C's ``fmod`` (exact; the sign of the dividend, NaN for a zero
divisor); float ``max``/``min`` propagate NaN like ``numpy.maximum``. ``cast`` from float to
int truncates toward zero and saturates at the integer range (NaN gives 0) on every backend.
"""

from __future__ import annotations

import numpy as np

from accy.ir.dtypes import DType
from accy.ir.ops.common import BITWISE, FLOATS, NUMERIC, SIGNED, fail, require_dtype, same_type
from accy.ir.ops.registry import OpDef, register_op
from accy.ir.types import TensorType
from accy.numerics import COMPARE as _COMPARE
from accy.numerics import saturating_cast


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # floor-divide, then round toward zero; INT_MIN / -1 becomes INT_MIN / 1 (wraps)
    safe = np.where(b == 0, np.ones_like(b), b)
    if a.dtype.kind == "i":
        safe = np.where((a == np.iinfo(a.dtype).min) & (safe == -1), np.ones_like(b), safe)
    q = a // safe
    q = q + ((a % safe != 0) & ((a < 0) != (safe < 0))).astype(a.dtype)
    return np.where(b == 0, 0, q).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(a, b)
    return _int_div(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.power(a, b)


_BINARY = {
    "add": (np.add, NUMERIC, {"commutative"}),
    "sub": (np.subtract, NUMERIC, set()),
    "mul": (np.multiply, NUMERIC, {"commutative"}),
    "div": (_div, NUMERIC, set()),
    "max": (np.maximum, NUMERIC, {"commutative"}),
    "min": (np.minimum, NUMERIC, {"commutative"}),
    "pow": (_pow, FLOATS, set()),
    "rem": (np.fmod, FLOATS, set()),
    "and": (np.bitwise_and, BITWISE, {"commutative"}),
    "or": (np.bitwise_or, BITWISE, {"commutative"}),
    "xor": (np.bitwise_xor, BITWISE, {"commutative"}),
}
_UNARY = {
    "neg": (np.negative, SIGNED),
    "abs": (np.abs, SIGNED),
    "not": (np.invert, BITWISE),
}


def _names(dtypes) -> str:
    return ", ".join(d.value for d in dtypes)


def _binary_def(name: str, fn, allowed, traits) -> OpDef:
    full = f"arith.{name}"

    def infer(types, attrs):
        t = same_type(full, types)
        require_dtype(full, t, allowed)
        return [t]

    def ref(xs, attrs):
        with np.errstate(all="ignore"):
            return [np.asarray(fn(xs[0], xs[1])).astype(xs[0].dtype, copy=False)]

    return OpDef(full, 2, infer, ref, traits=frozenset({"pure", "elementwise", *traits}),
                 summary=f"elementwise {name} ({_names(allowed)})")


def _compare_def(name: str, fn) -> OpDef:
    full = f"arith.{name}"

    def infer(types, attrs):
        t = same_type(full, types)
        return [t.with_dtype(DType.BOOL)]

    return OpDef(full, 2, infer, lambda xs, a: [np.asarray(fn(xs[0], xs[1]))],
                 traits=frozenset({"pure", "elementwise", "compare"}),
                 summary=f"elementwise compare {name} (any dtype; result bool)")


def _unary_def(name: str, fn, allowed) -> OpDef:
    full = f"arith.{name}"

    def infer(types, attrs):
        require_dtype(full, types[0], allowed)
        return [types[0]]

    return OpDef(full, 1, infer, lambda xs, a: [np.asarray(fn(xs[0])).astype(xs[0].dtype)],
                 traits=frozenset({"pure", "elementwise"}),
                 summary=f"elementwise {name} ({_names(allowed)})")


def _select_infer(types, attrs):
    c, a, b = types
    if c.dtype is not DType.BOOL:
        raise fail("arith.select", f"condition dtype must be bool, got {c.dtype}")
    t = same_type("arith.select", [a, b])
    if c.shape != t.shape:
        raise fail("arith.select", f"condition shape {c} must match value shape {t}")
    return [t]


def _cast_infer(types, attrs):
    return [types[0].with_dtype(DType.parse(attrs["dtype"]))]


def _cast_ref(xs, attrs):
    return [saturating_cast(xs[0], DType.parse(attrs["dtype"]).numpy)]


for _n, (_f, _allowed, _traits) in _BINARY.items():
    register_op(_binary_def(_n, _f, _allowed, _traits))
for _n, _f in _COMPARE.items():
    register_op(_compare_def(_n, _f))
for _n, (_f, _allowed) in _UNARY.items():
    register_op(_unary_def(_n, _f, _allowed))
register_op(OpDef("arith.select", 3, _select_infer, lambda xs, a: [np.where(xs[0], xs[1], xs[2])],
                  traits=frozenset({"pure", "elementwise"}), summary="elementwise c ? a : b"))
register_op(OpDef("arith.cast", 1, _cast_infer, _cast_ref, attrs={"dtype": "dtype"},
                  traits=frozenset({"pure", "elementwise"}),
                  summary="convert element type (float → int: toward zero, saturating, NaN → 0)"))

__all__: list[str] = []
_ = TensorType
