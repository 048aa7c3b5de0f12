"""Device arrays across many calls: flat memory, no host copies; DLPack zero-copy on CPU."""

from __future__ import annotations

import gc
import resource
import sys

import accy
import accy.numpy as anp
import numpy as np
import pytest

MB = 1 << 20


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:  # not Linux: peak RSS is the best portable proxy
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _step(x, w):
    return anp.tanh(x @ w) * 0.5 + x


def test_thousand_calls_on_device_arrays_keep_memory_flat(backend: str) -> None:
    rng = np.random.default_rng(0)
    step = accy.jit(_step, backend=backend)
    x = accy.asarray(rng.standard_normal((64, 64)).astype(np.float32) * 0.1, backend=backend)
    w = accy.asarray(np.eye(64, dtype=np.float32), backend=backend)
    for _ in range(50):  # warm up: trace, compile, allocator pools
        x = step(x, w)
    gc.collect()
    before = _rss_bytes()
    for _ in range(1000):
        x = step(x, w)
    gc.collect()
    grown = _rss_bytes() - before
    assert grown < 4 * MB, f"process memory grew by {grown / MB:.1f} MB over 1000 calls"
    assert step.trace_count + step.index_hits == 1
    assert np.isfinite(x.numpy()).all()


def test_thousand_calls_make_no_host_copy_on_the_recording_backend(monkeypatch) -> None:
    from accy.plugins import open_backend

    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")  # recording artifacts don't serialise
    rec = open_backend("recording")
    step = accy.jit(_step, backend="recording")
    x = accy.asarray(np.full((4, 4), 0.1, np.float32), backend="recording")
    w = accy.asarray(np.eye(4, dtype=np.float32), backend="recording")
    x = step(x, w)
    gc.collect()
    before, live = dict(rec.calls), rec.live_buffers
    for _ in range(1000):
        x = step(x, w)
    gc.collect()
    for copy_call in ("write", "read", "copy", "import_host"):
        assert rec.calls[copy_call] == before.get(copy_call, 0), copy_call
    assert rec.calls["launch"] - before["launch"] == 1000 * step.compile(x, w).kernel_count
    assert rec.live_buffers == live


def _host_memory(backend: str) -> bool:
    from accy.plugins import open_backend

    return "host_memory" in open_backend(backend).capabilities().features


def test_dlpack_roundtrip_is_zero_copy_on_host_memory_backends(backend: str) -> None:
    if not _host_memory(backend):
        pytest.skip(f"backend {backend!r} has no host_memory feature")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = accy.from_dlpack(a, backend=backend)
    assert d.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(d)
    assert b.ctypes.data == a.ctypes.data and b.shape == a.shape and b.dtype == a.dtype
    del d
    gc.collect()
    np.testing.assert_array_equal(b, a)  # the export keeps the buffer alive


def test_dlpack_export_of_jit_results(backend: str) -> None:
    if not _host_memory(backend):
        pytest.skip(f"backend {backend!r} has no host_memory feature")
    f = accy.jit(lambda x: x * 2.0, backend=backend)
    out = f(accy.asarray(np.ones(5, np.float32), backend=backend))
    view = np.from_dlpack(out)
    assert view.ctypes.data == out.host_view().ctypes.data
    np.testing.assert_array_equal(view, np.full(5, 2.0, np.float32))
