"""``math`` ops: elementwise transcendental functions on f32/f64 tensors.

Example::

    %1 = math.exp %0 : (f32[8]) -> f32[8]

``sigmoid(x) = 1 / (1 + exp(-x))``; ``rsqrt(x) = 1 / sqrt(x)``.
"""

from __future__ import annotations

import numpy as np

from accy.ir.ops.common import FLOATS, require_dtype
from accy.ir.ops.registry import OpDef, register_op


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


_FUNCS = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "sigmoid": _sigmoid,
}


def _def(name: str, fn) -> OpDef:
    full = f"math.{name}"

    def infer(types, attrs):
        require_dtype(full, types[0], FLOATS)
        return [types[0]]

    def ref(xs, attrs):
        with np.errstate(all="ignore"):
            return [np.asarray(fn(xs[0])).astype(xs[0].dtype)]

    return OpDef(full, 1, infer, ref, traits=frozenset({"pure", "elementwise", "transcendental"}),
                 summary=f"elementwise {name} (f32, f64)")


for _n, _f in _FUNCS.items():
    register_op(_def(_n, _f))

__all__: list[str] = []
