"""Reduction axes and accumulator dtypes shared by ``accy.numpy``'s reductions and scans.

``_axes`` normalizes numpy's ``axis=`` (None, an int, a tuple or list of ints) against a rank
and raises :class:`~accy.errors.VerifyError` naming the user's line for anything else.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.frontend.trace import user_location
from accy.ir import DType

__all__ = ["_axes", "reduced_shape", "sum_dtype"]


def _axes(axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)):
        axes: tuple[Any, ...] = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        axes = (axis,)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)):
            raise VerifyError(f"axis {a!r} at {user_location()} is not an integer; pass an int, "
                              "a tuple of ints or None")
        if not -rank <= int(a) < rank:
            raise VerifyError(
                f"axis {a} at {user_location()} is out of range for an array of rank {rank}; "
                f"use an axis in [{-rank}, {rank - 1}]"
            )
        out.append(int(a) % rank)
    return tuple(out)


def sum_dtype(dt: DType) -> DType:
    """The dtype ``sum``/``cumsum`` accumulate ``dt`` in: numpy's for 8- and 16-bit integers
    (int8/int16 → int64, uint8/uint16 → uint64), i32 for bool, ``dt`` itself otherwise
    (accy keeps i32/u32 sums in their dtype, unlike numpy's platform integer)."""
    if dt == DType.BOOL:
        return DType.I32
    if dt.is_int and dt.bits < 32:
        return DType.U64 if dt.is_unsigned else DType.I64
    return dt


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...],
                  keepdims: bool) -> tuple[int, ...]:
    """The shape a reduction of ``shape`` over (normalized) ``axes`` returns."""
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)
