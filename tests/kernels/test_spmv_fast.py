"""The per-matrix prepared launch of ``spmv`` on the CPU (accy_kernels.spmv_fast): the same
answers as scipy, and never a stale one (in-place edits are read, replaced arrays re-prepare,
anything it does not cover takes the ordinary path)."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
from accy.errors import InputError
from accy_kernels._dispatch import last_choice

import accy_kernels as ak
from accy_kernels import spmv_fast

from .test_spmv_csr_rows import _documented_order

MATRICES = Path(__file__).resolve().parents[1] / "data" / "matrices"


@pytest.fixture(autouse=True)
def _fresh():
    spmv_fast.clear_prepared()
    yield
    spmv_fast.clear_prepared()


def _matrix(rows=37, cols=29, density=0.2, seed=0, dtype=np.float64):
    a = scipy.sparse.random(rows, cols, density, format="csr", random_state=seed, dtype=dtype)
    a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    return a


def test_repeated_calls_match_scipy_and_prepare_once():
    a = ak.read_matrix(MATRICES / "west0067.mtx")
    a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    x = np.random.default_rng(1).standard_normal(a.shape[1])
    for _ in range(3):
        np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12, atol=1e-12)
    assert spmv_fast.prepared_count() == 1
    assert last_choice()[0] == "spmv.csr_scalar"
    y1, y2 = ak.spmv(a, x), ak.spmv(a, x)
    assert y1 is not y2 and not np.shares_memory(y1, y2)  # a fresh result per call


def test_in_place_edits_are_seen():
    a = _matrix()
    x = np.random.default_rng(2).standard_normal(a.shape[1])
    ak.spmv(a, x)
    a.data *= 3.0  # values
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
    a.indices[:] = (a.indices + 1) % a.shape[1]  # structure, same arrays
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
    x[:] = 1.0  # the same x object, new values
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)


def test_replaced_arrays_and_other_inputs_take_the_ordinary_path():
    a = _matrix(seed=3)
    x = np.random.default_rng(3).standard_normal(a.shape[1])
    ak.spmv(a, x)
    a.data = a.data * -2.0  # a new array object
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
    xs = np.random.default_rng(4).standard_normal(2 * a.shape[1])[::2]  # strided x
    np.testing.assert_allclose(ak.spmv(a, xs), a @ xs, rtol=1e-12)
    x32 = x.astype(np.float32)  # another dtype: converted by the ordinary path
    np.testing.assert_allclose(ak.spmv(a, x32), a @ x32.astype(np.float64), rtol=1e-6)
    with pytest.raises(InputError, match="x must have shape"):
        ak.spmv(a, np.ones(a.shape[1] + 1))
    wide = scipy.sparse.csr_matrix(a)  # int64 indices: needs a conversion, never prepared
    wide.indices = wide.indices.astype(np.int64)
    before = spmv_fast.prepared_count()
    np.testing.assert_allclose(ak.spmv(wide, x), a @ x, rtol=1e-12)
    assert spmv_fast.prepared_count() == before


@pytest.mark.parametrize("shape", [(0, 0), (3, 4), (5, 0)])
def test_empty_matrices(shape):
    a = scipy.sparse.csr_matrix(shape, dtype=np.float32)
    a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    x = np.ones(shape[1], np.float32)
    for _ in range(2):
        y = ak.spmv(a, x)
        assert y.shape == (shape[0],) and y.dtype == np.float32 and not y.any()


def test_f32_and_a_dead_matrix_is_dropped():
    a = _matrix(300, 200, 0.05, seed=5, dtype=np.float32)
    x = np.random.default_rng(5).standard_normal(200).astype(np.float32)
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-5, atol=1e-5)
    assert spmv_fast.prepared_count() == 1
    del a
    gc.collect()
    assert spmv_fast.prepared_count() == 0


_RACE = """
import gc, threading
import numpy as np, scipy.sparse as sp
import accy_kernels as ak
from accy.families import runner
from accy_kernels import spmv_fast

