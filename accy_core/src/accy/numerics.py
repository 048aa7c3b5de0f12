"""Numeric conventions every backend shares, as numpy reference functions.

Float → integer conversion (``arith.cast``, ``astype``, the kernel DSL's ``.cast``)
truncates toward zero like numpy for every value the integer type can hold. For the rest
numpy's answer depends on the machine (x86 gives ``INT_MIN`` for NaN, ±inf and overflow,
ARM saturates), so accy defines one result on every backend (``docs/numerics.md``):

- NaN → 0;
- values above the type's maximum (``+inf`` included) → the maximum;
- values below the type's minimum (``-inf`` included) → the minimum (0 for ``u32``).

This is LLVM's ``fptosi.sat``/``fptoui.sat``, Rust's ``as`` and XLA's convert. The code
generator lowers it with compares and selects around a plain conversion (SPIR-V for Vulkan
has no saturating conversion); the tensor IR reference and the kernel IR interpreter use
:func:`saturating_cast`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["COMPARE", "saturating_cast"]

#: the comparisons by their op name in both IRs (tensor IR ``arith.eq`` ..., kernel IR
#: ``Binary`` compares), as the numpy functions the tensor IR reference and the kernel IR
#: interpreter evaluate them with (bool results)
COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def saturating_cast(x: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """Convert ``x`` to ``dtype`` with accy's float → integer convention.

    Args:
        x: any numpy array.
        dtype: the result dtype. Only a float ``x`` with an integer ``dtype`` (not bool)
            differs from ``x.astype(dtype)``.

    Returns:
        a new array of ``dtype`` and ``x``'s shape: truncated toward zero, NaN → 0,
        out-of-range values (±inf included) → the nearest of the type's minimum/maximum.
    """
    target = np.dtype(dtype)
    x = np.asarray(x)
    if x.dtype.kind != "f" or target.kind not in "iu":
        with np.errstate(all="ignore"):
            return x.astype(target)
    info = np.iinfo(target)
    wide = x.astype(np.float64)
    # float64(info.max) rounds up to 2**bits (i64) or is exact (i32, u32): compare against
    # the exclusive upper bound 2**bits instead, which is exactly representable
    high = float(2 ** (info.bits - (1 if info.min < 0 else 0)))
    low = float(info.min)
    inside = (wide >= low) & (wide < high)  # False for NaN
    out = np.where(inside, wide, 0.0).astype(target)
    out = np.where(wide >= high, info.max, out)
    out = np.where(wide < low, info.min, out)
    return out.astype(target)
