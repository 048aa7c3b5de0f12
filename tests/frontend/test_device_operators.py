"""Device arrays behave like CuPy arrays: operators, indexing, ``.T`` and reductions run as
jitted ops on the array's backend and return device arrays there; what is not supported is
one clear accy error."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError
from accy.frontend import DeviceArray


def _check(d, expected) -> None:
    assert isinstance(d, DeviceArray), type(d)
    got = d.numpy()
    assert got.dtype == np.asarray(expected).dtype, (got.dtype, np.asarray(expected).dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_arithmetic_and_comparison_operators(backend):
    h = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    d = accy.asarray(h, backend=backend)
    _check(d + 1, h + 1)
    _check(1.5 * d, 1.5 * h)
    _check(d - d, h - h)
    _check(d / 4, h / 4)
    _check(d ** 2, h ** 2)
    _check(h + d, h + h)  # a host array on the left still runs on the device
    _check(-d, -h)
    _check(abs(d), np.abs(h))
    _check(d < 0, h < 0)
    _check(d == 1, h == 1)
    _check(np.maximum(d, 0), np.maximum(h, 0))
    _check(np.exp(d), np.exp(h))
    assert (d + 1).backend_name == backend


def test_weak_scalars_keep_the_dtype_and_compile_once(backend):
    from accy.frontend.device_ops import _JITS

    i = accy.asarray(np.arange(4, dtype=np.int32), backend=backend)
    _check(i + 3, np.arange(4, dtype=np.int32) + 3)
    _check(i / 2, (np.arange(4) / 2).astype(np.float32))  # integer / gives f32
    before = _JITS[("add", backend)].trace_count
    for k in range(5):
        _check(i + k, np.arange(4, dtype=np.int32) + k)
    assert _JITS[("add", backend)].trace_count == before  # a 0-d operand, not a new trace


def test_matmul_transpose_and_reductions(backend):
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = accy.asarray(h, backend=backend)
    _check(d.T, h.T)
    _check(d @ d.T, h @ h.T)
    _check(d.sum(), np.float32(h.sum()))
    _check(d.sum(axis=0), h.sum(axis=0))
    _check(d.mean(axis=1, keepdims=True), h.mean(axis=1, keepdims=True))
    _check(d.max(), np.float32(h.max()))
    _check(d.reshape(3, 2), h.reshape(3, 2))
    _check(d.astype(np.int32), h.astype(np.int32))
    assert float(d.sum()) == 15.0


def test_reduction_methods_take_numpy_options():
    """``d.var(ddof=1)`` and ``d.sum(dtype=...)`` were TypeErrors on device arrays."""
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = accy.asarray(h, backend="cpu")
    np.testing.assert_allclose(d.var(ddof=1).numpy(), h.var(ddof=1), rtol=1e-5)
    np.testing.assert_allclose(d.std(axis=0, ddof=1).numpy(), h.std(axis=0, ddof=1), rtol=1e-5)
    _check(d.sum(dtype=np.float64), h.sum(dtype=np.float64))
    _check(d.sum(axis=1), h.sum(axis=1))


def test_numpy_reduction_functions_take_a_device_array():
    """np.sum(d) calls d.sum(axis=, dtype=None, out=None): a TypeError about 'out'."""
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = accy.asarray(h, backend="cpu")
    _check(np.sum(d, axis=0), h.sum(axis=0))
    _check(np.mean(d), np.mean(h))
    _check(np.max(d, axis=1, keepdims=True), h.max(axis=1, keepdims=True))
    _check(np.var(d, ddof=1), np.var(h, ddof=1))
    with pytest.raises(UnsupportedError, match="immutable"):
        np.sum(d, out=np.zeros((), np.float32))


def test_empty_device_arrays(backend):
    """An empty array's device buffer was 1 byte: OpenCL refused a launch on it ('not a
    whole number of f32 elements')."""
    h = np.zeros((0, 3), np.float32)
    d = accy.asarray(h, backend=backend)
    _check(d.sum(axis=0), h.sum(axis=0))
    _check(d + 1, h + 1)


def test_an_out_of_range_index_into_a_device_array_is_refused(backend):
    """The device path ran checked gathers unchecked: d[np.array([5])] of a 3-element
    array read past the buffer (6.9e-310) where the host path raises."""
    from accy.families.validate import IndexOutOfRangeError

    d = accy.asarray(np.arange(3.0), backend=backend)
    with pytest.raises(IndexOutOfRangeError, match="index 5"):
        d[np.array([5])]
    with pytest.raises(IndexOutOfRangeError, match="index -4"):
        accy.jit(lambda x, i: (x * 2)[i], backend=backend)(d, np.array([-4]))
    _check(d[np.array([2, 0])], np.array([2.0, 0.0]))


def test_indexing(backend):
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = accy.asarray(h, backend=backend)
    _check(d[1], h[1])
    _check(d[-1, 2], h[-1, 2])
    _check(d[:, ::-1], h[:, ::-1])
    _check(d[1:, None, ::2], h[1:, None, ::2])
    idx = np.array([2, 0, 2], dtype=np.int32)
    _check(d[idx], h[idx])
    _check(d[accy.asarray(idx, backend=backend)], h[idx])
    np.testing.assert_array_equal(np.stack([r.numpy() for r in d]), h)


def test_unsupported_uses_are_one_clear_accy_error(backend):
    d = accy.asarray(np.ones((2, 2), np.float32), backend=backend)
    with pytest.raises(UnsupportedError, match="immutable"):
        d[0] = 1.0
    with pytest.raises(InputError, match="exactly one element"):
        bool(d)
    with pytest.raises(UnsupportedError, match="boolean mask"):
        d[np.array([[True, False], [False, True]])]
    with pytest.raises(InputError, match="cannot index a device array with str"):
        d["a"]
    _check(d // 2, np.ones((2, 2), np.float32) // 2)  # supported since accy.numpy's floor_divide


def test_operands_on_two_backends_are_refused():
    from accy.plugins import probe_backend

    if not probe_backend("recording")[0]:
        pytest.skip("the recording backend is not installed")
    a = accy.asarray(np.ones(2, np.float32), backend="cpu")
    b = accy.asarray(np.ones(2, np.float32), backend="recording")
    with pytest.raises(UnsupportedError, match="two backends"):
        a + b
