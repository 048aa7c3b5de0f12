"""``tensor`` ops: constants and shape manipulation.

Examples::

    %0 = tensor.constant {value = dense<[1.0, 2.0]>} : () -> f32[2]
    %1 = tensor.broadcast_to %0 {shape = [3, 2]} : (f32[2]) -> f32[3,2]
    %2 = tensor.reshape %1 {shape = [6]} : (f32[3,2]) -> f32[6]
    %3 = tensor.transpose %1 {perm = [1, 0]} : (f32[3,2]) -> f32[2,3]
    %4 = tensor.iota {shape = [4, 3], dim = 1, dtype = i32} : () -> i32[4,3]

``broadcast_to`` follows numpy's rules (axes aligned on the right; an extent of 1 stretches).
``reshape`` keeps the row-major element order. ``iota`` fills each element with its index
along ``dim``.
"""

from __future__ import annotations

import math

import numpy as np

from accy.ir.dtypes import DType
from accy.ir.ops.common import NUMERIC, fail, normalize_axis, require_dtype
from accy.ir.ops.registry import OpDef, register_op
from accy.ir.types import TensorType


def _constant_infer(types, attrs):
    v = attrs["value"]
    if not isinstance(v, np.ndarray):
        raise fail("tensor.constant", f"value must be a numpy array, got {type(v).__name__}")
    return [TensorType(DType.parse(v.dtype), v.shape)]


def _broadcast_infer(types, attrs):
    src, shape = types[0], tuple(attrs["shape"])
    if len(shape) < src.rank:
        raise fail("tensor.broadcast_to", f"cannot broadcast {src} to lower rank shape {list(shape)}")
    for s, d in zip(reversed(src.shape), reversed(shape), strict=False):
        if s != d and s != 1:
            raise fail(
                "tensor.broadcast_to", f"cannot broadcast {src} to shape {list(shape)}: extent {s} vs {d}"
            )
    return [src.with_shape(shape)]


def _reshape_infer(types, attrs):
    src, shape = types[0], tuple(attrs["shape"])
    if math.prod(shape) != src.num_elements:
        raise fail(
            "tensor.reshape",
            f"cannot reshape {src} ({src.num_elements} elements) to {list(shape)} "
            f"({math.prod(shape)} elements)",
        )
    return [src.with_shape(shape)]


def _transpose_infer(types, attrs):
    src, perm = types[0], tuple(attrs["perm"])
    if sorted(perm) != list(range(src.rank)):
        raise fail("tensor.transpose", f"perm {list(perm)} is not a permutation of 0..{src.rank - 1}")
    return [src.with_shape(tuple(src.shape[p] for p in perm))]


def _iota_infer(types, attrs):
    shape = tuple(attrs["shape"])
    normalize_axis("tensor.iota", attrs["dim"], len(shape))
    dtype = DType.parse(attrs["dtype"])
    require_dtype("tensor.iota", TensorType(dtype, ()), NUMERIC, "result")
    return [TensorType(dtype, shape)]


def _iota_ref(xs, attrs):
    shape = tuple(attrs["shape"])
    dim = normalize_axis("tensor.iota", attrs["dim"], len(shape))
    dtype = DType.parse(attrs["dtype"]).numpy
    idx = np.arange(shape[dim], dtype=dtype).reshape(
        [shape[dim] if i == dim else 1 for i in range(len(shape))]
    )
    return [np.broadcast_to(idx, shape).copy()]


register_op(OpDef("tensor.constant", 0, _constant_infer, lambda xs, a: [a["value"].copy()],
                  attrs={"value": "dense"}, optional_attrs={"slot": ("int", -1)},
                  traits=frozenset({"pure", "constant"}),
                  summary="a literal tensor"))
register_op(OpDef("tensor.broadcast_to", 1, _broadcast_infer,
                  lambda xs, a: [np.broadcast_to(xs[0], tuple(a["shape"])).copy()],
                  attrs={"shape": "ints"}, summary="numpy-style broadcast to a shape"))
register_op(OpDef("tensor.reshape", 1, _reshape_infer,
                  lambda xs, a: [xs[0].reshape(tuple(a["shape"])).copy()],
                  attrs={"shape": "ints"}, summary="row-major reshape"))
register_op(OpDef("tensor.transpose", 1, _transpose_infer,
                  lambda xs, a: [np.transpose(xs[0], tuple(a["perm"])).copy()],  # keeps 0-d
                  attrs={"perm": "ints"}, summary="permute axes"))
register_op(OpDef("tensor.iota", 0, _iota_infer, _iota_ref,
                  attrs={"shape": "ints", "dim": "int", "dtype": "dtype"},
                  summary="index along one dimension"))

__all__: list[str] = []
