"""``lanes`` reductions (accy.passes.reduce_lanes): block edges, column tails, NaN, accuracy.

The CPU outlines row/column/full reductions with independent accumulators; other backends
keep ``serial``/``tree`` kernels, so the same programs check that both agree with numpy.
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import CapabilityError
from accy.passes.reduce_lanes import COLUMN_WIDTH, ROW_LANES

BLOCK = ROW_LANES * 8
# rows: empty-ish, one, below/at/above one block, prime; columns: below/at/above the width
SHAPES = [(1, 1), (3, 1), (2, 2 * ROW_LANES - 1), (2, BLOCK), (3, BLOCK + 1), (2, 1031),
          (1, 3 * BLOCK + 7), (5, 0), (COLUMN_WIDTH + 3, 2), (3, COLUMN_WIDTH + 5), (4, 5, 6),
          (3, 4 * COLUMN_WIDTH + 453)]  # wider columns per work-item (column_width), a tail

OTHER_BACKENDS = [(3, BLOCK + 1), (COLUMN_WIDTH + 3, 2)]
OTHER_DTYPES = [(3, BLOCK + 1), (2, 1031), (3, COLUMN_WIDTH + 5), (4, 5, 6),
                (3, 4 * COLUMN_WIDTH + 453)]  # f64, i32


def test_column_width_whole_rows_within_bounds():
    from accy.passes.reduce_lanes import COLUMN_BYTES, column_width

    assert column_width(4096, 4) == 4096  # a whole 16 KiB row per work-item
    assert column_width(4096, 8) == COLUMN_BYTES // 8  # at most COLUMN_BYTES
    assert column_width(5000, 4) == 2560  # two nearly equal blocks, multiples of 64
    assert column_width(100, 4) == 100  # never more than the outputs


def test_column_split_bounds():
    from accy.passes.reduction_split import COLUMN_ITEMS, MIN_ROWS, column_splits

    assert column_splits(1, 4096, 4096, 4) == (COLUMN_ITEMS, 4096)  # one block: 16 partials
    assert column_splits(1, 4099, 4096, 4) == (COLUMN_ITEMS, 4112)  # a prime: padded
    assert column_splits(1, 4 * MIN_ROWS, 4096, 4) == (4, 4 * MIN_ROWS)  # >= MIN_ROWS rows
    assert column_splits(COLUMN_ITEMS, 4096, 4096, 4)[0] == 1  # enough column blocks
    assert column_splits(1, 64, 64, 4)[0] == 1  # too little work


def _program(x):
    return (anp.sum(x, axis=-1), anp.max(x, axis=-1), anp.min(x, axis=0), anp.sum(x, axis=0),
            anp.sum(x))


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_lanes_match_numpy(backend, shape, dtype):
    if backend != "cpu" and (dtype != "f32" or shape not in OTHER_BACKENDS):
        pytest.skip("the other backends do not outline lanes kernels; cpu covers the rest")
    if dtype != "f32" and shape not in OTHER_DTYPES:
        pytest.skip("f32 covers the block edges; f64 and i32 take one shape of each kind")
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-9, 10, shape).astype({"f32": np.float32, "f64": np.float64,
                                             "i32": np.int32}[dtype])  # float sums exact
    if 0 in shape:  # max/min of an empty axis is an error in numpy: sums only
        got = accy.jit(lambda a: (anp.sum(a, axis=-1), anp.sum(a)), backend=backend)(x)
        np.testing.assert_array_equal(got[0], x.sum(axis=-1))
        assert got[1] == 0
        return
    try:
        got = accy.jit(_program, backend=backend)(x)
    except CapabilityError as e:
        pytest.skip(str(e))
    want = (x.sum(axis=-1), x.max(axis=-1), x.min(axis=0), x.sum(axis=0), x.sum())
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=f"result {k}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lanes_max_min_propagate_nan(backend, dtype):
    x = np.arange(3 * 700, dtype=dtype).reshape(3, 700)
    x[0, 5] = np.nan  # in a block lane
    x[1, 699] = np.nan  # in the tail
    x[2, 600] = -np.inf
    y = x.T.copy()  # the same values as column reductions
    try:
        got = accy.jit(lambda a, b: (anp.max(a, axis=1), anp.min(a, axis=1),
                                     anp.max(b, axis=0), anp.min(b, axis=0)),
                       backend=backend)(x, y)
    except CapabilityError as e:
        pytest.skip(str(e))
    want = (x.max(axis=1), x.min(axis=1), y.max(axis=0), y.min(axis=0))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_row_sum_accuracy_beats_one_accumulator():
    """1 followed by 2**17 values of 1e-8 in f32: one accumulator chain stays at 1.0 (each
    add rounds away), numpy's pairwise sum and the blocked Kahan lanes keep the 1.3e-3."""
    n = 1 << 17
    x = np.full((2, n + 1), 1e-8, np.float32)
    x[:, 0] = 1.0
    exact = 1.0 + n * float(np.float32(1e-8))
    got = np.asarray(accy.jit(lambda a: anp.sum(a, axis=1), backend="cpu")(x))
    np.testing.assert_allclose(got, exact, rtol=2e-7)
    np.testing.assert_allclose(x.sum(axis=1), exact, rtol=2e-6)  # numpy as the anchor


