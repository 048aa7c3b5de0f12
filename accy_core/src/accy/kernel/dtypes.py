"""Kernel IR dtypes: the names, their classes, element sizes and numpy types.

Split from :mod:`accy.kernel.ir` so that what only moves buffers (a backend packing launch
arguments, a warm-cache load) imports these tables and not the IR's ~40 record classes.
"""

from __future__ import annotations

import numpy as np

from accy.errors import VerifyError

__all__ = ["DTYPES", "FLOAT_DTYPES", "INT_DTYPES", "NUMPY_DTYPES", "UNSIGNED_DTYPES",
           "dtype_bytes"]

DTYPES = ("f32", "f64", "i32", "i64", "u32", "bool", "i8", "i16", "u8", "u16", "u64")
FLOAT_DTYPES = frozenset({"f32", "f64"})
UNSIGNED_DTYPES = frozenset({"u8", "u16", "u32", "u64"})
INT_DTYPES = frozenset({"i8", "i16", "i32", "i64"}) | UNSIGNED_DTYPES
_BYTES = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "u32": 4, "bool": 1, "i8": 1, "i16": 2,
          "u8": 1, "u16": 2, "u64": 8}

#: kernel dtype → numpy scalar type of one buffer element (bool: one byte, 0 or 1).
NUMPY_DTYPES: dict[str, type] = {
    "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
    "u32": np.uint32, "bool": np.bool_, "i8": np.int8, "i16": np.int16, "u8": np.uint8,
    "u16": np.uint16, "u64": np.uint64,
}


def dtype_bytes(dtype: str) -> int:
    """Return the size in bytes of one buffer element of ``dtype`` (bool → 1).

    Raises:
        VerifyError: ``dtype`` is not one of :data:`DTYPES`.
    """
    try:
        return _BYTES[dtype]
    except KeyError:
        raise VerifyError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPES)}") from None
