"""``nn`` ops: activations and softmax, lowered to primitives by the tensor stage.

- ``relu(x) = max(x, 0)``
- ``gelu(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`` — the tanh approximation of
  Hendrycks & Gimpel, "Gaussian Error Linear Units" (2016), as used by GPT-2 and BERT
  implementations; this is accy's definition of ``gelu``.
- ``softmax(x, axis) = exp(x − max(x)) / Σ exp(x − max(x))`` along ``axis``.

Example::

    %1 = nn.softmax %0 {axis = -1} : (f32[16,32]) -> f32[16,32]
"""

from __future__ import annotations

import numpy as np

from accy.ir.ops.common import FLOATS, normalize_axis, require_dtype
from accy.ir.ops.registry import OpDef, register_op

GELU_C = float(np.sqrt(2.0 / np.pi))


def _gelu(x: np.ndarray) -> np.ndarray:
    c = x.dtype.type(GELU_C)
    return (x.dtype.type(0.5) * x * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x * x * x))))


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.size == 0:  # np.max has no identity; the result is empty too
        return x.copy()
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _float_unary(name: str):
    def infer(types, attrs):
        require_dtype(name, types[0], FLOATS)
        return [types[0]]

    return infer


def _softmax_infer(types, attrs):
    require_dtype("nn.softmax", types[0], FLOATS)
    if types[0].rank == 0:
        from accy.ir.ops.common import fail

        raise fail("nn.softmax", "operand must have rank >= 1, got a scalar")
    normalize_axis("nn.softmax", attrs["axis"], types[0].rank)
    return [types[0]]


register_op(OpDef("nn.relu", 1, _float_unary("nn.relu"),
                  lambda xs, a: [np.maximum(xs[0], xs[0].dtype.type(0))],
                  traits=frozenset({"pure", "elementwise"}), summary="max(x, 0)"))
register_op(OpDef("nn.gelu", 1, _float_unary("nn.gelu"), lambda xs, a: [_gelu(xs[0])],
                  traits=frozenset({"pure", "elementwise"}), summary="GELU, tanh approximation"))
register_op(OpDef("nn.softmax", 1, _softmax_infer,
                  lambda xs, a: [_softmax(xs[0], a["axis"]).astype(xs[0].dtype)],
                  optional_attrs={"axis": ("int", -1)}, summary="softmax along one axis"))

__all__ = ["GELU_C"]
