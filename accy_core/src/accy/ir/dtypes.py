"""Element types of tensor IR values."""

from __future__ import annotations

from enum import Enum

import numpy as np

from accy.errors import VerifyError, known_names

__all__ = ["INTS", "DType"]


class DType(str, Enum):  # noqa: UP042 (StrEnum changes str() and format() of members)
    """Element type of a tensor. ``bool`` is one byte per element at the buffer boundary."""

    F32 = "f32"
    F64 = "f64"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
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
        """Any integer dtype, signed or unsigned (not bool)."""
        return self.numpy.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        """u8, u16, u32, u64."""
        return self.numpy.kind == "u"

    @property
    def is_signed(self) -> bool:
        return self.numpy.kind in "if"

    @property
    def bits(self) -> int:
        """Bits per element (bool: 8, as stored)."""
        return 8 * self.itemsize

    @property
    def is_bool(self) -> bool:
        return self is DType.BOOL


_NUMPY = {
    DType.F32: np.dtype(np.float32),
    DType.F64: np.dtype(np.float64),
    DType.I8: np.dtype(np.int8),
    DType.I16: np.dtype(np.int16),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.U8: np.dtype(np.uint8),
    DType.U16: np.dtype(np.uint16),
    DType.U32: np.dtype(np.uint32),
    DType.U64: np.dtype(np.uint64),
    DType.BOOL: np.dtype(np.bool_),
}
_BY_NAME = {d.value: d for d in DType}
_BY_NUMPY = {v: k for k, v in _NUMPY.items()}
#: every integer dtype, narrow to wide, signed first
INTS = (DType.I8, DType.I16, DType.I32, DType.I64, DType.U8, DType.U16, DType.U32, DType.U64)