x = np.ones(120, np.float32)
for trial in range(6):
    runner._LOADED.clear()  # every thread compiles and loads the same kernel at once
    spmv_fast.clear_prepared()
    mats = []
    for i in range(6):
        m = sp.random(120, 120, density=0.05, format="csr", dtype=np.float32,
                      random_state=10 * trial + i)
        m.indptr, m.indices = m.indptr.astype(np.int32), m.indices.astype(np.int32)
        mats.append(m)
    gate = threading.Barrier(len(mats))

    def first(m):
        gate.wait()
        ak.spmv(m, x, backend="cpu")

    threads = [threading.Thread(target=first, args=(m,)) for m in mats]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()  # a kernel lost in the race is freed here
    for m in mats:
        np.testing.assert_allclose(ak.spmv(m, x, backend="cpu"), m @ x, rtol=1e-5)
print("ok")
"""


def test_threads_preparing_at_once_keep_their_kernels_alive():
    # Dask's threads prepare row blocks of one shape at once: each loads the same kernel, and
    # a prepared launch once held only the raw address of a loaded kernel that lost the race
    # for the family cache (a segfault in CI). Run apart, so that a crash fails one test.
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _RACE],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


_DIES_UNDER_LOCK = """
import numpy as np, scipy.sparse as sp
import accy_kernels as ak
from accy_kernels import _layout_cache, spmv_fast

x = np.ones(50, np.float32)
for cache, fmt in ((spmv_fast, "csr"), (_layout_cache, "ell")):
    m = sp.random(40, 50, density=0.1, format="csr", dtype=np.float32, random_state=1)
    m.indptr, m.indices = m.indptr.astype(np.int32), m.indices.astype(np.int32)
    kw = {} if fmt == "csr" else {"format": fmt}
    np.testing.assert_allclose(ak.spmv(m, x, backend="cpu", **kw), m @ x, rtol=1e-5)
    with cache._lock:  # the matrix dies in a thread that holds the cache's lock
        del m
    assert (spmv_fast.prepared_count() if cache is spmv_fast
            else _layout_cache.cache_info()["entries"]) == 0
