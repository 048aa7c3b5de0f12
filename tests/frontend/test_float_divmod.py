"""Float ``//``, ``%``, ``divmod`` and ``fmod`` are numpy's bit for bit (npy_divmod on an
exact fmod): ``floor(a / b)`` was one off where ``a / b`` rounds onto an integer."""

from __future__ import annotations

import accy
import numpy as np
import pytest

EDGE_A = [-4.5, 7.0, 1e17, -1e17, 0.0, -0.0, 1.0, -1.0, 5.5, -5.5, np.inf, -np.inf, np.nan,
          2.5, 1e-300, 6.0]
EDGE_B = [0.3, 0.1, 3.0, -3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 1e-300, 7.0]
OPS = {"floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
       "divmod": lambda a, b: divmod(a, b)[0], "fmod": lambda a, b: np.fmod(a, b)}


def _same(got, want):
    got = np.asarray(got)
    return ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got)
                                                                       & np.isnan(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(OPS))
def test_float_floor_division_and_remainder_are_numpys_bits(op, dtype):
    rng = np.random.default_rng(1)
    a = np.array([x for x in EDGE_A for _ in EDGE_B] + list(rng.standard_normal(300) * 100),
                 dtype)
    b = np.array([y for _ in EDGE_A for y in EDGE_B] + list(rng.standard_normal(300) * 3),
                 dtype)
    with np.errstate(all="ignore"):
        want = OPS[op](a, b)
    got = accy.jit(OPS[op], backend="cpu")(a, b)
    bad = np.flatnonzero(~_same(got, want))
    assert bad.size == 0, [(a[i], b[i], np.asarray(got)[i], want[i]) for i in bad[:5]]


def test_a_python_float_divisor_is_exact():
    x = np.array([7.0, -4.5, 0.7, 1e17], np.float64)
    assert _same(accy.jit(lambda v: v % 0.1)(x), x % 0.1).all()
    assert _same(accy.jit(lambda v: v // 0.3)(x), x // 0.3).all()
