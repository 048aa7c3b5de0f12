"""Shared inference helpers for op declarations."""

from __future__ import annotations

from collections.abc import Sequence

from accy.errors import VerifyError
from accy.ir.dtypes import INTS, DType
from accy.ir.types import TensorType

FLOATS = (DType.F32, DType.F64)
NUMERIC = (DType.F32, DType.F64, *INTS)
BITWISE = (DType.BOOL, *INTS)
SIGNED = (DType.F32, DType.F64, DType.I8, DType.I16, DType.I32, DType.I64)


def fail(op: str, message: str) -> VerifyError:
    return VerifyError(f"'{op}' op: {message}", op=op)


def same_type(op: str, types: Sequence[TensorType]) -> TensorType:
    """All operand types must be equal; return that type."""
    first = types[0]
    for i, t in enumerate(types[1:], start=1):
        if t.shape != first.shape:
            raise fail(
                op,
                f"operand shapes must match, got {first} and {t} (operand #{i}); "
                "use broadcast_to to make them equal",
            )
        if t.dtype != first.dtype:
            raise fail(
                op, f"operand dtypes must match, got {first.dtype} and {t.dtype}; cast one first"
            )
    return first


def require_dtype(op: str, t: TensorType, allowed: Sequence[DType], what: str = "operand") -> None:
    if t.dtype not in allowed:
        names = " or ".join(d.value for d in allowed)
        raise fail(op, f"{what} dtype must be {names}, got {t.dtype}")


def normalize_axes(op: str, axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """Map negative axes to positive ones; reject out-of-range or repeated axes."""
    out = []
    for a in axes:
        b = a + rank if a < 0 else a
        if not 0 <= b < rank:
            raise fail(op, f"axis {a} is out of range for rank {rank}")
        if b in out:
            raise fail(op, f"axis {a} is repeated")
        out.append(b)
    return tuple(out)


def normalize_axis(op: str, axis: int, rank: int) -> int:
    return normalize_axes(op, (axis,), rank)[0]
