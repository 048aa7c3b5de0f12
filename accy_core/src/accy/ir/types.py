"""Tensor types: an element type and a static shape."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from accy.errors import VerifyError
from accy.ir.dtypes import DType

__all__ = ["TensorType"]


@dataclass(frozen=True, slots=True)
class TensorType:
    """A ranked tensor type with a static shape, printed ``f32[2,3]`` (a scalar is ``f32[]``).

    Attributes:
        dtype: element type.
        shape: extent of each axis in elements; every extent is >= 0.
    """

    dtype: DType
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", DType.parse(self.dtype))
        try:
            shape = tuple(operator.index(s) for s in self.shape)  # 2.5 or "4": refused, not cut
        except (TypeError, ValueError) as e:
            raise VerifyError(f"tensor shape must be a tuple of ints, got {self.shape!r}") from e
        if any(s < 0 for s in shape):
            raise VerifyError(f"tensor shape extents must be >= 0, got {shape}")
        object.__setattr__(self, "shape", shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_elements(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Size of a dense buffer holding this tensor, in bytes."""
        return self.num_elements * self.dtype.itemsize

    def with_shape(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(self.dtype, tuple(shape))

    def with_dtype(self, dtype: DType | str) -> TensorType:
        return TensorType(DType.parse(dtype), self.shape)

    def __str__(self) -> str:
        return f"{self.dtype.value}[{','.join(str(s) for s in self.shape)}]"
