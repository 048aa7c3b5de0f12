"""``tensor`` ops with offsets computed at run time (loop bodies index with the induction
variable).

Examples::

    %w = tensor.dynamic_slice %x, %i, %j {sizes = [1, 8]} : (f32[16,8], i32[], i32[]) -> f32[1,8]
    %y = tensor.dynamic_update_slice %x, %w, %i, %j : (f32[16,8], f32[1,8], i32[], i32[])
        -> f32[16,8]

Operands: the tensor, (for the update: the window of new values,) then one ``i32[]``
offset per axis. As in XLA and JAX, each offset is clamped so that the window lies inside
the tensor: ``start[d] = clamp(offset[d], 0, extent[d] - size[d])``; indexing never reads or
writes out of bounds, and an out-of-range offset moves the window instead of failing.
``dynamic_slice`` has shape ``sizes`` (each ``0 <= size <= extent``); ``dynamic_update_slice``
has the tensor's type and equals it outside the window.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accy.ir.dtypes import DType
from accy.ir.ops.common import fail
from accy.ir.ops.registry import OpDef, register_op
from accy.ir.types import TensorType

__all__ = ["clamped_starts"]


def _check_offsets(op: str, src: TensorType, offsets: Sequence[TensorType]) -> None:
    if len(offsets) != src.rank:
        raise fail(op, f"expected {src.rank} offsets (one per axis of {src}), got {len(offsets)}")
    for k, t in enumerate(offsets):
        if t.shape != () or t.dtype != DType.I32:
            raise fail(op, f"offset #{k} must be i32[], got {t}")


def _slice_infer(types, attrs):
    op = "tensor.dynamic_slice"
    if not types:
        raise fail(op, "expected a tensor operand")
    src, sizes = types[0], tuple(attrs["sizes"])
    _check_offsets(op, src, types[1:])
    if len(sizes) != src.rank or any(not 0 <= s <= e for s, e in zip(sizes, src.shape,
                                                                      strict=True)):
        raise fail(op, f"sizes {list(sizes)} must give 0 <= size <= extent for each axis of "
                       f"{src}")
    return [src.with_shape(sizes)]


def _update_infer(types, attrs):
    op = "tensor.dynamic_update_slice"
    if len(types) < 2:
        raise fail(op, "expected a tensor and an update operand")
    src, upd = types[0], types[1]
    _check_offsets(op, src, types[2:])
    if upd.dtype != src.dtype or upd.rank != src.rank or any(
            u > e for u, e in zip(upd.shape, src.shape, strict=True)):
        raise fail(op, f"update {upd} must have the dtype and rank of {src} and fit inside it")
    return [src]


def clamped_starts(shape: Sequence[int], sizes: Sequence[int], offsets: Sequence[int]
                   ) -> list[int]:
    """Window starts after XLA's clamping (see the module docstring)."""
    return [min(max(int(o), 0), e - s) for o, e, s in zip(offsets, shape, sizes, strict=True)]


def _slice_ref(xs, attrs):
    x, sizes = xs[0], attrs["sizes"]
    starts = clamped_starts(x.shape, sizes, [np.asarray(o) for o in xs[1:]])
    return [np.ascontiguousarray(x[tuple(slice(a, a + s) for a, s in
                                         zip(starts, sizes, strict=True))])]


def _update_ref(xs, attrs):
    x, upd = xs[0], xs[1]
    starts = clamped_starts(x.shape, upd.shape, [np.asarray(o) for o in xs[2:]])
    out = x.copy()
    out[tuple(slice(a, a + s) for a, s in zip(starts, upd.shape, strict=True))] = upd
    return [out]


register_op(OpDef("tensor.dynamic_slice", None, _slice_infer, _slice_ref,
                  attrs={"sizes": "ints"},
                  summary="window of static size at run-time offsets (clamped)"))
register_op(OpDef("tensor.dynamic_update_slice", None, _update_infer, _update_ref,
                  summary="tensor with a window at run-time offsets replaced (clamped)"))
