"""Element types of tensor IR values."""

from __future__ import annotations

from enum import Enum

import numpy as np

from accy.errors import VerifyError, known_names

__all__ = ["DType"]


class DType(str, Enum):  # noqa: UP042 (StrEnum changes str() and format() of members)
    """Element type of a tensor. ``bool`` is one byte per element at the buffer boundary."""

    F32 = "f32"
    F64 = "f64"
    I32 = "i32"
    I64 = "i64"
    U32 = "u32"
    BOOL = "bool"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, name: str | DType | np.dtype | type) -> DType:
        """Return the DType named ``name`` ("f32", a numpy dtype, ...).

        Raises:
            VerifyError: unknown dtype name (the message lists the known ones).
        """
        if isinstance(name, DType):
            return name
        if isinstance(name, str) and name in _BY_NAME:
            return _BY_NAME[name]
        try:
            npd = None if name is None else np.dtype(name)  # np.dtype(None) would be float64
        except TypeError:
            npd = None
        if npd is not None and npd in _BY_NUMPY:
            return _BY_NUMPY[npd]
        raise VerifyError(f"unknown dtype {name!r}; {known_names(_BY_NAME)}")

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype used for host arrays of this element type."""
        return _NUMPY[self]

    @property
    def itemsize(self) -> int:
        """Bytes per element at the buffer boundary."""
        return self.numpy.itemsize

    @property
    def is_float(self) -> bool:
        return self in (DType.F32, DType.F64)

    @property
    def is_int(self) -> bool:
        return self in (DType.I32, DType.I64, DType.U32)

    @property
    def is_signed(self) -> bool:
        return self in (DType.I32, DType.I64, DType.F32, DType.F64)

    @property
    def is_bool(self) -> bool:
        return self is DType.BOOL


_NUMPY = {
    DType.F32: np.dtype(np.float32),
    DType.F64: np.dtype(np.float64),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.U32: np.dtype(np.uint32),
    DType.BOOL: np.dtype(np.bool_),
}
_BY_NAME = {d.value: d for d in DType}
_BY_NUMPY = {v: k for k, v in _NUMPY.items()}
