"""Second bug hunt: numpy semantics of anp.take / anp.sort defaults, bad index and seed
types in traced code."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import AccyError, InputError, UnsupportedError

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_take_default_axis_flattens_like_numpy():
    """anp.take(x, i) used to index axis 0: rows instead of flat elements, silently."""
    idx = np.array([1, 2], np.int32)
    got = accy.jit(lambda a, i: anp.take(a, i), backend="cpu")(X, idx)
    assert np.array_equal(got, np.take(X, idx))
    got = accy.jit(lambda a: anp.take(a, np.array([11, -1])), backend="cpu")(X)
    assert np.array_equal(got, np.take(X, [11, -1]))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_modes(mode):
    idx = np.array([10, -10, 2], np.int32)
    traced = accy.jit(lambda a, i: anp.take(a, i, axis=1, mode=mode), backend="cpu")(X, idx)
    static = accy.jit(lambda a: anp.take(a, np.array([10, -10, 2]), axis=1, mode=mode),
                      backend="cpu")(X)
    want = np.take(X, idx, axis=1, mode=mode)
    assert np.array_equal(traced, want) and np.array_equal(static, want)


def test_sort_axis_none_flattens():
    y = X[::-1].copy()
    assert np.array_equal(accy.jit(lambda a: anp.sort(a, axis=None), backend="cpu")(y),
                          np.sort(y, axis=None))
    assert np.array_equal(accy.jit(lambda a: anp.argsort(a, axis=None), backend="cpu")(y),
                          np.argsort(y, axis=None, kind="stable"))


@pytest.mark.parametrize("axis", [1.5, 2, -3, "0"])
def test_sort_bad_axis(axis):
    with pytest.raises(AccyError, match="axis"):
        accy.jit(lambda a: anp.sort(a, axis=axis), backend="cpu")(X)


def test_float_scalar_index_is_refused():
    """x[1.0] was int()-ed to x[1]; numpy raises IndexError."""
    with pytest.raises(UnsupportedError):
        accy.jit(lambda a: a[1.0], backend="cpu")(X)


@pytest.mark.parametrize("seed", [1.5, -1, 2**64, None, "1"])
def test_random_key_seed_range(seed):
    """key(1.5) was key(1), key(-1) was key(2**64 - 1): silently another stream."""
    with pytest.raises(InputError, match="seed"):
        anp.random.key(seed)


def test_random_key_numpy_integer_ok():
    assert np.array_equal(anp.random.key(np.uint64(2**64 - 1)), anp.random.key(2**64 - 1))


def test_from_dlpack_non_producer():
    with pytest.raises(InputError, match="DLPack"):
        accy.from_dlpack([1, 2])


NEW_AXES = {
    "None ... None": lambda x: x[None, ..., None],
    ": None ... None": lambda x: x[:, None, ..., None],
    "None None int None slice None": lambda x: x[None, None, 2, None, 1:3, None],
    "None array None": lambda x: x[None, [0, 2], None],
    "... None int": lambda x: x[..., None, 1],
}


@pytest.mark.parametrize("case", list(NEW_AXES))
def test_new_axes_land_where_numpy_puts_them(case):
    """A ``None`` after an earlier ``None`` counts the axes already added (the second new
    axis of ``x[None, ..., None]`` went before the last axis: shape (1, 6, 1, 5))."""
    x = np.arange(30.0).reshape(6, 5)
    got = accy.jit(NEW_AXES[case])(x)
    want = NEW_AXES[case](x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_two_ellipses_are_refused():
    with pytest.raises(UnsupportedError, match="more than one"):
        accy.jit(lambda x: x[..., 0, ...])(np.ones((2, 2, 2)))
