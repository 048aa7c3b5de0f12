"""``random.integers`` is unbiased (Lemire's rejection) and bit-identical on every backend
(issue 10: the multiply-shift alone made half of the draws in [0, 3 * 2**30) multiples of 3).

Uniformity by Pearson's chi-square test (``scipy.stats.chisquare``) on fixed seeds: the
p-values are deterministic, and a biased generator gives p ~ 0 on these sample sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from accy_kernels import random

ALGOS = ["philox4x32-10", "threefry2x32-20", "threefry4x32-13", "squares"]
P_MIN = 1e-4


def _p_value(counts: np.ndarray) -> float:
    return float(stats.chisquare(counts).pvalue)


@pytest.mark.parametrize("algorithm", ALGOS)
def test_three_times_2_30_residues(backend, algorithm):
    v = random.integers((300_000,), 11, 0, 3 * 2**30, "u32", algorithm, backend=backend)
    residues = np.bincount((v % 3).astype(np.int64), minlength=3)
    assert abs(residues[0] / v.size - 1 / 3) < 0.005  # multiply-shift alone: 1/2
    assert _p_value(residues) > P_MIN
    coarse = np.bincount((v.astype(np.int64) * 12 // (3 * 2**30)), minlength=12)
    assert _p_value(coarse) > P_MIN


@pytest.mark.parametrize("low,high,dtype", [
    (0, 3 * 2**30, "u32"), (0, 7, "i32"), (-(2**31), 2**31 - 1, "i64"),
    (5, 2**31 + 7, "i64"), (0, 2**32, "u32"), (-128, 128, "i8"), (0, 256, "u8"),
    (-300, 7, "i16"), (0, 65536, "u16"), (2**64 - 1000, 2**64, "u64")])
def test_chi_square_uniform(backend, low, high, dtype):
    v = random.integers((200_000,), 3, low, high, dtype, backend=backend)
    assert v.dtype == np.dtype({"u32": np.uint32, "i32": np.int32, "i64": np.int64,
                                "i8": np.int8, "u8": np.uint8, "i16": np.int16,
                                "u16": np.uint16, "u64": np.uint64}[dtype])
    span = high - low
    offset = np.array([int(a) - low for a in v[:1000]])
    assert offset.min() >= 0 and offset.max() < span
    bins = span if span <= 4096 else 256  # equal-width bins (to 1 part in 2**23 for 256)
    rel = (v.astype(object) - low) if dtype == "u64" else v.astype(np.int64) - low
    idx = np.array([int(r) * bins // span for r in rel], np.int64) if dtype == "u64" \
        else (rel.astype(np.float64) * bins / span).astype(np.int64)
    counts = np.bincount(np.minimum(idx, bins - 1), minlength=bins)
    assert _p_value(counts) > P_MIN
    if span % 3 == 0:
        assert _p_value(np.bincount((rel % 3).astype(np.int64), minlength=3)) > P_MIN


@pytest.mark.parametrize("algorithm", random.ALGORITHMS)
@pytest.mark.parametrize("low,high,dtype", [(0, 3 * 2**30, "u32"), (-7, 2**31 + 11, "i64"),
                                            (-5, 100, "i8"), (0, 2**32, "u32")])
def test_bit_identical_to_cpu(backend, algorithm, low, high, dtype):
    args = ((4099,), 2**40 + 7, low, high, dtype, algorithm)
    got = random.integers(*args, offset=123, backend=backend)
    np.testing.assert_array_equal(got, random.integers(*args, offset=123, backend="cpu"))
    # a stream is a pure function of (seed, offset, position): a prefix is a prefix
    head = random.integers((1000,), *args[1:], offset=123, backend=backend)
    np.testing.assert_array_equal(head, got[:1000])


def test_rejections_happen_and_are_reproducible():
    """Half of the words are rejected for a span just above 2**31: the redraw path runs."""
    v = random.integers((100_000,), 9, 0, 2**31 + 1, "i64")
    assert v.max() <= 2**31 and v.min() >= 0
    assert _p_value(np.bincount(v * 64 // (2**31 + 1), minlength=64)) > P_MIN
    np.testing.assert_array_equal(v, random.integers((100_000,), 9, 0, 2**31 + 1, "i64"))


def test_threshold():
    from accy_kernels.random.generators import rejection_threshold

    assert rejection_threshold(0) == 0  # 2**32: every word is accepted
    assert rejection_threshold(3 * 2**30) == 2**30
    assert rejection_threshold(2**31 + 1) == 2**31 - 1
    assert rejection_threshold(256) == 0


def test_bad_dtypes_and_ranges():
    from accy.errors import InputError, UnsupportedError

    with pytest.raises(UnsupportedError, match="dtype"):
        random.integers(3, 1, 0, 5, "f32")
    with pytest.raises(InputError):
        random.integers(3, 1, 0, 300, "u8")
    with pytest.raises(InputError):
        random.integers(3, 1, -1, 5, "u16")
