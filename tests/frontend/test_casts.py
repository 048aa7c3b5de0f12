"""Float → int casts saturate (NaN → 0) identically on every backend.

On Vulkan every float → int cast failed to compile: LLVM's SPIR-V backend lowers
``llvm.fpto[su]i.sat`` to the Kernel-only ``SaturatedConversion`` decoration, which
spirv-val rejects; the generator now open-codes the saturation there.
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest

VALUES = [1.7, -1.7, 3e9, -3e9, np.nan, 2147483520.0, -0.5, 4.5e9, -np.inf, np.inf, 0.0]


def _saturating(x: np.ndarray, dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
    return np.clip(t, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("source", [np.float32, np.float64])
@pytest.mark.parametrize("target", [np.int32, np.uint32, np.int64])
def test_float_to_int_saturates(backend, source, target):
    x = np.array(VALUES, dtype=source)
    got = accy.jit(lambda v: v.astype(target), backend=backend)(x)
    expected = _saturating(x, target)
    if target is np.int64:  # 2**63 is not an f64 integer: clip lands one below it
        expected[np.isposinf(x)] = np.iinfo(np.int64).max
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == target


def test_cast_in_a_fused_expression(backend):
    x = np.linspace(-3, 3, 257, dtype=np.float32)
    got = accy.jit(lambda v: (v * 2).astype(anp.int32) + 1, backend=backend)(x)
    np.testing.assert_array_equal(got, (x * 2).astype(np.int32) + 1)
