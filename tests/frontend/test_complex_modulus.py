"""``abs(z) <= radius`` on a complex array compares the squared modulus
(``accy.frontend.modulus_compare.modulus_compare``): no hypot in the IR, numpy's answer
including NaN and infinite parts, and the ordinary hypot where the pattern does not hold."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest

RNG = np.random.default_rng(9)


def _z(dtype=np.complex128):
    z = (RNG.uniform(-3, 3, 64) + 1j * RNG.uniform(-3, 3, 64)).astype(dtype)
    z[:6] = [complex(np.nan, 1.0), complex(np.inf, np.nan), complex(1.0, -np.inf),
             complex(np.nan, np.nan), 2.0, complex(0.0, -2.0)]
    return z


def _compares(z):
    a = anp.abs(z) if not isinstance(z, np.ndarray) else np.abs(z)
    return (a <= 2.0, a < 2.5, a > 2.0, a >= 1.5, 2.0 > a, 1.0 <= a)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_radius_compares_use_squared_modulus(dtype):
    z = _z(dtype)
    f = accy.jit(_compares)
    text = f.compile(z).stage_text("tensor")  # after dce: the unused hypot is gone
    assert "math.sqrt" not in text and "arith.div" not in text
    for got, want in zip(f(z), _compares(z), strict=True):
        np.testing.assert_array_equal(got, want)


def test_escape_time_loop_equals_numpy():
    def mandel(np_, c, n):
        z = np_.zeros_like(c)
        count = np_.zeros(c.shape, dtype=np.int32)
        for _ in range(n):
            mask = np_.abs(z) <= 2.0
            z = np_.where(mask, z * z + c, z)
            count += mask
        return count

    c = (np.linspace(-2, 1, 24)[None, :] + 1j * np.linspace(-1.2, 1.2, 16)[:, None])
    f = accy.jit(lambda c: mandel(anp, c, 12))
    assert "math.sqrt" not in f.compile(c).stage_text("tensor")
    np.testing.assert_array_equal(f(c), mandel(np, c, 12))


def test_other_uses_keep_the_hypot():
    z = _z()

    def f(z):
        a = anp.abs(z)
        b = anp.abs(z)
        b[0] = 9.0  # written since: compares the written array
        return a <= 0.0, a < 1e300, b > 2.0, a + 1.0

    def ref(z):
        a = np.abs(z)
        b = a.copy()
        b[0] = 9.0
        return a <= 0.0, a < 1e300, b > 2.0, a + 1.0

    jf = accy.jit(f)
    assert "math.sqrt" in jf.compile(z).stage_text("tensor")
    got, want = jf(z), ref(z)
    for g, w in zip(got[:3], want[:3], strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-15)  # the scaled hypot: <= 1 ulp
