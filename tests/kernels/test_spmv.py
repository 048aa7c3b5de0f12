"""spmv in every format vs scipy on every test matrix; bad files refused.

The small matrices are in ``tests/data/matrices``; the four larger ones are marked
``large_data`` and skip unless ``ACCY_TEST_DATA`` names a folder holding
``matrices/NAME.mtx`` (``tests/data/README.md`` says where to get them).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
from accy.errors import InputError, UnsupportedError

import accy_kernels as ak

MATRICES = Path(__file__).resolve().parents[1] / "data" / "matrices"
MALFORMED = ["mangled8.mtx", "bad_header.mtx"]
COMPLEX = ["cha.mtx"]
SMALL = ["494_bus.mtx", "LFAT5_hypersparse.mtx", "a0.mtx", "cryg2500.mtx", "empty.mtx",
         "jagmesh7.mtx", "lp_e226.mtx", "pushpull.mtx", "rajat01.mtx", "skew_fp64.mtx",
         "west0067.mtx"]
LARGE = ["Groebner_id2003_aug.mtx", "arrow.mtx", "bayer10.mtx", "bcsstk13.mtx"]
WELL_FORMED = SMALL + [pytest.param(n, marks=pytest.mark.large_data) for n in LARGE]


def _matrix(name: str) -> Path:
    """Path of test matrix ``name``: in the repository, or (large ones) under ACCY_TEST_DATA."""
    if name not in LARGE:
        return MATRICES / name
    root = os.environ.get("ACCY_TEST_DATA")
    path = Path(root) / "matrices" / name if root else None
    if path is None or not path.is_file():
        where = f"{path} does not exist" if path else "ACCY_TEST_DATA is not set"
        pytest.skip(f"large matrix {name} not present ({where}); set ACCY_TEST_DATA to a folder "
                    f"holding matrices/{name}, see tests/data/README.md for where to get it")
    return path


def test_in_repository_matrices_are_all_listed():
    """Every .mtx in tests/data/matrices is exercised (a new file cannot be forgotten)."""
    assert sorted(p.name for p in MATRICES.glob("*.mtx")) == sorted(SMALL + MALFORMED + COMPLEX)
    assert not set(LARGE) & {p.name for p in MATRICES.glob("*.mtx")}
VARIANTS = [("csr", None, {}), ("csr", "csr_vector", {}), ("coo", None, {}),
            ("coo", "coo_rows", {}), ("ell", None, {}),
            ("sell", None, {}), ("sell", None, {"C": 8, "sigma": 1}),
            ("sell", None, {"C": 4, "sigma": 64})]
RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def _check(y, A, x, dtype):
    want = A @ x
    bound = RTOL[dtype] * (abs(A) @ np.abs(x)) + np.finfo(dtype).tiny
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(y), finite)
    assert np.all(np.abs(y[finite] - want[finite]) <= bound[finite])


@pytest.mark.parametrize("name", WELL_FORMED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fmt,variant,options", VARIANTS,
                         ids=["csr_scalar", "csr_vector", "coo", "coo_rows", "ell", "sell",
                              "sell-c8-s1", "sell-c4-s64"])
def test_spmv_matrices(backend, name, dtype, fmt, variant, options):
    A = ak.read_matrix(_matrix(name)).astype(dtype)
    x = np.random.default_rng(0).standard_normal(A.shape[1]).astype(dtype)
    with np.errstate(invalid="ignore"):
        y = ak.spmv(A, x, fmt, variant=variant, backend=backend, **options)
        assert y.dtype == dtype and y.shape == (A.shape[0],)
        _check(y, A, x, dtype)


@pytest.mark.parametrize("fmt", ["csr", "coo", "ell", "sell"])
def test_spmv_any_scipy_format_and_ell_width(backend, fmt):
    A = scipy.sparse.random(300, 200, density=0.05, format="lil", random_state=1)
    A[7, :] = 1.0  # one long row: the ELL tail
    x = np.random.default_rng(2).standard_normal(200)
    y = ak.spmv(A, x, fmt, backend=backend)
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)
    if fmt == "ell":
        np.testing.assert_allclose(ak.spmv(A, x, "ell", width=2, backend=backend), A @ x,
                                   rtol=1e-12)


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_files_refused(name):
    with pytest.raises(InputError, match="malformed"):
        ak.read_matrix(MATRICES / name)


def test_complex_refused():
    A = ak.read_matrix(MATRICES / "cha.mtx")
    with pytest.raises(UnsupportedError, match="complex"):
        ak.spmv(A, np.ones(A.shape[1]))
    with pytest.raises(TypeError):  # UnsupportedError is a TypeError
        ak.spmv(scipy.sparse.eye(3), np.ones(3, np.complex64))


def test_bad_arguments():
    A = scipy.sparse.eye(4, format="csr")
    with pytest.raises(InputError, match="shape"):
        ak.spmv(A, np.ones(3))
    with pytest.raises(InputError, match="format"):
        ak.spmv(A, np.ones(4), "dia")
    with pytest.raises(InputError, match="option"):
        ak.spmv(A, np.ones(4), "sell", D=3)


def _layout_matrix(seed=3):
    A = scipy.sparse.random(500, 400, density=0.03, format="csr", random_state=seed)
    A[11, :] = 2.0  # a long row: ELL tail, SELL padding
    return A.tocsr()


@pytest.mark.parametrize("fmt,options", [("ell", {}), ("ell", {"width": 3}), ("sell", {}),
                                         ("sell", {"C": 4, "sigma": 64})])
def test_layout_cache_reused_and_never_stale(backend, fmt, options):
    from accy_kernels import _layout_cache as lc

    lc.clear_layout_cache()
    A = _layout_matrix()
    x = np.random.default_rng(4).standard_normal(400)
    y0 = ak.spmv(A, x, fmt, backend=backend, **options)
    hits = lc.cache_info()["hits"]
    y1 = ak.spmv(A, x, fmt, backend=backend, **options)
    assert lc.cache_info()["hits"] == hits + 1  # the layout was reused ...
    # ... and the result is the same: ELL's COO tail adds with float atomics, whose order
    # follows the thread schedule, so repeated calls may differ in the last bit
    np.testing.assert_allclose(y1, y0, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(y1, A @ x, rtol=1e-12)
    # every kind of in-place mutation must rebuild the layout
    mutations = [lambda: A.data.__imul__(2.0),
                 lambda: A.data.__setitem__([0, 1], A.data[[1, 0]]),  # swapped values
                 lambda: A.indices.__setitem__(0, (A.indices[0] + 1) % 400),
                 lambda: setattr(A, "data", A.data + 1.0)]  # replaced array
    for mutate in mutations:
        mutate()
        misses = lc.cache_info()["misses"]
        y = ak.spmv(A, x, fmt, backend=backend, **options)
        assert lc.cache_info()["misses"] == misses + 1
        np.testing.assert_allclose(y, A @ x, rtol=1e-12, atol=1e-12)
    # an edit that breaks the structure is refused (checked once per content, when built)
    kept = A.indices[5]
    A.indices[5] = 400
    with pytest.raises(InputError, match=r"A.indices\[5\] = 400 .* out of range"):
        ak.spmv(A, x, fmt, backend=backend, **options)
    A.indices[5] = kept
    # a different object with equal content gets its own (correct) entry; results identical
    B = A.copy()
    np.testing.assert_allclose(ak.spmv(B, x, fmt, backend=backend, **options),
                               ak.spmv(A, x, fmt, backend=backend, **options), rtol=1e-14)
    # uncached results are identical to cached ones
    lc.set_layout_cache_limits(max_bytes=0)
    try:
        np.testing.assert_allclose(ak.spmv(A, x, fmt, backend=backend, **options),
                                   ak.spmv(B, x, fmt, backend=backend, **options), rtol=1e-14)
    finally:
        lc.set_layout_cache_limits(max_bytes=8 << 30)


def test_layout_cache_bounded_and_freed(backend):
    import gc

    from accy_kernels import _layout_cache as lc

    lc.clear_layout_cache()
    old = lc.MAX_ENTRIES
    lc.set_layout_cache_limits(max_entries=2)
    try:
        mats = [_layout_matrix(s) for s in range(4)]
        x = np.ones(400)
        for A in mats:
            ak.spmv(A, x, "sell", backend=backend)
        assert lc.cache_info()["entries"] == 2
        del A, mats
        gc.collect()
        assert lc.cache_info()["entries"] == 0  # entries die with their matrices
    finally:
        lc.set_layout_cache_limits(max_entries=old)


def test_layout_cache_threads(backend):
    from concurrent.futures import ThreadPoolExecutor

    from accy_kernels import _layout_cache as lc

    lc.clear_layout_cache()
    mats = [_layout_matrix(s) for s in range(3)]
    for i, A in enumerate(mats):
        A.data *= i + 1
    x = np.random.default_rng(5).standard_normal(400)
    jobs = [(mats[i % 3], ("ell", "sell")[i % 2]) for i in range(12)]
    with ThreadPoolExecutor(4) as pool:
        ys = list(pool.map(lambda j: ak.spmv(j[0], x, j[1], backend=backend), jobs))
    for (A, _), y in zip(jobs, ys, strict=True):
        np.testing.assert_allclose(y, A @ x, rtol=1e-12)
