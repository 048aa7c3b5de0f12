"""In-place writes on traced arrays (``x[idx] = v``, ``+=``, ``.at[idx].set/...``), views
that follow writes, and writes into jitted arguments reaching the caller's array, against
numpy on every available backend; a hypothesis run over random assignments."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.testing import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(11)
A = RNG.standard_normal((6, 5)).astype(np.float32)
B = RNG.standard_normal((6, 5)).astype(np.float32)


def _writes(y, b):
    y[0, :] = 0.0
    y[1:-1, 1::2] = b[1:-1, 1::2] * 2
    y[::-2, 0] = b[:3, 4]
    y[y <= 0.1] = 1.0
    y[2, 3] = 7.0
    y[[0, 3, -1], 1] = -5
    y[:, 0] += 3
    y[1:3] *= b[4:]
    y[..., -1] -= 1
    y[None, 4] = b[0]
    return y


def test_assignments_equal_numpy(backend: str) -> None:
    got = accy.jit(lambda a, b: _writes(a + 0, b), backend=backend)(A, B)
    assert_close(got, _writes(A.copy(), B))


def test_traced_index_and_mask(backend: str) -> None:
    def f(a, i, m):
        y = a + 0
        y[i] = a[0]
        y[m] = -1.0
        y[:, 2][a[:, 2] > 0] = 9.0  # a write into a view reaches y
        return y

    i = np.array([4, 1], np.int32)
    m = A > 0.5
    want = A.copy()
    want[i] = A[0]
    want[m] = -1.0
    want[:, 2][A[:, 2] > 0] = 9.0
    assert_close(accy.jit(f, backend=backend)(A, i, m), want)


def test_host_mask_with_one_value_per_element() -> None:
    m = A > 0
    vals = np.arange(int(m.sum()), dtype=np.float32)

    def f(a):
        y = a + 0
        y[m] = vals
        return y, y[m]

    want = A.copy()
    want[m] = vals
    got = accy.jit(f)(A)
    assert_close(got[0], want)
    assert_close(got[1], want[m])


def test_views_follow_writes() -> None:
    def f(x):
        row, t, flat = x[1], x.T, x.reshape(-1)
        x[1, 0] = 100.0
        row[2] = -3.0  # reaches x and t
        t[0, 0] = 42.0
        return row + 0, t + 0, flat + 0

    x = A.copy()
    want_x = A.copy()
    row, t, flat = want_x[1], want_x.T, want_x.reshape(-1)
    want_x[1, 0] = 100.0
    row[2] = -3.0
    t[0, 0] = 42.0
    for got, want in zip(accy.jit(f)(x), (row, t, flat), strict=True):
        assert_close(got, want)
    assert_close(x, want_x)  # the argument was written back


def test_argument_writes_reach_the_caller(backend: str) -> None:
    @accy.jit(backend=backend)
    def jacobi(a, b, steps):
        for _ in range(steps):
            b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
            a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0

    a, b = RNG.random(20).astype(np.float32), RNG.random(20).astype(np.float32)
    wa, wb = a.copy(), b.copy()
    for _ in range(3):
        wb[1:-1] = (wa[:-2] + wa[1:-1] + wa[2:]) / 3.0
        wa[1:-1] = (wb[:-2] + wb[1:-1] + wb[2:]) / 3.0
    assert jacobi(a, b, 3) is None
    assert_close(a, wa)
    assert_close(b, wb)


def test_a_written_array_passed_twice_is_one_array_as_in_numpy() -> None:
    """f(a, a) with x += 1; y += 1 added 1, not numpy's 2 (each argument was traced as a
    value of its own), and a write through x was not seen through y."""
    def twice(x, y):
        x += 1
        y += 1

    def seen(x, y):
        x[0] = 100.0
        return y[0] * 1

    f, a = accy.jit(twice), np.zeros(3)
    f(a, a)
    np.testing.assert_array_equal(a, [2.0, 2.0, 2.0])
    b = np.zeros(3)
    f(a, b)  # distinct arrays: the ordinary entry
    np.testing.assert_array_equal(a, [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(b, [1.0, 1.0, 1.0])
    c = np.arange(3.0)
    assert accy.jit(seen)(c, c) == 100.0 and c[0] == 100.0


def test_a_written_argument_overlapping_another_is_refused() -> None:
    def f(x, y):
        x[0] = 100.0
        return y * 1

    a = np.arange(4.0)
    with pytest.raises(accy.errors.InputError, match="#0 and #1 share memory"):
        accy.jit(f)(a[1:], a[:3])
    np.testing.assert_array_equal(a, np.arange(4.0))  # refused before anything ran
    np.testing.assert_array_equal(accy.jit(f)(a[2:], a[:2]), [0.0, 1.0])  # disjoint: fine


def test_read_only_argument_is_refused() -> None:
    x = A.copy()
    x.setflags(write=False)

    def f(a):
        a[0] = 1.0

    with pytest.raises(accy.errors.InputError, match="argument #0"):
        accy.jit(f)(x)


def test_at_updates(backend: str) -> None:
    def f(x, i):
        return (x.at[1:4, ::2].set(0.0), x.at[2].add(1.0), x.at[:, [0, 3]].multiply(2.0),
                x.at[np.array([4, 0]), 1].min(-0.5), x.at[-1].max(0.0), x.at[i].add(1.0))

    i = np.array([0, 2, 2], np.int32)
    w = [A.copy() for _ in range(6)]
    w[0][1:4, ::2] = 0.0
    w[1][2] += 1.0
    w[2][:, [0, 3]] *= 2.0
    w[3][[4, 0], 1] = np.minimum(A[[4, 0], 1], -0.5)
    w[4][-1] = np.maximum(A[-1], 0.0)
    np.add.at(w[5], i, 1.0)
    got = accy.jit(f, backend=backend)(A, i)
    for g, want in zip(got, w, strict=True):
        assert_close(g, want)


def test_integer_and_bool_arrays(backend: str) -> None:
    def f(x, n):
        x[1:3] = 7
        x[x > 10] = 0
        x[[0, -1]] += n
        return x

    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    want = f(x.copy(), np.int32(5))
    got = x.copy()
    out = accy.jit(f, backend=backend)(got, np.int32(5))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(got, want)


def test_errors_name_the_line() -> None:
    def bad_cast(x):
        x += 0.5

    with pytest.raises(accy.errors.UnsupportedError, match=r"'\+=' at .*test_setitem"):
        accy.jit(bad_cast)(np.zeros(3, np.int32))

    def two_arrays(x):
        y = x + 0
        y[[0, 1], None, [1, 2]] = 0.0
        return y

    with pytest.raises(accy.errors.UnsupportedError, match="None among several integer"):
        accy.jit(two_arrays)(A)

    def shape(x):
        y = x + 0
        y[0] = anp.ones(4)
        return y

    with pytest.raises(accy.errors.VerifyError, match="test_setitem.py"):
        accy.jit(shape)(A)

    def counted(x):
        y = x + 0
        y[x > 0] = x[0]
        return y

    with pytest.raises(accy.errors.UnsupportedError, match="anp.where"):
        accy.jit(counted)(A)


def test_augmented_traced_mask(backend: str) -> None:
    """``x[m] += v`` and ``x[m] = x[m] * 2 + 1`` under a traced mask equal numpy; the
    older ``x[...] = x.at[mask].multiply(2)`` form still works."""
    row = np.linspace(-1, 1, 5).astype(np.float32)

    def f(x, r):
        k = x > 0
        x[k] *= 2
        x[x[:, 0] < 0] -= r
        m = x < -0.5
        x[m] = x[m] * 3 + 1
        if isinstance(x, np.ndarray):
            x[x > 1] += 0.5
        else:
            x[...] = x.at[x > 1].add(0.5)
        return x.sum()

    a, want = A.copy(), A.copy()
    f(want, row)
    total = accy.jit(f, backend=backend)(a, row)
    assert_close(a, want)
    np.testing.assert_allclose(total, want.sum(), rtol=1e-5)


def test_a_mask_traced_twice_alike_is_one_mask(backend: str) -> None:
    """``x[x > 0] = -x[x > 0]``, operands swapped or commuted, as numpy users write it."""
    def f(x):
        x[x > 0] = x[x > 0] * 2
        x[0.5 < x] += x[x > 0.5]
        x[(x > -0.2) & (x < 0.7)] = -x[(x < 0.7) & (x > -0.2)]
        return x

    a, want = A.copy(), A.copy()
    f(want)
    accy.jit(f, backend=backend)(a)
    assert_close(a, want)


def test_traced_mask_reads_other_than_write_back_are_refused() -> None:
    def two_masks(x):
        x[x > 0] = x[x > 0.1] * 2
        return x

    with pytest.raises(accy.errors.UnsupportedError, match="compute the mask once"):
        accy.jit(two_masks)(A.copy())

    def stale_mask(x):  # the second x > 0 reads the x after the write: another mask
        m = x[x > 0]
        x[0, 0] = 9.0
        x[x > 0] = m
        return x

    with pytest.raises(accy.errors.UnsupportedError, match="compute the mask once"):
        accy.jit(stale_mask)(A.copy())

    def reduced(x):
        return anp.sum(x[x > 0])

    with pytest.raises(accy.errors.UnsupportedError, match="anp.where"):
        accy.jit(reduced)(A)

    def method(x):
        return x[x > 0].sum()

    with pytest.raises(accy.errors.UnsupportedError, match=r"test_setitem.py:\d+"):
        accy.jit(method)(A)

    def int_into_float(x):
        y = x.astype(anp.int32)
        y[x > 0] += 0.5
        return y

    with pytest.raises(accy.errors.UnsupportedError, match="numpy refuses"):
        accy.jit(int_into_float)(A)


# ---------------------------------------------------------------- hypothesis
def _slice(draw, n):
    start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    step = draw(st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2])))
    return slice(start, stop, step)


@st.composite
def _assignment(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    kind = draw(st.sampled_from(["basic", "array", "mask"]))
    if kind == "mask":
        mask = np.array(draw(st.lists(st.booleans(), min_size=shape[0], max_size=shape[0])))
        return shape, mask, draw(st.sampled_from(["scalar", "row"]))
    items = []
    for n in shape[:draw(st.integers(1, len(shape)))]:
        choice = draw(st.sampled_from(["int", "slice", "slice"]))
        items.append(draw(st.integers(-n, n - 1)) if choice == "int" else _slice(draw, n))
    if kind == "array":
        k = draw(st.integers(0, len(items) - 1))
        n = shape[k]
        items[k] = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4)))
    return shape, tuple(items), draw(st.sampled_from(["scalar", "full", "row"]))


def _check(case, backend: str) -> None:
    shape, index, vkind = case
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    target = x[index].shape
    if vkind == "scalar" or not target:
        v = np.float32(-1.5)
    elif vkind == "row":
        v = np.linspace(-1, 1, target[-1]).astype(np.float32) if target[-1] else np.float32(2)
    else:
        v = -np.arange(np.prod(target), dtype=np.float32).reshape(target)
    want = x.copy()
    want[index] = v

    def f(a, vals):
        y = a + 0
        y[index] = vals
        return y

    assert_close(accy.jit(f, backend=backend)(x, np.asarray(v)), want)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_assignment())
def test_random_assignments_cpu(case) -> None:
    _check(case, "reference")
    _check(case, "cpu")


@pytest.mark.vulkan
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_assignment())
def test_random_assignments_vulkan(case) -> None:
    from accy.plugins import backend_descriptors

    desc = backend_descriptors().get("vulkan")
    if desc is None or not desc.probe().available:
        pytest.skip("vulkan backend unavailable")
    _check(case, "vulkan")


# ---------------------------------------------------------------- augmented, hypothesis
@st.composite
def _augmented(draw):
    n, d = draw(st.integers(1, 6)), draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["mask", "host_ints", "traced_ints"]))
    if kind == "mask":
        index = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    else:
        index = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5)))
    op = draw(st.sampled_from(["+=", "-=", "*=", "= 2 *"]))
    vkind = draw(st.sampled_from(["scalar", "row"]))
    return (n, d), kind, index, op, vkind


_AUG = {"+=": lambda y, i, v: y.__setitem__(i, y[i].__iadd__(v)),
        "-=": lambda y, i, v: y.__setitem__(i, y[i].__isub__(v)),
        "*=": lambda y, i, v: y.__setitem__(i, y[i].__imul__(v)),
        "= 2 *": lambda y, i, v: y.__setitem__(i, 2 * y[i] + v)}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_augmented())
def test_random_augmented_assignments_cpu(case) -> None:
    """``x[i] op= v`` through a traced mask or an integer array (host or traced, repeated
    indices: numpy's last write wins) equals numpy."""
    shape, kind, index, op, vkind = case
    x = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 3) / 2
    v = np.float32(1.5) if vkind == "scalar" else np.linspace(-1, 1, shape[1]).astype(
        np.float32)
    want = x.copy()
    _AUG[op](want, index, v)

    def f(a, vals, ix):
        y = a + 0
        k = (ix > 0.5) if kind == "mask" else ix if kind == "traced_ints" else index
        _AUG[op](y, k, vals)
        return y

    ix = index.astype(np.float32) if kind == "mask" else index
    assert_close(accy.jit(f, backend="cpu")(x, np.asarray(v), ix), want)


