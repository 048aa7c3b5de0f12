"""accy.dask families on the threaded scheduler: spmv over CSR row blocks, scatter_add and
segment_sum by partials, random streams equal to the single-machine call, sample sort."""

from pathlib import Path

import accy.dask
import dask
import dask.array as da
import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError

ak = pytest.importorskip("accy_kernels")
sp = pytest.importorskip("scipy.sparse")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def threaded():
    with dask.config.set(scheduler="threads"):
        yield


def _matrix(name="494_bus.mtx"):
    found = sorted(p for p in ROOT.rglob(name) if ".venv" not in p.parts)
    if not found:
        pytest.skip(f"{name} is not in the repository's test data")
    return ak.read_matrix(found[0])


def test_spmv_over_row_blocks_of_a_suitesparse_matrix():
    A = sp.csr_matrix(_matrix()).astype(np.float64)
    x = np.random.default_rng(0).standard_normal(A.shape[1])
    got = accy.dask.spmv(accy.dask.from_scipy(A, 100), x).compute()
    np.testing.assert_allclose(got, A @ x, rtol=1e-12, atol=1e-12)


def test_spmv_refuses_column_chunks_and_wrong_x():
    A = sp.random(50, 40, density=0.1, format="csr", random_state=0)
    with pytest.raises(InputError, match="shape"):
        accy.dask.spmv(accy.dask.from_scipy(A, 10), np.ones(39))


def test_scatter_add_and_segment_sum_by_partials():
    rng = np.random.default_rng(1)
    idx = rng.integers(-64, 64, size=10_000)
    vals = rng.standard_normal(10_000)
    dst = rng.standard_normal(64)
    got = accy.dask.scatter_add(dst, da.from_array(idx, chunks=1500),
                                da.from_array(vals, chunks=1500)).compute()
    want = dst.copy()
    np.add.at(want, idx, vals)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    seg = rng.integers(0, 17, size=10_000)
    v2 = rng.standard_normal((10_000, 3))
    got = accy.dask.segment_sum(da.from_array(v2, chunks=(999, 3)), da.from_array(seg, chunks=999),
                                17).compute()
    want = np.zeros((17, 3))
    np.add.at(want, seg, v2)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dist,dtype", [("uniform", "f32"), ("uniform", "f64"),
                                        ("normal", "f32")])
@pytest.mark.parametrize("algorithm", ["philox4x32-10", "threefry2x32-20"])
def test_random_streams_equal_the_single_machine_call_bit_for_bit(dist, dtype, algorithm):
    fn = getattr(accy.dask, dist)
    one = getattr(ak.random, dist)((1001, 3), 42, dtype, algorithm, offset=5)
    got = fn((1001, 3), 42, chunks=(251, 3), dtype=dtype, algorithm=algorithm,
             offset=5).compute()
    assert got.dtype == one.dtype
    np.testing.assert_array_equal(got.view(np.uint8), one.view(np.uint8))


def test_random_chunks_along_a_later_axis_are_refused():
    with pytest.raises(UnsupportedError, match="first axis"):
        accy.dask.uniform((10, 10), 1, chunks=(10, 5))


@pytest.mark.parametrize("dtype", ["f4", "i4", "f8"])
def test_sample_sort_equals_numpy(dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(100_003) * 1000).astype(dtype)
    if dtype == "f4":
        x[::97] = np.nan
        x[::101] = -0.0
    got = accy.dask.sort(da.from_array(x, chunks=12_500)).compute()
    np.testing.assert_array_equal(got, np.sort(x))


def test_sort_of_skewed_keys():
    x = np.concatenate([np.zeros(50_000, np.int32), np.arange(1000, dtype=np.int32)])
    got = accy.dask.sort(da.from_array(x, chunks=7000), npartitions=5).compute()
    np.testing.assert_array_equal(got, np.sort(x))
