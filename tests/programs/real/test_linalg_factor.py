"""``np.linalg.cholesky``, ``qr``, ``eigh``, ``slogdet``, ``matrix_power`` and ``multi_dot`` inside
``@accy.jit``, written as numpy users write them, against numpy (LAPACK) itself."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import AccyError, UnsupportedError, VerifyError

rng = np.random.default_rng(7)


def _spd(n: int, dt) -> np.ndarray:
    b = rng.standard_normal((n, n))
    return (b @ b.T + n * np.eye(n)).astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 16])
def test_cholesky_equals_numpy(n: int, dt) -> None:
    a = _spd(n, dt)
    a[np.triu_indices(n, 1)] = 99.0  # LAPACK (and accy) read the lower triangle only
    got = accy.jit(lambda a: np.linalg.cholesky(a), backend="cpu")(a)
    want = np.linalg.cholesky(np.tril(a) + np.tril(a, -1).T)
    assert got.dtype == dt and got.shape == (n, n)
    np.testing.assert_allclose(got, want, rtol=1e-4 if dt == np.float32 else 1e-10,
                               atol=1e-5 if dt == np.float32 else 1e-12)
    assert not np.triu(got, 1).any()


def test_cholesky_of_an_indefinite_matrix_is_nan_not_a_crash() -> None:
    got = accy.jit(lambda a: np.linalg.cholesky(a), backend="cpu")(
        np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert got[0, 0] == 1.0 and np.isnan(got[1, 1])


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(6, 6), (9, 4), (3, 7), (5, 1)])
def test_qr_equals_numpy_signs_included(shape: tuple[int, int], mode: str) -> None:
    a = rng.standard_normal(shape)
    got = accy.jit(lambda a: np.linalg.qr(a, mode=mode), backend="cpu")(a)
    want = np.linalg.qr(a, mode=mode)
    got = got if isinstance(got, tuple) else (got,)
    want = (want,) if mode == "r" else tuple(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, atol=1e-10)
    r = got[-1]
    assert not np.tril(r, -1).any()  # exactly upper triangular


def test_qr_keeps_a_column_that_is_already_reduced() -> None:
    """No reflection where the column is zero below the diagonal (LAPACK's dlarfg)."""
    a = -np.triu(np.ones((4, 4)))
    q, r = accy.jit(lambda a: np.linalg.qr(a), backend="cpu")(a)
    np.testing.assert_allclose(q, np.eye(4), atol=1e-15)
    np.testing.assert_allclose(r, a, atol=1e-15)


def test_slogdet_and_det_of_regular_and_singular_matrices() -> None:
    fn = accy.jit(lambda a: (np.linalg.slogdet(a), np.linalg.det(a)), backend="cpu")
    for a in (rng.standard_normal((6, 6)), 3.0 * np.eye(40),
              np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]), np.zeros((3, 3))):
        (s, logdet), d = fn(a)
        ws, wl = np.linalg.slogdet(a)
        assert s == ws and np.isclose(logdet, wl) or (wl == -np.inf and logdet == -np.inf)
        np.testing.assert_allclose(d, np.linalg.det(a), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [0, 1, 2, 7, -3])
def test_matrix_power_equals_numpy(p: int) -> None:
    a = rng.standard_normal((5, 5)) / 3 + np.eye(5)
    got = accy.jit(lambda a: np.linalg.matrix_power(a, p), backend="cpu")(a)
    np.testing.assert_allclose(got, np.linalg.matrix_power(a, p), rtol=1e-9, atol=1e-12)


def test_multi_dot_equals_numpy_with_vector_ends() -> None:
    x, a = rng.standard_normal(10), rng.standard_normal((10, 30))
    b, c, y = rng.standard_normal((30, 5)), rng.standard_normal((5, 8)), rng.standard_normal(8)
    fn = accy.jit(lambda *m: (np.linalg.multi_dot(m[:4]), np.linalg.multi_dot(m)),
                  backend="cpu")
    got = fn(x, a, b, c, y)
    np.testing.assert_allclose(got[0], np.linalg.multi_dot([x, a, b, c]), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.linalg.multi_dot([x, a, b, c, y]), rtol=1e-12)


