"""Host-side input checks shared by the families; all run before any kernel is launched.

Every helper raises an accy error whose message names the argument, what was expected and
what was given, and how to fix it.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.errors import InputError, UnsupportedError

__all__ = [
    "IndexOutOfRangeError",
    "as_array",
    "check_dtype",
    "check_indices",
    "check_mode",
    "kernel_dtype",
    "normalize_axis",
]

_KERNEL_DTYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint32): "u32",
    np.dtype(np.bool_): "bool",
}


class IndexOutOfRangeError(InputError, IndexError):
    """An index is outside ``[-n, n)`` in ``mode="raise"``; checked before any launch.

    Attributes:
        position: position of the first bad index in the (flattened) index array.
        index: the bad index value.
        bound: the axis length ``n``.
    """

    def __init__(self, message: str, position: int = -1, index: int = 0, bound: int = 0):
        super().__init__(message)
        self.position = position
        self.index = index
        self.bound = bound

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.position, self.index, self.bound))


def as_array(value: Any, what: str) -> np.ndarray:
    """Return ``value`` as a numpy array (no copy when it already is one).

    Raises:
        InputError: ``value`` cannot be converted (objects, ragged lists).
    """
    if isinstance(value, np.ndarray):
        return _native(value)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what}: expected an array, got {type(value).__name__}: {e}") from e
    if arr.dtype == object:
        raise InputError(f"{what}: expected a numeric array, got objects; pass a numpy array")
    return _native(arr)


def _native(arr: np.ndarray) -> np.ndarray:
    """``arr`` in native byte order (a byte-swapped ``>f4`` array holds the same values as
    ``float32``; kernels read native words, so it is converted, as numpy would)."""
    if arr.dtype.byteorder not in "=|" and arr.dtype.isnative is False:
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def kernel_dtype(dtype: Any) -> str | None:
    """Return the kernel dtype name of a numpy dtype (``float32`` → ``"f32"``) or None."""
    return _KERNEL_DTYPES.get(np.dtype(dtype))


def check_dtype(arr: np.ndarray, what: str, supported: Sequence[str], family: str) -> str:
    """Return ``arr``'s kernel dtype, or raise when ``family`` does not support it.

    Raises:
        UnsupportedError: the dtype is complex, object, or not in ``supported``; the message
            names the dtype and lists the supported ones.
    """
    name = kernel_dtype(arr.dtype)
    if name is None or name not in supported:
        hint = "; complex values are not supported" if arr.dtype.kind == "c" else ""
        raise UnsupportedError(
            f"{family}: {what} dtype must be one of {', '.join(supported)}, "
            f"got {arr.dtype}{hint}; convert with .astype(...)",
            feature=f"dtype {arr.dtype}",
        )
    return name


def check_mode(mode: str, family: str, allowed: Sequence[str] = ("raise", "clip", "wrap")) -> str:
    """Return ``mode`` when it is one of ``allowed``.

    Raises:
        InputError: unknown mode (the message lists the allowed ones).
    """
    if mode not in allowed:
        raise InputError(f"{family}: mode must be one of {', '.join(allowed)}, got {mode!r}")
    return mode


def normalize_axis(axis: int, ndim: int, family: str) -> int:
    """Return ``axis`` in ``[0, ndim)`` (negative counts from the end).

    Raises:
        InputError: axis out of range for an array of ``ndim`` dimensions.
    """
    if isinstance(axis, (bool, np.bool_)):
        raise InputError(f"{family}: axis must be an integer, got {axis!r}")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise InputError(f"{family}: axis must be an integer, got {type(axis).__name__} "
                         f"{axis!r}") from None
    if not -ndim <= axis < ndim:
        raise InputError(f"{family}: axis {axis} is out of range for an array with "
                         f"{ndim} dimension(s)")
    return axis % ndim


_RANGE_BLOCK = 1 << 16


def _in_range(flat: np.ndarray, bound: int) -> bool:
    """Whether every index is in ``[-bound, bound)``: min and max per cache-sized block (one
    pass over memory, no temporaries; the slow masked search runs only on failure)."""
    lo, hi = -bound, bound - 1
    for start in range(0, flat.size, _RANGE_BLOCK):
        block = flat[start:start + _RANGE_BLOCK]
        if int(block.min()) < lo or int(block.max()) > hi:
            return False
    return True


def check_indices(indices: np.ndarray, bound: int, family: str, mode: str = "raise", *,
                  check_range: bool = True) -> str:
    """Check an index array's dtype, and its range when ``mode == "raise"``.

    Negative indices count from the end as in numpy (``-bound <= i < bound`` is valid).
    ``check_range=False`` skips the range pass over the indices (a family whose kernel
    checks the range itself, and calls this again to name the first bad index).

    Returns:
        the kernel dtype of the indices (``"i32"`` or ``"i64"``).

    Raises:
        UnsupportedError: indices are not integers (or are unsigned 64-bit).
        IndexOutOfRangeError: ``mode="raise"`` and an index is out of range; the message
            names the first bad position, its value and the valid range.
        InputError: ``mode`` is ``clip``/``wrap`` but the axis is empty while indices exist.
    """
    if indices.dtype.kind not in "iu" or indices.dtype == np.uint64:
        raise UnsupportedError(
            f"{family}: index dtype must be int32 or int64, got {indices.dtype}; "
            f"cast the indices first", feature=f"index dtype {indices.dtype}")
    dt = "i32" if indices.dtype.itemsize <= 4 and indices.dtype != np.uint32 else "i64"
    if indices.size == 0:
        return dt
    if bound == 0:
        raise IndexOutOfRangeError(
            f"{family}: cannot take indices from an empty axis (length 0); "
            f"{indices.size} index(es) given", 0, int(indices.reshape(-1)[0]), 0)
    if mode == "raise" and check_range:
        flat = indices.reshape(-1)
        if _in_range(flat, bound):
            return dt
        bad = (flat < -bound) | (flat >= bound)
        if bad.any():
            pos = int(np.argmax(bad))
            raise IndexOutOfRangeError(
                f"{family}: index {int(flat[pos])} at position {pos} is out of range for an "
                f"axis of length {bound} (valid: {-bound} to {bound - 1}); use mode='clip' "
                f"or 'wrap', or fix the indices", pos, int(flat[pos]), bound)
    return dt
