"""The CPU rows kernel of spmv.csr_scalar (accy_kernels.spmv_csr_rows): the documented
summation order for every straight-line width (so the same bits as the other paths), masked
slots that never leak a neighbour row's inf/NaN, the width chosen from row lengths, and the
fused structure check in every block."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from accy.errors import InputError
from accy_kernels.spmv_csr_rows import (
    MAX_SLOTS,
    block_starts,
    choose_slots,
    csr_rows_kernel,
    rows_scalars,
    sampled_slots,
)

import accy_kernels as ak
from accy_kernels import spmv_fast

pytest.importorskip("accy_backend_cpu")

BLOCK = 32  # rows + entries of a block in these tests (several blocks on small matrices)


@pytest.fixture(autouse=True)
def _fresh():
    spmv_fast.clear_prepared()
    yield
    spmv_fast.clear_prepared()


def _lengths_matrix(dtype, seed=0):
    """Rows of 0..12 entries (every length on both sides of every width), a few long rows,
    over several blocks; one column of x is inf, one NaN."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 13, 5 * BLOCK + 7)
    lengths[[3, BLOCK - 1, 2 * BLOCK]] = [40, 9, 101]  # long rows
    indptr = np.zeros(lengths.size + 1, np.int32)
    np.cumsum(lengths, out=indptr[1:])
    n_cols = 120
    indices = np.concatenate([rng.choice(n_cols, n, replace=False) for n in lengths])
    data = rng.standard_normal(indptr[-1]).astype(dtype)
    a = scipy.sparse.csr_matrix((data, indices.astype(np.int32), indptr),
                                shape=(lengths.size, n_cols))
    x = rng.standard_normal(n_cols).astype(dtype)
    x[7], x[11] = np.inf, np.nan
    return a, x


def _documented_order(a, x):
    from accy_kernels.spmv_csr_scalar import CHAINS, SHORT_ROW

    y = np.zeros(a.shape[0], a.dtype)
    with np.errstate(invalid="ignore"):
        for r in range(a.shape[0]):
            row = slice(a.indptr[r], a.indptr[r + 1])
            p = [v * x[c] for v, c in zip(a.data[row], a.indices[row], strict=True)]
            acc = a.dtype.type(0)
            if len(p) >= SHORT_ROW:
                sums = [a.dtype.type(0)] * CHAINS
                whole = len(p) - len(p) % CHAINS
                for j in range(whole):
                    sums[j % CHAINS] += p[j]
                acc = (sums[0] + sums[1]) + (sums[2] + sums[3])
                p = p[whole:]
            for v in p:
                acc += v
            y[r] = acc
    return y


def _run(a, x, slots, checked, exact=False):
    """The rows kernel alone, as one native call; y, or None when the check failed."""
    from accy.families import backend_object
    from accy.families.runner import _load
    from accy.runtime.fast_call import _address
    from accy_backend_cpu.native_call import bind_native_call, native_calls_available

    if not native_calls_available():
        pytest.skip("no native calls in this interpreter")
    be = backend_object("cpu")
    dtype = "f32" if a.dtype == np.float32 else "f64"
    k = _load(be, csr_rows_kernel(dtype, slots, checked, exact))
    starts = block_starts(a.indptr, BLOCK)
    arrays = [_address(v) for v in (starts, a.indptr, a.indices, a.data)]
    slots_ = (["err"] if checked else []) + [("arg", 0), *arrays, ("arg", 1)]
    call = bind_native_call(be, [(k, starts.size - 1,
                                  rows_scalars(*a.shape, a.indices.size), slots_)],
                            release_gil=False)
    y = np.empty(a.shape[0], a.dtype)
    return y if call(y, x, None) is y else None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("slots", [0, 1, 4, MAX_SLOTS])
def test_every_width_sums_in_the_documented_order(dtype, slots):
    a, x = _lengths_matrix(dtype)
    want = _documented_order(a, x)
    for checked in (True, False):
        np.testing.assert_array_equal(_run(a, x, slots, checked), want)
    if slots:
        np.testing.assert_array_equal(_run(a, x, slots, True, exact=True), want)
    # short rows are scipy's bits; the inf/NaN columns reach only the rows that store them
    short = np.diff(a.indptr) < 8
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(want[short], (a @ x)[short])
    touched = np.isin(np.arange(a.shape[1]), [7, 11])
    finite = ~(np.abs(a) @ touched.astype(dtype) > 0)
    assert np.isfinite(want[finite]).all() and not np.isfinite(want[~finite]).any()


