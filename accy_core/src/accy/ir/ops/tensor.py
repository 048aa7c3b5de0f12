"""``tensor`` ops: constants and shape manipulation.

Examples::

    %0 = tensor.constant {value = dense<[1.0, 2.0]>} : () -> f32[2]
    %1 = tensor.broadcast_to %0 {shape = [3, 2]} : (f32[2]) -> f32[3,2]
    %2 = tensor.reshape %1 {shape = [6]} : (f32[3,2]) -> f32[6]
    %3 = tensor.transpose %1 {perm = [1, 0]} : (f32[3,2]) -> f32[2,3]
    %4 = tensor.iota {shape = [4, 3], dim = 1, dtype = i32} : () -> i32[4,3]
    %5 = tensor.slice %1 {start = [1, 0], limit = [3, 1]} : (f32[3,2]) -> f32[2,1]
    %6 = tensor.pad %1 {low = [1, 0], high = [0, 2], value = 0.0} : (f32[3,2]) -> f32[4,4]

``broadcast_to`` follows numpy's rules (axes aligned on the right; an extent of 1 stretches).
``reshape`` keeps the row-major element order. ``iota`` fills each element with its index
along ``dim``.
``slice`` keeps elements ``start[d] <= i < limit[d]`` of every axis (stride 1; the verifier
checks ``0 <= start <= limit <= extent`` per axis). ``pad`` adds ``low[d]`` elements before
and ``high[d]`` after axis ``d`` (both ``>= 0``), filled with ``value`` (converted to the
operand's dtype); kernels clamp the load index, so padding never reads out of bounds.
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
        raise fail(
            "tensor.broadcast_to", f"cannot broadcast {src} to lower rank shape {list(shape)}"
        )
    for s, d in zip(reversed(src.shape), reversed(shape), strict=False):
        if s != d and s != 1:
            raise fail(
                "tensor.broadcast_to",
                f"cannot broadcast {src} to shape {list(shape)}: extent {s} vs {d}",
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
        raise fail(
            "tensor.transpose", f"perm {list(perm)} is not a permutation of 0..{src.rank - 1}"
        )
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


def _per_axis(op: str, src: TensorType, attrs, names: tuple[str, str]) -> tuple[tuple, tuple]:
    a, b = (tuple(int(x) for x in attrs[n]) for n in names)
    for n, v in zip(names, (a, b), strict=True):
        if len(v) != src.rank:
            raise fail(op, f"{n} must have one entry per axis ({src.rank}), got {list(v)}")
    return a, b


def _slice_infer(types, attrs):
    src = types[0]
    start, limit = _per_axis("tensor.slice", src, attrs, ("start", "limit"))
    for d, (lo, hi, n) in enumerate(zip(start, limit, src.shape, strict=True)):
        if not 0 <= lo <= hi <= n:
            raise fail(
                "tensor.slice",
                f"axis {d}: expected 0 <= start <= limit <= {n}, "
                f"got start {lo}, limit {hi}; clamp the bounds to the extent",
            )
    return [src.with_shape(tuple(hi - lo for lo, hi in zip(start, limit, strict=True)))]


def _slice_ref(xs, attrs):
    idx = tuple(slice(lo, hi) for lo, hi in zip(attrs["start"], attrs["limit"], strict=True))
    return [xs[0][idx].copy()]


def _pad_infer(types, attrs):
    src = types[0]
    low, high = _per_axis("tensor.pad", src, attrs, ("low", "high"))
    if min(low + high, default=0) < 0:
        raise fail(
            "tensor.pad",
            f"low and high must be >= 0, got low {list(low)}, "
            f"high {list(high)}; use tensor.slice to crop",
        )
    return [src.with_shape(tuple(n + a + b for n, a, b in zip(src.shape, low, high, strict=True)))]


def _pad_ref(xs, attrs):
    x = xs[0]
    fill = np.array(attrs["value"]).astype(x.dtype)
    widths = list(zip(attrs["low"], attrs["high"], strict=True))
    return [np.pad(x, widths, mode="constant", constant_values=fill)]


register_op(
    OpDef(
        "tensor.constant",
        0,
        _constant_infer,
        lambda xs, a: [a["value"].copy()],
        attrs={"value": "dense"},
        optional_attrs={"slot": ("int", -1)},
        traits=frozenset({"pure", "constant"}),
        summary="a literal tensor",
    )
)
register_op(
    OpDef(
        "tensor.broadcast_to",
        1,
        _broadcast_infer,
        lambda xs, a: [np.broadcast_to(xs[0], tuple(a["shape"])).copy()],
        attrs={"shape": "ints"},
        summary="numpy-style broadcast to a shape",
    )
)
register_op(
    OpDef(
        "tensor.reshape",
        1,
        _reshape_infer,
        lambda xs, a: [xs[0].reshape(tuple(a["shape"])).copy()],
        attrs={"shape": "ints"},
        summary="row-major reshape",
    )
)
register_op(
    OpDef(
        "tensor.transpose",
        1,
        _transpose_infer,
        lambda xs, a: [np.transpose(xs[0], tuple(a["perm"])).copy()],  # keeps 0-d
        attrs={"perm": "ints"},
        summary="permute axes",
    )
)
register_op(
    OpDef(
        "tensor.iota",
        0,
        _iota_infer,
        _iota_ref,
        attrs={"shape": "ints", "dim": "int", "dtype": "dtype"},
        summary="index along one dimension",
    )
)

register_op(
    OpDef(
        "tensor.slice",
        1,
        _slice_infer,
        _slice_ref,
        attrs={"start": "ints", "limit": "ints"},
        summary="contiguous sub-block [start, limit) of every axis",
    )
)
register_op(
    OpDef(
        "tensor.pad",
        1,
        _pad_infer,
        _pad_ref,
        attrs={"low": "ints", "high": "ints", "value": "float"},
        summary="constant padding before (low) and after (high) every axis",
    )
)

__all__: list[str] = []