@pytest.mark.parametrize("backend", ["reference", "cpu"])
@pytest.mark.parametrize("index", [
    (np.array([0]), 0, slice(None, None, 1)),  # '::1' is a whole axis (found by hypothesis)
    (np.array([1, 0]), 1, slice(1, 3)),  # one array, an integer beside it, a partial slice
    (slice(0, 2), np.array([2, 0]), 0),
    (0, np.array([1, 1, 0]), slice(None, None, 2)),
    (np.array([1, 0]), slice(1, 3), 0),  # advanced indices apart: numpy puts their axis first
    (0, slice(None, None, -1), np.array([3, 0, 1])),
    (np.array([[0], [1]]), slice(0, 2), np.array([1, 2, 3])),  # two arrays apart, broadcast
])
def test_one_array_with_integers_and_partial_slices(index, backend) -> None:
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    want = x.copy()
    v = -np.arange(np.prod(want[index].shape), dtype=np.float32).reshape(want[index].shape)
    want[index] = v

    def f(a, vals):
        y = a + 0
        y[index] = vals
        return y

    np.testing.assert_array_equal(accy.jit(f, backend=backend)(x, v), want)


def test_at_set_with_arrays_apart_and_a_partial_slice() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    want = x.copy()
    want[[0, 1], 1:3, [0, 1]] = 0.0
    got = accy.jit(lambda a: a.at[[0, 1], 1:3, [0, 1]].set(0.0), backend="cpu")(x)
    np.testing.assert_array_equal(got, want)

