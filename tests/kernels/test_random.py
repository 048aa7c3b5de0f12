"""random: Random123 known-answer vectors, geometry independence, distributions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from accy.errors import CapabilityError, InputError, UnsupportedError
from accy_kernels.random import generators, squares

from accy_kernels import random

KAT = Path(__file__).resolve().parents[1] / "data" / "random123" / "kat_vectors"


def _kat_lines(prefix: str):
    out = []
    for line in KAT.read_text().splitlines():
        f = line.split()
        if f and not line.startswith("#") and f[0] == prefix:
            out.append((int(f[1]), [int(v, 16) for v in f[2:]]))
    assert out, f"no {prefix} lines in {KAT}"
    return out


def test_philox4x32_kat(backend):
    lines = _kat_lines("philox4x32")
    assert {r for r, _ in lines} == {7, 10}
    for rounds, v in lines:
        got = random.philox4x32(np.array([v[:4]], np.uint32), np.array(v[4:6], np.uint32),
                                rounds, backend=backend)
        assert list(got[0]) == v[6:10], f"philox4x32-{rounds} {v}"


@pytest.mark.parametrize("width", [2, 4])
def test_threefry_kat(backend, width):
    for rounds, v in _kat_lines(f"threefry{width}x32"):
        if rounds not in (13, 20):
            continue
        got = random.threefry(np.array([v[:width]], np.uint32),
                              np.array(v[width:2 * width], np.uint32), rounds, backend=backend)
        assert list(got[0]) == v[2 * width:3 * width], f"threefry{width}x32-{rounds}"


def test_squares_matches_reference(backend):
    bits = generators.run_distribution(backend, "squares", "bits", "u32", 1001, 12345, 7, 0, 0)
    want = squares.reference(np.arange(7, 1008, dtype=np.uint64), squares.derive_key(12345))
    np.testing.assert_array_equal(bits, want)


@pytest.mark.parametrize("algorithm", random.ALGORITHMS)
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_same_stream_any_geometry(backend, algorithm, dtype):
    a = generators.run_distribution(backend, algorithm, "uniform", dtype, 4099, 99, 0, 0.0, 1.0,
                                    workgroup_size=256)
    b = generators.run_distribution(backend, algorithm, "uniform", dtype, 4099, 99, 0, 0.0, 1.0,
                                    workgroup_size=32)
    np.testing.assert_array_equal(a, b)
    c = random.uniform((4099,), 99, dtype, algorithm, backend=backend)
    np.testing.assert_array_equal(a, c)
    assert 0.0 <= a.min() and a.max() < 1.0 and abs(a.mean() - 0.5) < 0.03


@pytest.mark.parametrize("algorithm", ["philox4x32-10", "threefry2x32-20", "squares"])
@pytest.mark.parametrize(("dist", "dtype"), [("uniform", "f32"), ("uniform", "f64"),
                                             ("bits", "u32")])
def test_host_item_loop_gives_the_same_stream(monkeypatch, algorithm, dist, dtype):
    """CPU: work-items looping over HOST_ITEMS stream items (vectorized, the last one
    guarded) give the one-item-per-work-item values bit for bit."""
    n = generators.HOST_ITEMS * 4 * 300 + 37  # whole looped work-items, then a partial one
    p0, p1 = (0, 0) if dist == "bits" else (-1.0, 3.0)
    looped = generators.run_distribution("cpu", algorithm, dist, dtype, n, 7, 3, p0, p1)
    monkeypatch.setattr(generators, "host_items", lambda backend, dist: 1)
    single = generators.run_distribution("cpu", algorithm, dist, dtype, n, 7, 3, p0, p1)
    np.testing.assert_array_equal(looped, single)


def test_offsets_continue_the_stream(backend):
    whole = random.uniform(4000, 5, backend=backend)
    tail = random.uniform(2000, 5, offset=500, backend=backend)  # 500 blocks of 4 values
    np.testing.assert_array_equal(whole[2000:], tail)


def test_uniform_matches_philox_bits(backend):
    u = random.uniform((8,), seed=(3 << 32) | 1, backend=backend)
    ctr = np.array([[0, 0, 0, 0], [1, 0, 0, 0]], np.uint32)
    bits = random.philox4x32(ctr, np.array([1, 3], np.uint32)).reshape(-1)
    np.testing.assert_array_equal(u, (bits >> 8).astype(np.float32) * np.float32(2.0**-24))


def _has(backend, feature):
    from accy.plugins import open_backend

    return feature in open_backend(backend).capabilities().features


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_normal_moments(backend, dtype):
    if dtype == "f64" and not _has(backend, "f64_math"):
        pytest.skip("capability: f64 normal needs f64_math (log, cos)")
    z = random.normal((200001,), 3, dtype, mean=2.0, std=3.0, backend=backend)
    assert z.dtype == np.dtype(np.float32 if dtype == "f32" else np.float64)
    assert abs(z.mean() - 2.0) < 0.05 and abs(z.std() - 3.0) < 0.05


def test_normal_f64_refused_without_f64_math(backend):
    if _has(backend, "f64_math"):
        pytest.skip("capability: the backend has f64_math")
    with pytest.raises(CapabilityError, match="f64_math") as info:
        random.normal((10,), 3, "f64", backend=backend)
    assert info.value.feature == "f64_math"


@pytest.mark.parametrize("dtype", ["i32", "i64", "u32"])
def test_integers_range(backend, dtype):
    v = random.integers((100000,), 1, 5, 17, dtype, backend=backend)
    assert v.min() == 5 and v.max() == 16
    counts = np.bincount(v - 5)
    assert counts.min() > 7000


def test_empty_and_errors(backend):
    assert random.uniform((0,), 1, backend=backend).shape == (0,)
    assert random.uniform((2, 3), 1, backend=backend).shape == (2, 3)
    with pytest.raises(InputError, match="algorithm"):
        random.uniform(3, 1, algorithm="mt19937")
    with pytest.raises(UnsupportedError):
        random.uniform(3, 1, dtype="i32")
    with pytest.raises(InputError):
        random.integers(3, 1, 5, 5)
    with pytest.raises(InputError):
        random.philox4x32(np.zeros((1, 3), np.uint32), np.zeros(2, np.uint32))
