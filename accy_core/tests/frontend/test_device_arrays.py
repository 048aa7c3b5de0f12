"""Device arrays on the recording backend: results, no host copies, no leaks."""

from __future__ import annotations

import gc

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import InputError
from accy.frontend import DeviceArray


@pytest.fixture
def recording(monkeypatch):
    from accy.plugins import open_backend

    # recording artifacts are not serialisable; keep them out of the disk cache
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")

    return open_backend("recording")


def test_asarray_roundtrip_and_metadata(recording) -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    d = accy.asarray(x, backend="recording")
    assert isinstance(d, DeviceArray)
    assert (d.shape, d.dtype, d.ndim, d.size, d.nbytes) == ((2, 3), np.int32, 2, 6, 24)
    np.testing.assert_array_equal(d.numpy(), x)
    np.testing.assert_array_equal(np.asarray(d), x)
    assert accy.asarray(d, backend="recording") is d


def test_buffers_are_freed_on_collection(recording) -> None:
    live = recording.live_buffers
    d = accy.asarray(np.ones(4, np.float32), backend="recording")
    assert recording.live_buffers == live + 1
    del d
    gc.collect()
    assert recording.live_buffers == live


def test_delete_then_use_is_an_input_error(recording) -> None:
    d = accy.asarray(np.ones(4, np.float32), backend="recording")
    d.delete()
    with pytest.raises(InputError, match="was deleted"):
        d.numpy()


def test_jit_on_device_arrays_makes_no_host_copy_between_calls(recording) -> None:
    @accy.jit(backend="recording")
    def step(x, w):
        return anp.tanh(x @ w) * 0.5 + x

    x0 = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32) * 0.1
    w_host = np.eye(4, dtype=np.float32)
    x, w = accy.asarray(x0, backend="recording"), accy.asarray(w_host, backend="recording")
    x = step(x, w)  # trace + compile (constants are written once here)
    gc.collect()
    before = dict(recording.calls)
    live = recording.live_buffers
    for _ in range(20):
        x = step(x, w)
    gc.collect()
    after = recording.calls
    assert after["write"] == before.get("write", 0) and after["read"] == before.get("read", 0)
    assert after["launch"] > before["launch"]
    assert recording.live_buffers == live
    assert step.trace_count == 1
    want = x0
    for _ in range(21):
        want = np.tanh(want @ w_host) * 0.5 + want
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-4, atol=1e-5)


def test_identity_and_constant_results_on_device(recording) -> None:
    f = accy.jit(lambda x: (x, anp.ones(2, dtype=np.float32)), backend="recording")
    d = accy.asarray(np.ones(3, np.float32), backend="recording")
    same, ones = f(d)
    assert same is d
    np.testing.assert_array_equal(ones.numpy(), np.ones(2, np.float32))
