"""Tolerances per dtype and the comparison every backend test uses.

Float results are compared with ``numpy.testing.assert_allclose`` at the tolerance of their
dtype (f32: rtol 1e-4, atol 1e-5; f64: rtol 1e-10, atol 1e-12); integer and bool results
must be exactly equal. NaNs must sit at the same positions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TOLERANCES", "assert_close", "tolerance"]

#: dtype name → (rtol, atol)
TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-10, 1e-12),
}


def tolerance(dtype: np.dtype | str) -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype``; (0, 0) for exact dtypes."""
    return TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def assert_close(
    actual: np.ndarray, expected: np.ndarray, scale: float = 1.0, what: str = ""
) -> None:
    """Assert ``actual`` matches ``expected`` in dtype, shape and value (see module doc).

    Args:
        scale: multiplies both tolerances (for long reductions).
        what: prefix for the failure message.
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    rtol, atol = tolerance(actual.dtype)
    if rtol == 0:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        np.testing.assert_allclose(
            actual, expected, rtol=rtol * scale, atol=atol * scale, equal_nan=True, err_msg=what
        )