def test_width_chosen_from_row_lengths():
    def ptr(lengths):
        return np.concatenate([[0], np.cumsum(lengths)])

    assert choose_slots(ptr([5] * 90 + [4] * 10)) == (5, True)  # mostly 5: unmasked arm
    assert choose_slots(ptr([5] * 60 + [4] * 40)) == (5, False)
    assert choose_slots(ptr([3] * 50 + [100] * 50)) == (3, False)
    assert choose_slots(ptr([200] * 10)) == (0, False)
    assert choose_slots(ptr([])) == (0, False) == choose_slots(ptr([0, 0]))
    assert 1 <= choose_slots(ptr([2, 7, 3, 6, 1, 5] * 20))[0] <= MAX_SLOTS
    big = ptr(np.tile([2, 2, 2, 9], 5000))  # sampled: the same choice as the whole
    assert sampled_slots(big) == choose_slots(big) == (2, False)


def test_blocks_partition_the_rows_balanced_by_nonzeros():
    rng = np.random.default_rng(5)
    lengths = np.minimum(rng.zipf(1.8, 3000), 5000)  # power-law rows, some very long
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    starts = block_starts(indptr, 256)
    assert starts.dtype == np.int32 and starts[0] == 0 and starts[-1] == lengths.size
    assert (np.diff(starts) > 0).all()
    work = np.diff(indptr[starts] + starts)  # rows + entries of each block
    one_row = np.diff(starts) == 1
    assert (work[~one_row] <= 256 + lengths.max()).all() and work.max() >= 256
    assert abs(np.median(work[~one_row]) - 256) < 64  # about the asked work each
    assert block_starts(np.zeros(1, np.int32)).tolist() == [0]
    assert block_starts(np.zeros(4, np.int32)).tolist() == [0, 3]  # empty rows: one block


@pytest.mark.parametrize("split", [False, True])
def test_fused_check_flags_a_bad_block_anywhere(monkeypatch, split):
    from accy_kernels import spmv_bound, spmv_csr_rows

    monkeypatch.setattr(spmv_csr_rows, "BLOCK_WORK", BLOCK)  # many blocks in a small matrix
    if split:  # the native call split over the pool's workers (enough work to split)
        monkeypatch.setattr(spmv_bound, "SPLIT_ENTRIES", 0)
        monkeypatch.setattr(spmv_bound, "WORK_PER_ENTRY", 1 << 16)
    a, _ = _lengths_matrix(np.float64, seed=3)
    x = np.random.default_rng(3).standard_normal(a.shape[1])
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
    assert spmv_fast.prepared_count() == 1
    for r in (BLOCK, 2 * BLOCK + 5, a.shape[0] - 1):  # a block's first row, inside, last
        old = a.indptr[r]
        a.indptr[r] = a.indptr[r + 1] + 1  # decreasing at row r
        with pytest.raises(InputError, match=rf"indptr decreases at row {r}"):
            ak.spmv(a, x)
        a.indptr[r] = old
    for j in (a.indptr[BLOCK], a.indptr[3 * BLOCK + 1] + 1, a.nnz - 1):
        old = a.indices[j]
        a.indices[j] = a.shape[1]  # one column too far, in a middle or the last block
        with pytest.raises(InputError, match=rf"A.indices\[{j}\] = {a.shape[1]}"):
            ak.spmv(a, x)
        a.indices[j] = old
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
    # a valid in-place edit of the structure: the blocks made before still partition it
    a.indptr[1:-1] = np.sort(np.random.default_rng(4).integers(0, a.nnz, a.shape[0] - 1))
    np.testing.assert_allclose(ak.spmv(a, x), a @ x, rtol=1e-12)
    assert spmv_fast.prepared_count() == 1
    assert _run(a, x, 3, True) is not None
    a.indptr[-1] = a.indices.size + 1  # past the stored entries: the last block refuses
    assert _run(a, x, 3, True) is None


def test_a_product_of_split_entries_is_split_over_the_pool():
    # SPLIT_ENTRIES and WORK_PER_ENTRY against the pool's own threshold: a matrix prepared
    # for a split launch is split (were it not, the bound launch would only cost more)
    from accy.families import backend_object
    from accy_kernels.spmv_bound import SPLIT_ENTRIES, split_work

    pool = backend_object("cpu").pool
    if pool.num_threads < 2:
        pytest.skip("one thread")
    n_rows = SPLIT_ENTRIES // 6
    indptr = np.arange(n_rows + 1) * 5  # rows of 5: n_rows + entries = SPLIT_ENTRIES
    groups = block_starts(indptr).size - 1
    assert pool.parallel(groups, -(-split_work(n_rows, int(indptr[-1])) // groups))
