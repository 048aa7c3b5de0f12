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


def test_sort_of_bool_is_numpy_order():
    """np.sort of a bool array reached tensor.sort, which takes no bool (a VerifyError)."""
    a = np.array([[True, False, True], [False, False, True]])
    got = accy.jit(lambda x: (np.sort(x), np.argsort(x, axis=0)))(a)
    assert got[0].dtype == np.bool_
    np.testing.assert_array_equal(got[0], np.sort(a))
    np.testing.assert_array_equal(got[1], np.argsort(a, axis=0, kind="stable"))


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


INT_POWERS = {
    "static 3": lambda x, e: np.power(x, 3),
    "static 13": lambda x, e: x ** 13,
    "static 0": lambda x, e: x ** 0,
    "traced exponent": lambda x, e: x ** e,
    "host base": lambda x, e: 2 ** e,
}


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.int8, np.uint8, np.uint64])
@pytest.mark.parametrize("case", list(INT_POWERS))
def test_integer_powers_stay_exact_integers(case, dt):
    """numpy's dtype and its wrapped value (a float pow gave 124.99998 for 5 ** 3 on
    lavapipe, and float32 results everywhere)."""
    x = np.array([2, -3, 0, 5, 7, -1, 1]).astype(dt)
    e = np.array([3, 2, 0, 5, 40, 7, 9]).astype(dt)
    fn = INT_POWERS[case]
    with np.errstate(all="ignore"):
        want = fn(x, e)
    got = accy.jit(fn)(x, e)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_integer_power_device(backend):
    x, e = np.array([5, -3, 7], np.int32), np.array([3, 3, 11], np.int32)
    got = accy.jit(lambda x, e: (x ** e, x ** 3), backend=backend)(x, e)
    np.testing.assert_array_equal(got[0], x ** e)
    np.testing.assert_array_equal(got[1], x ** 3)


def test_negative_static_integer_power_is_refused_and_traced_is_the_integer_part():
    with pytest.raises(accy.errors.VerifyError, match="negative integer powers"):
        accy.jit(lambda x: x ** -2)(np.array([2, 3]))
    got = accy.jit(lambda x, e: x ** e)(np.array([1, -1, -1, 2, 0]), np.array([-3, -3, -2, -1, 4]))
    np.testing.assert_array_equal(got, [1, -1, 1, 0, 0])


def test_bool_arithmetic_is_numpy_logic():
    b, c = np.array([True, False, True, False]), np.array([True, True, False, False])
    got = accy.jit(lambda b, c: (b + c, b * c, np.maximum(b, c), np.minimum(b, c), b * 3))(b, c)
    for g, w in zip(got, (b + c, b * c, np.maximum(b, c), np.minimum(b, c), b * 3), strict=True):
        np.testing.assert_array_equal(g, w)
    assert got[0].dtype == np.bool_ and got[1].dtype == np.bool_
    with pytest.raises(UnsupportedError, match="numpy refuses it too"):
        accy.jit(lambda b, c: b - c)(b, c)


@pytest.mark.parametrize("fn", [lambda x: x >> 40, lambda x: x % 2**40, lambda x: x // -(2**40),
                                lambda x: np.fmod(x, 2**40)])
def test_int64_with_a_wide_python_constant(fn):
    """A Python constant past int32 against an int64 array (the comparisons inside were
    traced as int32 constants: 'does not fit i32')."""
    x = np.array([1, -1, 2**62, -2**63, 12345678901], np.int64)
    np.testing.assert_array_equal(accy.jit(fn)(x), fn(x))


@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.int64])
def test_shift_by_the_width_or_more_or_a_negative_count_is_numpys(dt):
    """numpy gives 0 (-1 for a negative x shifted right) for a count outside
    0 .. bits-1; accy masked the count (i32 1 << 32 was 1)."""
    bits = np.iinfo(dt).bits
    x = np.array([1, 6, np.iinfo(dt).max, np.iinfo(dt).min], dt)
    n = np.array([bits, bits + 1, -1 if np.iinfo(dt).min < 0 else 2 * bits, 1], dt)
    f = accy.jit(lambda a, m: (a << m, a >> m, a << bits, a >> (bits + 2)))
    for got, want in zip(f(x, n), (x << n, x >> n, x << dt(bits), x >> dt(bits + 2)),
                         strict=True):
        np.testing.assert_array_equal(got, want)


