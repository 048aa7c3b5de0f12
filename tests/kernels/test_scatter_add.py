"""scatter_add (atomic and sorted) vs numpy.add.at: dtypes, duplicates, axes, sizes."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import CapabilityError, UnsupportedError
from accy.families import IndexOutOfRangeError
from accy.testing.reference import assert_close

import accy_kernels as ak
from accy_kernels import references as ref

from .conftest import BIG, SIZES, random_values

DTYPES = ["f32", "f64", "i32", "i64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_scatter_add_duplicates(backend, dtype, n):
    dst = random_values(dtype, 13)
    idx = np.random.default_rng(1).integers(-13, 13, n)
    vals = random_values(dtype, n, seed=4)
    assert_close(ak.scatter_add(dst, idx, vals, backend=backend),
                 ref.scatter_add(dst, idx, vals), scale=10)


def test_scatter_add_axis(backend):
    dst = random_values("f64", 5 * 7).reshape(5, 7)
    idx = np.array([0, 6, 6, -1, 3])
    vals = random_values("f64", 25).reshape(5, 5)
    assert_close(ak.scatter_add(dst, idx, vals, axis=1, backend=backend),
                 ref.scatter_add(dst, idx, vals, axis=1))


def test_scatter_add_big(backend):
    idx = np.random.default_rng(3).integers(0, 1000, BIG)
    vals = np.ones(BIG, np.int64)
    got = ak.scatter_add(np.zeros(1000, np.int64), idx, vals, backend=backend)
    np.testing.assert_array_equal(got, np.bincount(idx, minlength=1000))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_sorted_is_sequential_order(backend, dtype):
    # the sorted variant sums each target in index-position order: bitwise numpy.add.at
    dst = random_values(dtype, 4 * 13 * 3).reshape(4, 13, 3)
    idx = np.random.default_rng(5).integers(-13, 13, 500)
    vals = random_values(dtype, 4 * 500 * 3, seed=6).reshape(4, 500, 3)
    got = ak.scatter_add(dst, idx, vals, axis=1, backend=backend, variant="sorted")
    np.testing.assert_array_equal(got, ref.scatter_add(dst, idx, vals, axis=1))


def test_scatter_add_atomic_refused_without_the_feature(backend):
    from accy.plugins import open_backend

    features = open_backend(backend).capabilities().features
    if "float64_atomics" in features:
        pytest.skip("capability: the backend has f64 atomic add")
    with pytest.raises(CapabilityError, match="float64_atomics"):
        ak.scatter_add(np.zeros(3), np.array([0]), np.ones(1), backend=backend,
                       variant="atomic")


def test_scatter_add_errors():
    with pytest.raises(UnsupportedError, match="u32|uint32"):
        ak.scatter_add(np.zeros(3, np.uint32), np.array([0]), np.ones(1, np.uint32))
    with pytest.raises(IndexOutOfRangeError):
        ak.scatter_add(np.zeros(3), np.array([5]), np.ones(1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tiles", [None, 1, 3, 8])
def test_scatter_add_privatized(backend, dtype, tiles):
    # per-tile private histograms (no atomics): every dtype on every backend, any tile count
    from accy.families import Candidate
    cand = Candidate(64, 1, (("tiles", tiles),)) if tiles else None
    rng = np.random.default_rng(7)
    dst = random_values(dtype, 3 * 11 * 2).reshape(3, 11, 2)
    idx = rng.integers(-11, 11, 37)
    vals = random_values(dtype, 3 * 37 * 2, seed=5).reshape(3, 37, 2)
    assert_close(ak.scatter_add(dst, idx, vals, axis=1, backend=backend, variant="privatized",
                                candidate=cand),
                 ref.scatter_add(dst, idx, vals, axis=1), scale=10)
    flat = random_values(dtype, 50)
    fidx = rng.integers(0, 50, 5000)
    fvals = random_values(dtype, 5000, seed=6)
    assert_close(ak.scatter_add(flat, fidx, fvals, backend=backend, variant="privatized",
                                candidate=cand),
                 ref.scatter_add(flat, fidx, fvals), scale=100)


def test_scatter_add_privatized_empty(backend):
    dst = random_values("f64", 9)
    got = ak.scatter_add(dst, np.zeros(0, np.int64), np.zeros(0), backend=backend,
                         variant="privatized")
    np.testing.assert_array_equal(got, dst)


@pytest.mark.parametrize("tiles", [1, 3])
def test_scatter_add_privatized_host_blocks(tiles):
    """The host histogram loop takes the values in blocks of HOST_BLOCK with one range test
    per block: blocks all in [0, n), blocks with a negative index (the per-value path),
    a tail shorter than a block, tiles that start mid-block; one tile adds in position
    order, so bitwise numpy.add.at into zeros; a bad index at any lane names its position."""
    from accy.families import Candidate
    from accy_kernels.scatter_add_privatized import HOST_BLOCK

    cand = Candidate(64, 1, (("tiles", tiles),))
    rng = np.random.default_rng(11)
    total = 5 * HOST_BLOCK * 7 + 3
    idx = rng.integers(0, 29, total)
    idx[HOST_BLOCK + 2] = -1  # one block through the per-value path
    idx[-2] = -29  # and the tail
    vals = rng.standard_normal(total)
    dst = np.zeros(29)
    got = ak.scatter_add(dst, idx, vals, backend="cpu", variant="privatized", candidate=cand)
    want = ref.scatter_add(dst, idx, vals)
    if tiles == 1:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    ints = ak.scatter_add(np.arange(29), idx, np.arange(total), backend="cpu",
                          variant="privatized", candidate=cand)
    np.testing.assert_array_equal(ints, ref.scatter_add(np.arange(29), idx, np.arange(total)))
    for pos, bad in ((HOST_BLOCK * 3 + 5, 29), (HOST_BLOCK * 2, -30), (total - 1, 2**40)):
        wrong = idx.copy()
        wrong[pos] = bad
        with pytest.raises(IndexOutOfRangeError, match=f"position {pos}"):
            ak.scatter_add(dst, wrong, vals, backend="cpu", variant="privatized",
                           candidate=cand)


@pytest.mark.parametrize("tiles", [1, 3])
def test_scatter_add_privatized_host_rows(tiles):
    """Along an axis the host histogram adds whole rows of the trailing elements (one
    range check per row, (o, j) counters carried across the tile, no division per value):
    an embedding-style [V, D] update and a middle axis of a 3-D target (rows wrap from one
    leading index to the next inside a tile); one tile adds in position order, so bitwise
    numpy.add.at into zeros; a bad index names its position."""
    from accy.families import Candidate

    cand = Candidate(64, 1, (("tiles", tiles),))
    rng = np.random.default_rng(13)
    idx = rng.integers(-11, 11, 37)
    for shape, axis, vshape in (((11, 19), 0, (37, 19)), ((3, 11, 5), 1, (3, 37, 5)),
                                ((4, 11), 1, (4, 37))):
        vals = rng.standard_normal(vshape)
        got = ak.scatter_add(np.zeros(shape), idx, vals, axis=axis, backend="cpu",
                             variant="privatized", candidate=cand)
        want = ref.scatter_add(np.zeros(shape), idx, vals, axis=axis)
        if tiles == 1:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        ints = (vals * 100).astype(np.int32)
        np.testing.assert_array_equal(
            ak.scatter_add(np.ones(shape, np.int32), idx, ints, axis=axis, backend="cpu",
                           variant="privatized", candidate=cand),
            ref.scatter_add(np.ones(shape, np.int32), idx, ints, axis=axis))
    wrong = idx.copy()
    wrong[29] = 11
    with pytest.raises(IndexOutOfRangeError, match="position 29"):
        ak.scatter_add(np.zeros((3, 11, 5)), wrong, np.ones((3, 37, 5)), axis=1,
                       backend="cpu", variant="privatized", candidate=cand)


def test_scatter_add_atomic_host_rows():
    """Along an axis the host atomic kernel takes blocks of ROW_BLOCK elements of one row
    per work-item (divisions and range check per block): rows longer than a block with a
    partial last block, a leading axis, negative indices; a bad index names its position."""
    from accy_kernels.scatter_add_atomic import ROW_BLOCK

    rng = np.random.default_rng(17)
    idx = rng.integers(-9, 9, 23)
    inner = 2 * ROW_BLOCK + 22
    for dtype in (np.int64, np.float64):
        dst = rng.integers(-5, 5, (2, 9, inner)).astype(dtype)
        vals = rng.integers(-5, 5, (2, 23, inner)).astype(dtype)
        got = ak.scatter_add(dst, idx, vals, axis=1, backend="cpu", variant="atomic")
        np.testing.assert_array_equal(got, ref.scatter_add(dst, idx, vals, axis=1))
    small = ak.scatter_add(np.zeros((9, 3)), idx, np.ones((23, 3)), backend="cpu",
                           variant="atomic")
    np.testing.assert_array_equal(small, ref.scatter_add(np.zeros((9, 3)), idx,
                                                         np.ones((23, 3))))
    wrong = idx.copy()
    wrong[17] = -10
    with pytest.raises(IndexOutOfRangeError, match="position 17"):
        ak.scatter_add(np.zeros((9, inner)), wrong, np.ones((23, inner)), backend="cpu",
                       variant="atomic")


def test_scatter_add_default_privatizes_small_outputs_on_host():
    # the default on a host-memory backend (any thread count): private histograms when
    # threads x outputs <= values; otherwise the capability choice (atomic / sorted)
    from accy.families import backend_object
    from accy_kernels._dispatch import pick_accumulate

    from accy_backend_cpu import CpuBackend

    be = backend_object("cpu")
    assert pick_accumulate(be, "f64", 1000, 10**6) == "privatized"
    one = CpuBackend(num_threads=1)
    try:
        assert pick_accumulate(one, "f64", 1000, 10**6) == "privatized"
    finally:
        one.close()
    assert pick_accumulate(be, "f64", 10**6, 10**6) == "atomic"
    idx = np.random.default_rng(2).integers(0, 100, 100_000)
    vals = np.random.default_rng(3).standard_normal(100_000)
    np.testing.assert_allclose(ak.scatter_add(np.zeros(100), idx, vals, backend=be),
                               np.bincount(idx, vals, 100), rtol=1e-9, atol=1e-9)


class _Lanes:
    """Capabilities of a lane device (lavapipe-like): no host memory, 8-wide subgroups."""

    name = "lanes"

    def __init__(self, features=("f64", "i64", "float_atomics"), subgroup=8,
                 loops=65535) -> None:
        from types import SimpleNamespace

        self.caps = SimpleNamespace(features=frozenset(features), subgroup_size=subgroup,
                                    max_loop_iterations=loops, backend="lanes")

    def capabilities(self):
        return self.caps


def test_scatter_add_default_without_atomics_privatizes_on_lane_devices():
    # lavapipe (no f64/i64 atomics): privatized with one tile per CPU measured ~6x faster
    # than sorted at 65,536 values (bench/scatter_add_variants.py); by capability only
    from accy_kernels._dispatch import pick_accumulate

    lanes = _Lanes()
    assert pick_accumulate(lanes, "f64", 4096, 65536) == "privatized"
    assert pick_accumulate(lanes, "i64", 4096, 65536) == "privatized"
    assert pick_accumulate(lanes, "f32", 4096, 65536) == "atomic"  # atomics still win
    assert pick_accumulate(lanes, "f64", 10**6, 1000) == "sorted"  # copies > values
    gpu = _Lanes(subgroup=32)  # a GPU without f64 atomics keeps the sorted default
    assert pick_accumulate(gpu, "f64", 4096, 65536) == "sorted"
    # PoCL-like (atomics, no loop budget): privatized beat its atomics 1.2-1.7x
    pocl = _Lanes(("f64", "i64", "float_atomics", "float64_atomics", "int64_atomics"), 1, None)
    assert pick_accumulate(pocl, "f32", 4096, 65536) == "privatized"
    assert pick_accumulate(pocl, "f64", 10**6, 1000) == "atomic"


@pytest.mark.vulkan
def test_scatter_add_default_on_vulkan_is_right_and_privatized_without_atomics():
    from accy.families import backend_object
    from accy.plugins import probe_backend
    from accy_kernels._dispatch import has_atomic_add, last_choice

    if not probe_backend("vulkan")[0]:
        pytest.skip("vulkan unavailable")
    be = backend_object("vulkan")
    if has_atomic_add(be, "f64") or be.capabilities().subgroup_size >= 32:
        pytest.skip("not a lane device without f64 atomics")
    rng = np.random.default_rng(7)
    idx = rng.integers(0, 256, 4096).astype(np.int32)
    vals = rng.standard_normal(4096)
    got = ak.scatter_add(np.zeros(256), idx, vals, backend=be)
    assert last_choice()[0] == "scatter_add.privatized"
    np.testing.assert_allclose(got, np.bincount(idx, vals, 256), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("variant", ["atomic", "privatized", "sorted"])
def test_scatter_add_out_of_range_every_variant(backend, variant):
    """atomic and privatized check the range inside their kernels (issue 14), sorted on the
    host; all raise the same error naming the first bad position, in 1-D and along an axis."""
    from accy.errors import CapabilityError

    idx = np.zeros(70001, np.int64)
    idx[-1] = -1
    try:
        got = ak.scatter_add(np.zeros(3, np.float32), idx, np.ones(idx.size, np.float32),
                             backend=backend, variant=variant)
    except CapabilityError as e:
        pytest.skip(str(e))
    np.testing.assert_array_equal(got, [70000, 0, 1])
    idx[69999] = 3
    with pytest.raises(IndexOutOfRangeError, match="position 69999"):
        ak.scatter_add(np.zeros(3, np.float32), idx, np.ones(idx.size, np.float32),
                       backend=backend, variant=variant)
    with pytest.raises(IndexOutOfRangeError, match="position 1"):
        ak.scatter_add(np.zeros((2, 3), np.float32), np.array([0, -4]),
                       np.ones((2, 2), np.float32), axis=1, backend=backend, variant=variant)
