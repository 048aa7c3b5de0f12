"""The small-call fast path of jitted functions that write into their arguments
(:mod:`accy.frontend.write_back`): a warm call runs without the ordinary path and writes
the caller's arrays, and every call the fast path must not take (read-only, aliased,
overlapping, non-contiguous arguments, another signature) falls back with numpy's values
or the documented error."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import InputError
from accy.testing import assert_close

N = 40


def jacobi(a, b):
    """Three jacobi-1d steps in place; the same code runs under numpy."""
    for _ in range(3):
        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0


def bump(a, b):
    """Writes ``a`` and returns a value read from both."""
    a += 1.0
    return a * 2.0 + b


def _inputs(n: int = N, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.random(n).astype(dtype), rng.random(n).astype(dtype)


def _no_ordinary_path(f: accy.jit) -> None:
    """Make any call that leaves the fast path fail loudly."""
    def boom(*args):
        raise AssertionError("the ordinary path ran")

    f._run = boom


def test_warm_in_place_call_takes_the_fast_path_and_writes_the_arguments() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    wa, wb = a.copy(), b.copy()
    f(a, b)  # traced, compiled, run on the ordinary path
    jacobi(wa, wb)
    _no_ordinary_path(f)
    for _ in range(3):  # each call starts from the previous call's written values
        assert f(a, b) is None
        jacobi(wa, wb)
        assert_close(a, wa)
        assert_close(b, wb)


def test_fast_call_returns_the_results_and_writes_back() -> None:
    f = accy.jit(bump)
    a, b = _inputs()
    wa = a.copy()
    f(a, b)
    bump(wa, b)
    _no_ordinary_path(f)
    got = f(a, b)
    want = bump(wa, b)
    assert_close(got, want)
    assert_close(a, wa)
    assert not np.shares_memory(got, a)


def test_read_only_written_argument_after_warm_calls_is_refused() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    f(a, b)
    f(a, b)
    ro, before = a.copy(), a.copy()
    ro.setflags(write=False)
    with pytest.raises(InputError, match="argument #0"):
        f(ro, b)
    np.testing.assert_array_equal(ro, before)


def test_same_array_twice_after_warm_calls_gives_numpys_answer() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    f(a, b)
    f(a, b)
    c = a.copy()
    want = c.copy()
    f(c, c)
    jacobi(want, want)
    assert_close(c, want)
    f(a, b)  # and the distinct arrays again, after the aliased call
    wa, wb = a.copy(), b.copy()
    f(a, b)
    jacobi(wa, wb)
    assert_close(a, wa)
    assert_close(b, wb)


def test_overlapping_views_after_warm_calls_are_refused_before_anything_runs() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    f(a, b)
    f(a, b)
    base = np.linspace(0.0, 1.0, N + 1, dtype=np.float32)
    before = base.copy()
    with pytest.raises(InputError, match="share memory"):
        f(base[1:], base[:-1])  # contiguous views of the signature's shape: fast-shaped
    np.testing.assert_array_equal(base, before)


def test_non_contiguous_arguments_after_warm_calls_fall_back() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    f(a, b)
    f(a, b)
    big_a, big_b = _inputs(2 * N)
    wa, wb = big_a.copy(), big_b.copy()
    f(big_a[::2], big_b[1::2])
    jacobi(wa[::2], wb[1::2])
    assert_close(big_a, wa)  # the strided views were written, their gaps left alone
    assert_close(big_b, wb)


def test_a_contiguous_view_is_written_through_to_its_base() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    f(a, b)
    big, other = _inputs(N + 8)
    want, want_b = big.copy(), other[:N].copy()
    f(big[4:4 + N], other[:N])
    jacobi(want[4:4 + N], want_b)
    assert_close(big, want)
    assert_close(other[:N], want_b)


def test_two_signatures_alternate_on_the_fast_path() -> None:
    f = accy.jit(jacobi)
    pairs = [_inputs(N), _inputs(N + 3, np.float64)]
    wants = [(a.copy(), b.copy()) for a, b in pairs]
    for (a, b), (wa, wb) in zip(pairs, wants, strict=True):
        f(a, b)
        jacobi(wa, wb)
    _no_ordinary_path(f)
    for _ in range(2):
        for (a, b), (wa, wb) in zip(pairs, wants, strict=True):
            f(a, b)
            jacobi(wa, wb)
            assert_close(a, wa)
            assert_close(b, wb)
    assert f.cache_size == 2


def test_a_python_number_argument_keeps_the_fast_path_per_value() -> None:
    """``f(a, b, steps)``: the number is static (one signature per value); warm calls with
    it take the fast path, another value or type traces its own signature."""
    def steps(a, b, n):
        for _ in range(n):
            b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
            a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0

    f = accy.jit(steps)
    a, b = _inputs()
    wa, wb = a.copy(), b.copy()
    for n in (2, 3):
        f(a, b, n)
        steps(wa, wb, n)
    _no_ordinary_path(f)
    for n in (2, 3, 3, 2):
        f(a, b, n)
        steps(wa, wb, n)
        assert_close(a, wa)
        assert_close(b, wb)
    with pytest.raises(AssertionError, match="ordinary path"):
        f(a, b, 4)  # a new value: a new signature, on the ordinary path
    assert f.cache_size == 3


def test_a_float_argument_tells_zero_from_minus_zero_on_the_fast_path() -> None:
    f = accy.jit(lambda x, s: x * s)
    x = np.ones(4, np.float32)
    assert np.signbit(f(x, -0.0)).all() and np.signbit(f(x, -0.0)).all()
    assert not np.signbit(f(x, 0.0)).any()
    assert np.signbit(f(x, -0.0)).all()
    assert_close(f(x, 1), np.ones(4, np.float32))  # an int: its own signature


def test_a_huge_int_argument_is_keyed_by_value() -> None:
    f = accy.jit(lambda x, n: x + (n % 7))
    x = np.zeros(3)
    big = 10**5000  # past Python's int-to-str limit: no repr in the key
    assert_close(f(x, big), x + big % 7)
    assert_close(f(x, big), x + big % 7)
    assert_close(f(x, big + 1), x + (big + 1) % 7)


def test_warm_calls_after_the_executable_was_closed_still_write_back() -> None:
    f = accy.jit(jacobi)
    a, b = _inputs()
    wa, wb = a.copy(), b.copy()
    for _ in range(2):
        f(a, b)
        jacobi(wa, wb)
    f.compile(a, b).close()  # the fast function refuses from now on: rebuilt or ordinary
    for _ in range(2):
        f(a, b)
        jacobi(wa, wb)
        assert_close(a, wa)
        assert_close(b, wb)
