"""The numpy names and forms the new programs needed (issue 11 follow-up), against numpy on
cpu (the frontend writes them with ops every backend runs): the elementwise math of
``accy.frontend.math_more_api`` at special values, the statistics of ``stats_api``, the
array functions of ``array_more_api``, ``ufunc.accumulate`` / ``ufunc.reduce``, ``out=`` of
array functions, the rearranging helpers of ``rearrange_api``, and numpy's indexing with several integer arrays (reads and writes,
``accy.frontend.multi_index``); and the refusals new users met: accy errors naming the
line and a real alternative, never numpy's own ``ValueError`` or a bare ``TypeError``."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import AccyError, UnsupportedError
from accy.families.validate import IndexOutOfRangeError

rng = np.random.default_rng(2)
X = rng.standard_normal((4, 6))
Y = rng.standard_normal((4, 6))
P = rng.random((4, 6))
SPECIAL = np.array([0.0, -0.0, 1e-10, -1e-12, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 1e300, -1e300,
                    np.inf, -np.inf, np.nan, 700.0, -700.0, 20.0, 1e-300])
I3 = np.array([0, 2, -1])
J3 = np.array([1, 3, 0])


def _rev(a):
    return a[::-1]


GROUPS = {
    "math": (lambda s: {
        "log1p": np.log1p(np.abs(s)), "expm1": np.expm1(s), "log2": np.log2(np.abs(s)),
        "log10": np.log10(np.abs(s)), "sinh": np.sinh(s), "cosh": np.cosh(s),
        "arcsinh": np.arcsinh(s), "arccosh": np.arccosh(1 + np.abs(s)), "cbrt": np.cbrt(s),
        "round": np.round(s), "rint": np.rint(s), "fix": np.fix(s),
        "fmax": np.fmax(s, _rev(s)), "fmin": np.fmin(s, _rev(s)),
        "copysign": np.copysign(s, _rev(s)), "logaddexp": np.logaddexp(s, _rev(s)),
        "heaviside": np.heaviside(s, 0.5), "nan_to_num": np.nan_to_num(s),
        "isclose": np.isclose(s, s + 1e-9), "hypot": np.hypot(s, _rev(s)),
        "signbit": np.signbit(np.nan_to_num(s))}, SPECIAL),
    "math_unit": (lambda a: {
        "arcsin": np.arcsin(a), "arccos": np.arccos(a), "arctanh": np.arctanh(a),
        "tan": np.tan(a), "exp2": np.exp2(a), "sinc": np.sinc(a), "round2": np.round(a, 2),
        "deg": np.degrees(a), "rad": np.deg2rad(a), "recip": np.reciprocal(a + 2),
        "lae2": np.logaddexp2(a, 1 - a), "xor": np.logical_xor(a > 0, a < 0.5)}, 2 * P - 1),
    "stats": (lambda a: {
        "ptp": np.ptp(a, axis=1), "avg": np.average(a, axis=1, weights=np.arange(6.0) + 1),
        "median": np.median(a), "median0": np.median(a, axis=0),
        "pct": np.percentile(a, [10, 50, 90], axis=1),
        "q": np.quantile(a, 0.3, axis=1, keepdims=True), "cov": np.cov(a),
        "covT": np.cov(a, rowvar=False), "corr": np.corrcoef(a),
        "trap": np.trapezoid(a, axis=1), "nanmax": np.nanmax(np.where(a > 1, np.nan, a), 0),
        "nanmean": np.nanmean(np.where(a > 1, np.nan, a)),
        "nansum": np.nansum(np.where(a > 1, np.nan, a), axis=1)}, X),
    "arrays": (lambda a: {
        "tensordot": np.tensordot(a, a.T, axes=1), "inner": np.inner(a, a),
        "vdot": np.vdot(a, a), "cross": np.cross(a[:, :3], a[:, 3:]),
        "kron": np.kron(a[:2, :3], a[2:, 4:]), "tile": np.tile(a[0], (2, 2)),
        "repeat": np.repeat(a, 2, axis=1), "repeat_counts": np.repeat(a, [1, 0, 2, 1], 0),
        "moveaxis": np.moveaxis(a.reshape(2, 3, 4), 0, -1), "atleast3": np.atleast_3d(a),
        "split": np.split(a, 3, axis=1)[2], "array_split": np.array_split(a, 4, axis=1)[3],
        "select": np.select([a < -0.5, a > 0.5], [a * 2, a * 3], -1.0),
        "digitize": np.digitize(a, [-1.0, 0.0, 1.0]),
        "searchsorted": np.searchsorted(np.sort(a[0]), a[1:], side="right"),
        "interp": np.interp(a, [-1.0, 0.0, 0.5, 2.0], [0.0, 1.0, -1.0, 3.0]),
        "isin": np.isin(np.floor(a * 2), [0.0, 1.0, -2.0]),
        "max_acc": np.maximum.accumulate(a, axis=1), "min_acc": np.minimum.accumulate(a),
        "add_reduce": np.add.reduce(a), "max_reduce": np.maximum.reduce(a, axis=1),
        "stack_list": anp.array([a[0], a[1] * 2]) if not isinstance(a, np.ndarray) else
        np.array([a[0], a[1] * 2])}, X),
    "convolve": (lambda a: {
        "full": np.convolve(a[0], a[1, :5]), "same": np.convolve(a[0], a[1, :5], "same"),
        "valid": np.convolve(a[1, :5], a[0], "valid"), "long": np.convolve(a[0], a[1]),
        "corr": np.correlate(a[0], a[1, :3], "full")}, rng.standard_normal((2, 40))),
    "rearrange": (lambda a: {
        "ud": np.flipud(a), "lr": np.fliplr(a), "r1": np.rot90(a), "r2": np.rot90(a, 2),
        "r3": np.rot90(a, 3), "app": np.append(a, a[:1], axis=0), "del": np.delete(a, [0, 2], 1),
        "delf": np.delete(a, 5), "ins": np.insert(a, 2, 7.0, axis=1),
        "ins1": np.insert(a[0], 1, a[1, :2]),
        "tal": np.take_along_axis(a, np.argsort(a, axis=1), axis=1),
        "tal0": np.take_along_axis(a, np.argmax(a, axis=0)[None], axis=0),
        "unravel": np.unravel_index(np.argmax(a), a.shape)[1],
        "ravel_mi": np.ravel_multi_index(np.unravel_index(np.argmin(a), a.shape), a.shape),
        "grad": np.gradient(a[0], 0.5), "grad2": np.gradient(a[0], edge_order=2),
        "grad_xy": np.gradient(a)[1], "grad_ax": np.gradient(a, 2.0, axis=0),
        "trace": np.einsum("ii->", a[:, :4]), "diag": np.einsum("ii->i", a[:, :4]),
        "bdiag": np.einsum("bii->b", a[:, :4].reshape(1, 4, 4) * a[:, :4])}, X),
    "forms": (lambda a: {
        "density": np.histogram(a, bins=5, range=(-3, 3), density=True)[0],
        "argsort_kind": np.argsort(a[0], kind="stable"),
        "ellipsis": np.einsum("...ij,...jk->...ik", a.reshape(2, 2, 6), a.reshape(2, 6, 2)),
        "ellipsis_sum": np.einsum("i...->...", a), "initial": np.max(a, axis=0, initial=0.5),
        "initial_min": a.min(axis=1, initial=-0.5)}, X),
    "fancy_read": (lambda a: {
        "ij": a[I3, J3], "i_j": a[I3, :, J3], "rows_cols": a[:, I3[:, None], J3[1:]],
        "int_gap": a[0, :, I3], "slice_first": a[1:, I3, 1:3], "i2": a[I3, 2],
        "ij1": a[I3[:2], J3[:2], 1], "k_j": a[np.argmax(a[:, 0, 0]), J3],
        "j_k": a[I3, np.argmin(a[0, :, 0])], "mask_int": a[np.array([True, False, True]), 1],
        "u32": a[I3.astype(np.uint32) % 3, J3.astype(np.uint32)]},
        rng.standard_normal((3, 4, 5))),
}


def _writes(a, i, j):
    """Assignments with several integer arrays (traced indices) and out= of a function."""
    b = a.copy()
    b[i, j] = 7.0
    c = a.copy()
    c[i, :, j] += 1.0
    d = a.copy()
    d[0, :, i] = np.arange(4.0) * 10
    e = a.copy()
    np.clip(e, -0.5, 0.5, out=e)
    f = a.copy()
    f[[0, i[1]]] = f[[i[1], 0]]  # a list holding a traced index: a row swap
    g = a.copy()
    np.put_along_axis(g, np.argmax(a, axis=2)[..., None], -1.0, axis=2)
    h = a.copy()
    np.fill_diagonal(h[0], 5.0)  # into a view: reaches h
    k = a.copy()
    k[np.argmax(a[:, 0, 0]), j] = -3.0  # a traced scalar with an array
    s = a.copy()
    s.sort(axis=1)  # ndarray.sort sorts in place
    return b, c, d, e, f, g, h, k, s, round(a[0, 0, 0] * 10), a.round(1)


@pytest.mark.parametrize("group", list(GROUPS))
def test_names_equal_numpy(group: str) -> None:
    fn, a = GROUPS[group]
    with np.errstate(all="ignore"):
        got, want = accy.jit(fn, backend="cpu")(a.copy()), fn(a.copy())
    for k, w in want.items():
        g = np.asarray(got[k])
        assert g.shape == np.shape(w), k
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300, err_msg=k)


def test_fancy_writes_equal_numpy() -> None:
    a = rng.standard_normal((3, 4, 5))
    i, j = np.array([0, 2]), np.array([1, 3])
    got = accy.jit(lambda a, i, j: (*_writes(a, i, j), a.at[i, j].add(1.0)),
                   backend="cpu")(a, i, j)
    at = a.copy()
    np.add.at(at, (i, j), 1.0)
    for g, w in zip(got, (*_writes(a, i, j), at), strict=True):
        np.testing.assert_array_equal(g, w)


def _linalg(a, b):
    return np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a)


def test_linalg_solve_inv_det_equal_numpy(backend: str) -> None:
    """Gauss-Jordan with partial pivoting in a device loop (the first pivot is 0 here);
    cpu and vulkan (the loop node on a device; OpenCL runs the same IR: time budget)."""
    if backend not in ("cpu", "vulkan"):
        pytest.skip("the device loop is covered on vulkan")
    a = rng.standard_normal((5, 5)).astype(np.float32)
    a[0, 0] = 0.0
    b = rng.standard_normal(5).astype(np.float32)
    got = accy.jit(_linalg, backend=backend)(a, b)
    for g, w in zip(got, _linalg(a, b), strict=True):
        assert np.asarray(g).dtype == np.float32 and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)


def test_partition_keeps_numpy_contract() -> None:
    """kth in its sorted place, nothing larger before it, nothing smaller after."""
    x = rng.standard_normal(11)
    p, ip = accy.jit(lambda x: (np.partition(x, 4), np.argpartition(x, 4)), backend="cpu")(x)
    assert p[4] == np.partition(x, 4)[4] and x[ip][4] == p[4]
    assert (p[:4] <= p[4]).all() and (p[5:] >= p[4]).all()


def test_fancy_index_out_of_range_on_its_axis_is_refused() -> None:
    """j = 5 on 5 columns would land on the next row of the flattened axes: refused."""
    a = np.zeros((3, 5))
    f = accy.jit(lambda a, i, j: a[i, j], backend="cpu")
    with pytest.raises(IndexOutOfRangeError):
        f(a, np.array([0]), np.array([5]))
    with pytest.raises(IndexOutOfRangeError):  # not wrapped to -1, the last column
        f(a, np.array([0], np.uint32), np.array([2**32 - 1], np.uint32))


def _host_store(a):
    r = np.zeros((3, 3))
    r[0, 0] = np.linalg.norm(a)
    return r


def _builtin_max(a):
    return max(a[0], a[1])


REFUSED = {
    "traced value into a host array": (_host_store, X[0], r"ValueError.*test_more_numpy_names"
                                       r"\.py:\d+.*anp\.zeros\(\(n, n\), t\.dtype\)"),
    "np.array of traced values": (lambda a: np.array([a[0], a[1]]), X[0], r"anp\.stack"),
    "host array indexed by a traced one": (lambda a: np.eye(4)[a], np.array([0, 1], np.int32),
                                           r"anp\.asarray\(np\.eye\(k\)\)\[t\]"),
    "builtin max": (_builtin_max, X[0], r"np\.maximum\(a, b\)"),
    "unknown keyword": (lambda a: np.sum(a, initial=1.0), X, r"numpy\.sum at .*'initial'"),
    "method keyword": (lambda a: a.cumsum(axis=0, out=None, foo=1), X, r"ndarray\.cumsum"),
    "None among arrays": (lambda a: a[[0, 1], None, [1, 2]], X, "None among several"),
    "np.r_ of traced arrays": (lambda a: np.r_[a, a], X[0],
                               r"test_more_numpy_names\.py:\d+.*anp\.concatenate"),
    "stacked solve": (lambda a: np.linalg.solve(a, a), np.ones((2, 3, 3)), "stack of matrices"),
    "np.float32 of a traced value": (lambda a: np.float32(a.sum()) * a, X, r"t\.astype"),
    "math.sqrt of a traced value": (lambda a: __import__("math").sqrt(a.sum()), X,
                                    r"np\.sqrt\(t\)"),
    "traced quantile": (lambda a: np.quantile(a, a[0, 0]), X, "static number"),
    "traced repeat counts": (lambda a: np.repeat(a, a.astype(np.int32)), X[0], "host array"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refusals_name_the_line_and_an_alternative(case: str) -> None:
    fn, a, match = REFUSED[case]
    with pytest.raises(AccyError, match=match):
        accy.jit(fn, backend="cpu")(a)


def test_refusals_are_accy_errors_not_numpy_ones() -> None:
    """numpy's own ValueError (setting an array element with a sequence) is replaced."""
    with pytest.raises(UnsupportedError) as info:
        accy.jit(_host_store, backend="cpu")(X[0])
    assert isinstance(info.value.__cause__, ValueError)