print("ok")
"""


def test_a_matrix_dying_while_its_cache_lock_is_held_does_not_hang():
    # the weak-reference callback took the cache's non-reentrant lock: a matrix collected
    # in a thread inside the locked section (a collection triggered there) hung it for good
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _DIES_UNDER_LOCK],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_two_matrices_in_turn_and_the_recent_one_frees_its_arrays():
    import weakref

    a, b = _matrix(40, 30, seed=7), _matrix(40, 30, seed=8)
    x = np.random.default_rng(7).standard_normal(30)
    for _ in range(3):  # the thread's recent entry switches between them; never mixed up
        np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
        np.testing.assert_allclose(ak.spmv(b, x), b @ x, rtol=1e-12)
    data = weakref.ref(b.data)
    del b  # the latest matrix of this thread: nothing of it may stay alive
    gc.collect()
    assert data() is None and spmv_fast.prepared_count() == 1
    x1 = np.ones(1)  # one column: any stride of x is accepted
    one = _matrix(5, 1, 1.0, seed=9)
    np.testing.assert_allclose(ak.spmv(one, x1), one @ x1, rtol=1e-12)


def test_whole_rows_kernel_sums_in_the_documented_order():
    # the prepared launch and the ordinary csr_scalar call run the same whole-rows kernel
    # on the CPU: the very same bits, short rows in scipy's order, long rows in four chains
    for name in ("494_bus.mtx", "west0067.mtx", "rajat01.mtx"):
        a = ak.read_matrix(MATRICES / name).astype(np.float64)
        x = np.random.default_rng(1).standard_normal(a.shape[1])
        fast = ak.spmv(a, x)
        assert spmv_fast.prepared_count() >= 1
        np.testing.assert_array_equal(fast, ak.spmv(a, x, variant="csr_scalar"))
        np.testing.assert_array_equal(fast, _documented_order(a, x))
        short = np.diff(a.indptr) < 8
        np.testing.assert_array_equal(fast[short], (a @ x)[short])


def test_out_of_range_entries_raise_naming_the_position():
    a = _matrix(30, 20, 0.3, seed=11)
    x = np.random.default_rng(11).standard_normal(20)
    bad = a.copy()
    bad.indices[5] = 20  # built so: refused before anything is prepared
    with pytest.raises(InputError, match=r"A.indices\[5\] = 20 .* out of range for 20"):
        ak.spmv(bad, x)
    with pytest.raises(InputError, match=r"A.indices\[5\] = 20"):
        ak.spmv(bad, x, variant="csr_scalar")  # the ordinary path checks as well
    ak.spmv(a, x)
    assert spmv_fast.prepared_count() == 1
    j = a.nnz - 1
    a.indices[j] = -3  # an in-place edit after preparing: caught by the check kernel
    with pytest.raises(InputError, match=rf"A.indices\[{j}\] = -3 \(row \d+\)"):
        ak.spmv(a, x)
    a.indices[j] = 0
    a.indptr[4] = a.indptr[5] + 1  # row pointers that decrease
    with pytest.raises(InputError, match=r"indptr decreases at row 4"):
        ak.spmv(a, x)
    a.indptr[4] = a.indptr[5]
    a.indptr[-1] = a.indices.size + 1  # past the stored entries
    with pytest.raises(InputError, match=r"exceeds the \d+ stored entries"):
        ak.spmv(a, x)
    a.indptr[-1] = a.indices.size
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)  # well-formed again


def test_empty_rows_one_row_long_rows_and_int64_indices():
    rng = np.random.default_rng(12)
    lengths = np.array([0, 1, 0, 700, 3, 0, 5000, 2, 0])  # empty, short and long rows
    indptr = np.zeros(lengths.size + 1, np.int32)
    np.cumsum(lengths, out=indptr[1:])
    cols = rng.integers(0, 300, indptr[-1]).astype(np.int32)
    a = scipy.sparse.csr_matrix((rng.standard_normal(cols.size), cols, indptr), (9, 300))
    x = rng.standard_normal(300)
    for m in (a, a[3:4], a[:1]):  # the whole matrix, one long row, one empty row
        m.indptr, m.indices = m.indptr.astype(np.int32), m.indices.astype(np.int32)
        y = ak.spmv(m, x)
        np.testing.assert_allclose(y, m @ x, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(y, ak.spmv(m, x, variant="csr_scalar"))
    wide = a.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    np.testing.assert_array_equal(ak.spmv(wide, x), ak.spmv(a, x))
    xs = np.repeat(x, 2)[::2]  # a non-contiguous x: the ordinary path, same sums
    np.testing.assert_array_equal(ak.spmv(a, xs), ak.spmv(a, x))


_CONCURRENT = """
import threading
import numpy as np, scipy.sparse as sp
import accy_kernels as ak

rng = np.random.default_rng(0)
mats = []
for n, density in ((60, 0.1), (3000, 0.003), (400, 0.2)):  # the last one releases the GIL
    m = sp.random(n, n, density=density, format="csr", random_state=n)
    m.indptr, m.indices = m.indptr.astype(np.int32), m.indices.astype(np.int32)
    mats.append(m)
xs = [rng.standard_normal(m.shape[1]) for m in mats]
want = [m @ x for m, x in zip(mats, xs)]
# a third of the threads use SELL handles, a third CSR ones; the two larger matrices are
# split over the pool (one call at a time: the others make the native call meanwhile)
handles = [[ak.prepare_spmv(m, fmt) for m in mats] for fmt in ("sell", "csr")]
gate = threading.Barrier(6)
errors = []

def work(k):
    gate.wait()
    for i in range(300):  # every thread calls every prepared matrix at once
        j = (i + k) % 3
        y = ak.spmv(mats[j], xs[j]) if k % 3 == 2 else handles[k % 3][j] @ xs[j]
        if not np.allclose(y, want[j], rtol=1e-12, atol=1e-12):
            errors.append((k, i, j))

threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("ok" if not errors else errors[:5])
"""


def test_concurrent_calls_of_one_prepared_matrix_from_threads():
    # the native call keeps its pointers and error word on each caller's stack: threads
    # share a prepared matrix without a lock; run apart, so that a crash fails one test
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _CONCURRENT],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
