"""The alternatives offered for numpy names accy lacks are relevant, and they work.

A real numpy name gets a hand-written alternative (spelling-alike names such as
``stack`` → ``take, subtract`` were noise); a misspelt name gets "did you mean". The main
alternatives are run here, so a hint that stops working fails a test.
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.frontend import UnsupportedFunctionError


def _message(name: str) -> str:
    with pytest.raises(UnsupportedFunctionError) as info:
        getattr(anp, name)
    return str(info.value)


def test_nonzero_explains_the_data_dependent_shape_not_spelling_alikes() -> None:
    msg = _message("nonzero")
    assert "result shape would depend on data" in msg and "where(cond, x, 0)" in msg
    assert "did you mean" not in msg


def test_allclose_points_at_isclose_all() -> None:
    assert "isclose(a, b).all()" in _message("allclose")


def test_fft_points_at_the_host() -> None:
    msg = _message("fft")
    assert "numpy.fft on the host" in msg and "did you mean" not in msg


def test_misspelt_name_gets_did_you_mean() -> None:
    msg = _message("sqrtt")
    assert "'sqrtt' is not supported" in msg and "did you mean anp.sqrt" in msg


def test_numpy_name_without_hint_gets_the_overview_only() -> None:
    msg = _message("lexsort")
    assert "supported alternatives: elementwise math" in msg and "did you mean" not in msg


def _ref(fn):
    return accy.jit(fn, backend="reference")


def test_the_offered_alternatives_compute_what_numpy_does() -> None:
    x = np.array([[1.5, -2.5, np.nan], [np.inf, 0.0, -0.5]], np.float32)
    np.testing.assert_array_equal(_ref(lambda a: a[::-1])(x), np.flip(x, 0))
    np.testing.assert_array_equal(_ref(lambda a: a[:, ::-1])(x), np.fliplr(x))
    np.testing.assert_array_equal(_ref(lambda a: a != a)(x), np.isnan(x))
    np.testing.assert_array_equal(_ref(lambda a: anp.abs(a) == anp.inf)(x), np.isinf(x))
    np.testing.assert_array_equal(_ref(lambda a: anp.abs(a) < anp.inf)(x), np.isfinite(x))
    y = np.array([1.5, -2.5, 3.0, -0.5], np.float32)

    def floor(a):
        t = a.astype(anp.int32).astype(anp.float32)
        return anp.where(t > a, t - 1, t)

    np.testing.assert_array_equal(_ref(floor)(y), np.floor(y))
    n, k, shift = 4, 3, 1
    np.testing.assert_array_equal(
        _ref(lambda a: anp.take(a, np.arange(n * k) // k, axis=0))(y), np.repeat(y, k))
    np.testing.assert_array_equal(
        _ref(lambda a: anp.take(a, (np.arange(n) - shift) % n, axis=0))(y), np.roll(y, shift))
    a, b = y, -y
    stacked = _ref(lambda p, q: anp.where(anp.arange(2)[:, None] == 0, p[None], q[None]))(a, b)
    np.testing.assert_array_equal(stacked, np.stack([a, b]))
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    tril = _ref(lambda t: anp.where(anp.arange(3)[:, None] >= anp.arange(3), t, 0))(m)
    np.testing.assert_array_equal(tril, np.tril(m))
    np.testing.assert_array_equal(_ref(lambda t: anp.sum(t * anp.eye(3), axis=1))(m), np.diag(m))
