"""What the real programs needed beyond the existing names, each against numpy on cpu (the
frontend writes them with ops every backend runs): ``np.pad`` in every mode, ``diag`` /
``diagonal`` / ``trace``, ``np.linalg.norm``, ``bincount``, ``np.add.at`` and ``out=``,
host arrays made inside the function and updated with ``+=``, complex arrays through
``where``/``zeros_like``/joins, ``np.shape``, numpy arrays as static arguments; and the
refusals: accy errors naming the user's line and a real alternative."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import AccyError, UnsupportedError

rng = np.random.default_rng(1)
X = rng.standard_normal((4, 5)).astype(np.float32)
V = rng.standard_normal(4).astype(np.float32)
Z = (X + 1j * X[::-1]).astype(np.complex64)
IDX = np.array([0, 1, 1, 5, 3, 3, 3], np.int32)

GROUPS = {
    "pad": (lambda a: {
        "c": np.pad(a, 1), "c2": np.pad(a, ((0, 2), (1, 0)), constant_values=3.5),
        "edge": np.pad(a, (2, 1), mode="edge"), "wrap": np.pad(a, ((3, 7), (1, 2)), mode="wrap"),
        "reflect": np.pad(a, ((3, 2), (1, 4)), mode="reflect"),
        "symmetric": np.pad(a, ((4, 4), (1, 5)), mode="symmetric")}, X),
    "pad_int": (lambda a: np.pad(a, 2, constant_values=7), np.arange(5, dtype=np.int32)),
    "diag": (lambda a: {
        "d": np.diag(a), "dk": np.diag(a, 2), "dkm": np.diag(a, -2), "v": np.diag(a[0]),
        "vk": np.diag(a[:, 0], 1), "vkm": np.diag(a[1], -2),
        "d3": np.diagonal(a.reshape(2, 2, 5), 1, 1, 2), "m": a.diagonal(1),
        "t": np.trace(a), "tk": np.trace(a, -1)}, X),
    "norm": (lambda a: {
        "all": np.linalg.norm(a), "ax": np.linalg.norm(a, axis=1),
        "inf0": np.linalg.norm(a, np.inf, axis=0), "v1": np.linalg.norm(a[0], 1),
        "v3": np.linalg.norm(a[0], 3), "v0": np.linalg.norm(a[0], 0),
        "fro": np.linalg.norm(a, "fro"), "m1": np.linalg.norm(a, 1),
        "minf": np.linalg.norm(a, -np.inf), "keep": np.linalg.norm(a, axis=1, keepdims=True),
        "anp": anp.linalg.norm(a, np.inf)}, X),
    "strided_and_roll": (lambda a: {
        "s0": a[:, ::2], "s1": a[1::2], "s4": a[:, 1::4], "neg": a[::3, 5:0:-2],
        "one": a[0:4:5], "tail": a[1:, 2::3], "r": np.roll(a, -7, 1), "rflat": np.roll(a, 13),
        "r2": np.roll(a, (1, -2), (0, 1)), "r0": np.roll(a, 5, 1),
        "rb": np.roll(a > 0, 2, 0)}, X),
    "predicates": (lambda a: {
        "nan": np.isnan(a), "inf": np.isinf(a), "fin": np.isfinite(a),
        "any": np.any(a > 1, axis=0), "all": np.all(a < 2), "cnt": np.count_nonzero(a > 0, 1),
        "inan": np.isnan(a.astype(np.int32)), "ifin": np.isfinite(a > 0)},
        np.array([[0.0, np.nan, np.inf], [-np.inf, 1.5, -0.0]], np.float32)),
    "complex": (lambda z: {
        "where": np.where(z.real > 0, z * z, z), "roll": np.roll(z, 2, 1),
        "flip": np.flip(z, 0), "stack": np.stack([z, z.real]),
        "like": np.ones_like(z) + np.full_like(z, 2 - 1j), "zr": np.zeros_like(z, np.float32),
        "ravel": np.transpose(z).copy().ravel(), "cumsum": np.cumsum(z, axis=1),
        "square": np.square(z), "concat": anp.concatenate([z, z]),
        "awhere": anp.where(z.real > 0, z, 0)}, Z),
}


def _host_out(x):
    """Host arrays made inside the function, updated by numpy's in-place ufunc forms."""
    count = np.zeros(x.shape, np.int32)
    count += x > 0                     # rebinds count to the traced sum
    acc = np.zeros(x.shape, np.float32)
    for k in range(3):
        acc += x * k
    s = np.zeros_like(x)
    np.add.at(s, np.array([0, 0, 1]), x[:3])   # repeated indices accumulate
    t = np.zeros_like(x)
    np.multiply(x, 2, out=t)
    return count, acc, s, t