def test_factorisations_run_on_a_device_loop(backend: str) -> None:
    """The fori_loop bodies on a device backend (cpu and vulkan; OpenCL runs the same IR)."""
    if backend not in ("cpu", "vulkan"):
        pytest.skip("the device loop is covered on vulkan")
    a = _spd(6, np.float32)
    low, (q, r), w = accy.jit(lambda a: (np.linalg.cholesky(a), np.linalg.qr(a),
                                         np.linalg.eigvalsh(a)), backend=backend)(a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(low, np.linalg.cholesky(a), rtol=2e-4, atol=2e-5)
    wq, wr = np.linalg.qr(a)
    np.testing.assert_allclose(q, wq, atol=2e-5)
    np.testing.assert_allclose(r, wr, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 12])
def test_eigh_equals_numpy_up_to_column_signs(n: int, dt) -> None:
    a = rng.standard_normal((n, n))
    a = (a + a.T).astype(dt)
    a[np.triu_indices(n, 1)] = 99.0  # UPLO='L': the upper triangle is not read
    w, v = accy.jit(lambda a: np.linalg.eigh(a), backend="cpu")(a)
    full = np.tril(a) + np.tril(a, -1).T
    ww, wv = np.linalg.eigh(full)
    tol = 2e-5 if dt == np.float32 else 1e-12
    assert w.dtype == dt and v.shape == (n, n)
    np.testing.assert_allclose(w, ww, atol=tol * max(1.0, np.abs(ww).max()))
    np.testing.assert_allclose(np.abs(v), np.abs(wv), atol=tol * 50)
    np.testing.assert_allclose(full @ v, v * w, atol=tol * 50 * max(1.0, np.abs(ww).max()))
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=tol * 10)


def test_eigvalsh_upper_and_repeated_eigenvalues() -> None:
    a = np.diag([3.0, 1.0, 1.0, 2.0]) + np.triu(np.full((4, 4), 0.0), 1)
    u = np.triu(rng.standard_normal((5, 5)))
    fn = accy.jit(lambda a, u: (np.linalg.eigvalsh(a), np.linalg.eigvalsh(u, UPLO="U")),
                  backend="cpu")
    w, wu = fn(a, u)
    np.testing.assert_allclose(w, [1.0, 1.0, 2.0, 3.0], atol=1e-15)
    np.testing.assert_allclose(wu, np.linalg.eigvalsh(u, UPLO="U"), atol=1e-12)


REFUSED = {
    "cholesky of a non-square matrix": (lambda a: np.linalg.cholesky(a), np.ones((2, 3)),
                                        VerifyError, "square matrix"),
    "stacked qr": (lambda a: np.linalg.qr(a), np.ones((2, 3, 3)), UnsupportedError,
                   "stack of matrices"),
    "qr mode": (lambda a: np.linalg.qr(a, mode="raw"), np.ones((3, 3)), VerifyError,
                "mode must be"),
    "traced power": (lambda a: np.linalg.matrix_power(a, a[0, 0]), np.ones((3, 3)),
                     VerifyError, "integer known when tracing"),
    "eigh UPLO": (lambda a: np.linalg.eigh(a, UPLO="X"), np.ones((3, 3)), VerifyError,
                  "UPLO must be"),
    "multi_dot chain": (lambda a: np.linalg.multi_dot([a, a]), np.ones((2, 3)), VerifyError,
                        "do not chain"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_bad_input_is_an_accy_error(case: str) -> None:
    fn, a, err, match = REFUSED[case]
    with pytest.raises(err, match=match):
        accy.jit(fn, backend="cpu")(a)
    assert issubclass(err, AccyError)