def test_cpu_outlines_lanes_and_splits_by_work():
    """The CPU default is a lanes kernel whose artifact records its loop work, so the pool
    splits a few long work-items (8 rows of 4096) over its threads."""
    from accy.kernel.loops import loop_trips

    x = np.ones((8, 4096), np.float32)
    exe = accy.jit(lambda a: anp.sum(a, axis=1), backend="cpu").compile(x)
    (kernel,) = exe.kernels.values()
    assert kernel.workgroup_size == 1 and not kernel.shared
    assert loop_trips(kernel) >= 4096 // ROW_LANES
    np.testing.assert_array_equal(exe(x)[0], np.full(8, 4096, np.float32))


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("n", [1 << 16, 65537 * 3])  # a divisor near 64; none: padded
def test_full_reduction_split_on_cpu(kind, n):
    """sum(x)/max(x) of many elements: two kernels on the CPU (partials, then the rest)."""
    x = np.random.default_rng(n).integers(-50, 50, n).astype(np.float32)
    x[n // 3] = 1e4
    f = accy.jit(lambda a: (getattr(anp, kind)(a), getattr(anp, kind)(a.reshape(1, n),
                                                                       axis=1, keepdims=True)),
                 backend="cpu")
    assert f.compile(x).kernel_count == 4
    got = f(x)
    want = getattr(np, kind)(x)
    assert np.asarray(got[0]) == want and np.asarray(got[1]).shape == (1, 1)
    assert np.asarray(got[1])[0, 0] == want


@pytest.mark.parametrize(("shape", "axis", "keepdims"), [((3, 70001), 1, True),
                                                         ((2, 66000, 3), 1, False)])
def test_split_keeps_outer_and_inner_axes(shape, axis, keepdims):
    x = np.random.default_rng(1).integers(-9, 10, shape).astype(np.float64)
    got = accy.jit(lambda a: (anp.sum(a, axis=axis, keepdims=keepdims),
                              anp.min(a, axis=axis, keepdims=keepdims)), backend="cpu")(x)
    np.testing.assert_array_equal(got[0], x.sum(axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(got[1], x.min(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize(("shape", "axis"), [((1024, 300), 0), ((4099, 70), 0),
                                             ((2, 2053, 130), 1)])  # a divisor; prime: padded
def test_column_reduction_split_on_cpu(shape, axis):
    """A column reduction of one column block is split into partials over row blocks
    (reduction_split.column_splits): two kernels per reduction, numpy's results (exact:
    integers), max with the identity in the padded rows."""
    x = np.random.default_rng(2).integers(-50, 50, shape).astype(np.float32)
    x[-1, ...] = -1e4  # the last row, next to any padding
    f = accy.jit(lambda a: (anp.sum(a, axis=axis), anp.max(a, axis=axis)), backend="cpu")
    assert f.compile(x).kernel_count == 4
    got = f(x)
    np.testing.assert_array_equal(np.asarray(got[0]), x.sum(axis=axis))
    np.testing.assert_array_equal(np.asarray(got[1]), x.max(axis=axis))


@pytest.mark.parametrize("rows", [1, 3, 4, 7, 13])
def test_column_rows_per_step_keep_row_order(rows):
    """A column reduction adds COLUMN_ROWS rows per step (and a tail of fewer): still in
    row order, so an unsplit f32 axis-0 sum is bitwise numpy's (sequential over the rows
    for a C-contiguous array); NaN in a step row and in a tail row propagates."""
    x = np.random.default_rng(rows).standard_normal((rows, 300)).astype(np.float32) * 1e3
    x[:, 7] = np.float32(1e-3)  # a small addend after large ones: the order shows
    x[0, 7] = np.float32(1e8)
    y = x.copy()
    y[rows - 1, 11] = np.nan  # the last row: the tail when rows % COLUMN_ROWS
    y[min(1, rows - 1), 12] = np.nan
    got = accy.jit(lambda a, b: (anp.sum(a, axis=0), anp.max(b, axis=0), anp.min(b, axis=0)),
                   backend="cpu")(x, y)
    np.testing.assert_array_equal(np.asarray(got[0]), x.sum(axis=0))
    np.testing.assert_array_equal(np.asarray(got[1]), y.max(axis=0))
    np.testing.assert_array_equal(np.asarray(got[2]), y.min(axis=0))


def test_row_max_lane_tree_is_linear_in_lanes():
    """The float max/min lane tree binds each level to variables: as one nested expression
    (each select uses its operands several times) the kernel text was ~400 KB and its
    first call took seconds of codegen."""
    x = np.ones((4, 8 * ROW_LANES), np.float32)
    x[2, 5] = np.nan
    exe = accy.jit(lambda a: anp.max(a, axis=1), backend="cpu").compile(x)
    (kernel,) = exe.kernels.values()
    assert len(kernel.to_text()) < 20_000
    np.testing.assert_array_equal(exe(x)[0], x.max(axis=1))


def test_column_blocks_load_rows_as_vectors():
    """A split column reduction of several column blocks indexes x as (row + b0) + j, one
    invariant base plus the loop counter: as (a * rows + r) * cols + (b0 + j) in i32 LLVM
    could not prove the loads consecutive and loaded element by element ([1024, 16384] f32
    axis 0: 1.3-1.6x numpy's CPU time)."""
    import re

    from accy.families import backend_object
    from accy.passes.reduce_lanes import column_width

    x = (np.arange(128 * 2 * 4096, dtype=np.float32) % 7).reshape(128, 2 * 4096)
    assert column_width(x.shape[1]) < x.shape[1]  # several blocks: b0 varies
    exe = accy.jit(lambda a: anp.sum(a, axis=0), backend="cpu").compile(x)
    assert len(exe.kernels) == 2  # split into partials over row blocks, then their sum
    be = backend_object("cpu")
    for kernel in exe.kernels.values():
        text = be.emit(kernel, "llvm-opt").decode()
        # the input's loads (align 4: an f32 buffer; the accumulators are 32/64-aligned)
        assert re.search(r"load <\d+ x float>, ptr %[\w.]+, align 4\b", text), kernel.name
    np.testing.assert_array_equal(exe(x)[0], x.sum(axis=0))