@pytest.mark.parametrize("group", list(GROUPS))
def test_names_equal_numpy(group: str) -> None:
    fn, a = GROUPS[group]
    got, want = accy.jit(fn, backend="cpu")(a.copy()), fn(a.copy())
    got, want = (got, want) if isinstance(want, dict) else ({"": got}, {"": want})
    for k, w in want.items():
        g = np.asarray(got[k])
        assert g.shape == np.shape(w), k
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=k)


def test_bincount_and_host_out_equal_numpy() -> None:
    got = accy.jit(lambda a: (np.bincount(a, minlength=6),
                              np.bincount(a, weights=a * 0.5, minlength=7)))(IDX)
    np.testing.assert_array_equal(got[0], np.bincount(IDX, minlength=6))
    assert got[0].dtype == np.int32  # accy's count dtype
    np.testing.assert_allclose(got[1], np.bincount(IDX, weights=IDX * 0.5, minlength=7))
    x = np.array([1.5, -2.0, 3.0, 0.0], np.float32)
    for g, w in zip(accy.jit(_host_out)(x), _host_out(x), strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w)
    assert np.shape(accy.jit(lambda a: np.zeros(np.shape(a)[0] + np.ndim(a) + np.size(a)))(X)
                    ) == (4 + 2 + 20,)


def test_numpy_array_as_static_argument() -> None:
    """anp.random keys are host arrays: static_argnums hashes them by value."""
    f = accy.jit(lambda key, n: anp.random.uniform(anp.random.fold_in(key, 1), (n,)),
                 static_argnums=(0,))
    a, b = f(anp.random.key(3), 8), f(anp.random.key(4), 8)
    np.testing.assert_array_equal(a, f(anp.random.key(3), 8))
    assert not np.array_equal(a, b) and f.trace_count + f.index_hits == 2


def _shared_out(x):
    out = np.zeros(x.shape, np.float32)
    view = out[1:]
    out += x
    return out, view


def _host_setitem(x):
    out = np.zeros(x.shape, np.float32)
    out[1:] = x[1:]
    return out


def _tolerance_break(a, v):
    for _ in range(10):
        v = a @ v
        v = v / np.linalg.norm(v)
        if np.linalg.norm(a @ v - v) < 1e-3:
            break
    return v


REFUSED = {
    "shared host out": (_shared_out, X[0], "shared.*test_user_numpy_names.py:\\d+.*zeros_like"),
    "write into host array": (_host_setitem, X[0],
                              "test_user_numpy_names.py:\\d+.*np.zeros_like\\(t\\)"),
    "data-dependent break": (lambda a: _tolerance_break(a, a[0]), np.eye(5, dtype=np.float32),
                             "test_user_numpy_names.py:\\d+.*lax.while_loop"),
    "bincount without minlength": (lambda a: np.bincount(a), IDX, "minlength="),
    "matrix 2-norm": (lambda a: np.linalg.norm(a, 2), X, "power iteration"),
    "linalg.eig": (lambda a: np.linalg.eig(a), X[:4, :4], "while_loop"),
    "pad mode": (lambda a: np.pad(a, 1, mode="mean"), X, "constant, edge"),
    "fft": (lambda a: np.fft.fft(a), X, "test_user_numpy_names.py:\\d+.*matrix product"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refusals_name_the_line_and_an_alternative(case: str) -> None:
    fn, a, match = REFUSED[case]
    with pytest.raises(AccyError, match=match):
        accy.jit(fn, backend="cpu")(a)


def test_traced_key_is_refused_with_static_argnums_fix() -> None:
    with pytest.raises(UnsupportedError, match="static_argnums"):
        accy.jit(lambda k: anp.random.uniform(k, (4,)))(anp.random.key(1))