def test_comparison_with_an_int_outside_the_dtype_is_numpys_answer():
    """numpy 2 answers x_u8 < 256 (all True) and x_u32 == -1 (all False); accy refused the
    constant ('does not fit u8')."""
    u8, u32 = np.array([0, 7, 255], np.uint8), np.array([0, 2**32 - 1], np.uint32)
    got = accy.jit(lambda a, b: (a < 256, 300 > a, a >= -1, b == -1, b != -1, -1 < b))(u8, u32)
    want = (u8 < 256, 300 > u8, u8 >= -1, u32 == -1, u32 != -1, -1 < u32)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.bool_ and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    with pytest.raises(accy.errors.VerifyError, match="does not fit u8"):
        accy.jit(lambda a: a + 256)(u8)  # arithmetic still refuses it, as numpy's


def test_jit_on_methods_dtype_arguments_and_non_functions():
    """@accy.jit on a method lost self ('missing 1 required positional argument'); a dtype
    class argument (np.int32 has an __array__ method) was taken for an array of dtype
    object; accy.jit(3) made a Jitted that failed only when called."""
    class Model:
        def __init__(self, w):
            self.w = w

        @accy.jit
        def __call__(self, x):
            return x @ self.w

    np.testing.assert_array_equal(Model(np.eye(2) * 2)(np.ones((1, 2))), [[2.0, 2.0]])
    cast = accy.jit(lambda x, d: x.astype(d))
    assert cast(np.arange(3.0), np.int32).dtype == np.int32
    assert cast(np.arange(3.0), np.dtype("float32")).dtype == np.float32
    with pytest.raises(accy.errors.InputError, match="expects a function"):
        accy.jit(3)


def test_python_int_beyond_64_bits_is_a_verify_error():
    """numpy's OverflowError from inside accy's constant conversion escaped."""
    with pytest.raises(accy.errors.VerifyError, match="does not fit i64"):
        accy.jit(lambda x: x + 2**70)(np.ones(2, np.int64))


def test_namedtuple_and_mixed_key_dict_arguments_keep_their_structure():
    import collections

    pair = collections.namedtuple("pair", "a b")

    def f(p, d):
        return pair(p.a + d["a"] + d[1], p.b * 2)

    got = accy.jit(f)(pair(np.ones(2), np.zeros(2)), {"a": np.ones(2), 1: np.ones(2)})
    assert type(got) is pair  # came back as a list before; mixed keys raised a raw TypeError
    np.testing.assert_array_equal(got.a, [3.0, 3.0])


def test_full_of_a_wide_python_int_is_int64_and_an_overflow_is_an_accy_error():
    got = accy.jit(lambda x: x + anp.full((2,), 2**62))(np.ones(2, np.int64))
    assert got.dtype == np.int64 and got[0] == 2**62 + 1
    with pytest.raises(accy.errors.VerifyError, match="does not fit int8"):
        accy.jit(lambda x: x + anp.full((2,), 300, np.int8))(np.ones(2, np.int8))


@pytest.mark.parametrize("make,what", [
    (lambda: anp.zeros((-1, 3)), "zeros"), (lambda: anp.ones((2.5, 3)), "ones"),
    (lambda: anp.empty("ab"), "empty"), (lambda: anp.full((2, -3), 1.0), "full"),
    (lambda: anp.zeros((-1, 3000)), "zeros"), (lambda: anp.eye(2.5), "eye"),
    (lambda: anp.arange("a"), "arange"), (lambda: anp.linspace(0, 1, -3), "linspace")])
def test_a_bad_creation_shape_is_a_verify_error_naming_the_function(make, what):
    """A negative, float or string extent raised numpy's raw ValueError/TypeError from
    inside accy (traced or not, dense constant or broadcast splat)."""
    with pytest.raises(accy.errors.VerifyError, match=rf"^{what} at .*test_adversarial"):
        accy.jit(lambda x: x + make())(np.ones(3, np.float32))
    with pytest.raises(accy.errors.VerifyError, match=what):
        make()


def test_a_traced_extent_in_a_creation_shape_says_shapes_are_static():
    with pytest.raises(accy.errors.VerifyError, match="shapes are static"):
        accy.jit(lambda x: anp.ones(x[0]))(np.ones(3, np.float32))
