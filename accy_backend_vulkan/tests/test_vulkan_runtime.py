"""Vulkan runtime: launch batching, kept command buffers, streams/events, staging memory,
out-of-memory and device-lost handling (lavapipe in CI; skips with the probe's reason)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import vulkan_kernels as K
from accy.backend import Geometry
from accy.errors import LaunchError, OutOfResources

RNG = np.random.default_rng(11)
_PAIRS = [("i32", 64), ("f64", 2.0), ("i32", 1), ("bool", False)]


@pytest.fixture
def fresh():
    """A private backend (for tests that break it or change its memory mode)."""
    from accy_backend_vulkan.plugin import _probe

    if not _probe().available:
        pytest.skip("vulkan unavailable")
    from accy_backend_vulkan.driver import VulkanBackend

    backends = []

    def make(**kwargs):
        backends.append(VulkanBackend(**kwargs))
        return backends[-1]

    yield make
    for b in backends:
        b.close()


def _scale_chain(backend, steps, stream=None):
    """Launch ``y = 2 * x + 1`` ``steps`` times, each reading the previous result."""
    kernel = K.scale()
    loaded = backend.load(backend.compile(kernel))
    x = RNG.standard_normal(64).astype(np.float32)
    a, b = backend.allocate(x.nbytes), backend.allocate(x.nbytes)
    backend.write(b, x)
    pairs = _PAIRS
    for i in range(steps):
        dst, src = (a, b) if i % 2 == 0 else (b, a)
        backend.launch(loaded, Geometry(1, kernel.workgroup_size), [dst, src], pairs, stream)
    want = x.astype(np.float64)
    for _ in range(steps):
        want = 2 * want + 1
    return loaded, (a if steps % 2 else b), (a, b), want


def test_consecutive_launches_are_one_submission(vk):
    before = vk.stats["submits"]
    loaded, result, bufs, want = _scale_chain(vk, 6)
    assert vk.stats["submits"] == before  # queued, not submitted
    out = vk.read(result, np.empty(64, np.float32))
    assert vk.stats["submits"] == before + 1
    np.testing.assert_allclose(out, want, rtol=1e-5)
    for buf in bufs:
        vk.free(buf)
    vk.destroy(loaded)


def _program():
    import accy

    b = accy.Builder()
    t = b.tensor("f32", (300,))
    fb = b.begin_function("batch", params=[t, t])
    s = fb.exp(fb.mul(fb.add(fb.param(0), fb.param(1)), 0.1))
    fb.return_(fb.reduce_sum(s, axes=[0]), fb.mul(s, fb.param(1)))
    fb.finish()
    return accy.compile(b.finish(), backend="vulkan")


def test_repeated_calls_resubmit_the_recorded_command_buffer(vk):
    exe = _program()
    x, y = (RNG.standard_normal(300).astype(np.float32) for _ in range(2))
    exe(x, y)
    exe(x, y)
    gc.collect()  # earlier tests' executables share the device: release them first, and
    gc.disable()  # not in the middle (freed buffers drop the command buffers naming them)
    try:
        reused, recorded = vk.stats["reused"], vk.stats["recorded"]
        for _ in range(5):
            x, y = (RNG.standard_normal(300).astype(np.float32) for _ in range(2))
            total, prod = exe(x, y)
            s = np.exp((x + y) * 0.1)
            np.testing.assert_allclose(total, s.sum(), rtol=1e-4)
            np.testing.assert_allclose(prod, s * y, rtol=1e-5)
    finally:
        gc.enable()
    assert vk.stats["reused"] == reused + 5
    assert vk.stats["recorded"] == recorded
    vk.trim()  # destroys freed buffers: kept command buffers naming them are dropped
    x = RNG.standard_normal(300).astype(np.float32)
    np.testing.assert_allclose(exe(x, x)[0], np.exp(0.2 * x).sum(), rtol=1e-4)


def test_event_orders_work_across_streams(vk):
    s1, s2 = vk.create_stream(), vk.create_stream()
    done = vk.create_event()
    loaded, result, bufs, want = _scale_chain(vk, 3, stream=s1)
    last = vk.create_event()
    out = vk.allocate(256)
    pairs = [("i32", 64), ("f64", -1.0), ("i32", 0), ("bool", False)]
    # s1's last launch signals `done`; s2 negates s1's result once `done` is reached
    vk.launch(loaded, Geometry(1, 64), [result, result], pairs, s1, (), done)
    vk.launch(loaded, Geometry(1, 64), [out, result], pairs, s2, [done], last)
    vk.synchronize(last)
    assert vk._semaphore_value(s2) >= last.value
    got = vk.read(out, np.empty(64, np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-5)  # -(-want)
    for buf in (*bufs, out):
        vk.free(buf)
    vk.destroy(loaded)
    vk.destroy(s1)
    vk.destroy(s2)
    assert vk.live_objects()["streams"] == 1


def test_streams_feature_only_with_more_than_one_queue(vk):
    """Executables spread launches over streams only where the compute family has several
    queues (lavapipe has one: streams there would only add submissions)."""
    import vulkan

    families = vulkan.vkGetPhysicalDeviceQueueFamilyProperties(vk._physical)
    count = min(4, families[vk._family].queueCount)
    assert len(vk._queues) == count
    assert ("streams" in vk.capabilities().features) == (count > 1)


def test_buffer_past_max_storage_buffer_range_is_refused(vk, monkeypatch):
    """A binding larger than maxStorageBufferRange (lavapipe: 128 MiB) would read zeros and
    drop writes past the limit: the launch refuses it, naming the buffer and the limit."""
    from accy.errors import OutOfResources

    assert vk.max_storage_buffer_range >= 1 << 27
    loaded = vk.load(vk.compile(K.scale()))
    small, other, big = vk.allocate(256), vk.allocate(256), vk.allocate(2048)
    monkeypatch.setattr(vk, "max_storage_buffer_range", 1024)
    with pytest.raises(OutOfResources, match=r"buffer 'x' of 2048 bytes exceeds .*"
                                             r"maxStorageBufferRange of 1024 bytes"):
        vk.launch(loaded, Geometry(1, 64), [small, big], _PAIRS)
    vk.launch(loaded, Geometry(1, 64), [small, other], _PAIRS)  # within the limit: runs
    vk.synchronize()
    for b in (small, other, big):
        vk.free(b)
    vk.destroy(loaded)


def test_staging_memory_path(fresh):
    be = fresh(memory="staging")
    assert be.staging
    loaded, result, bufs, want = _scale_chain(be, 5)
    assert bufs[0].view is None  # device-local, unmapped
    np.testing.assert_allclose(be.read(result, np.empty(64, np.float32)), want, rtol=1e-5)
    other = be.allocate(256)
    be.copy(result, other, 256)
    np.testing.assert_allclose(be.read(other, np.empty(64, np.float32)), want, rtol=1e-5)
    be.fill(other, 0x3F)
    assert (be.read(other, np.empty(256, np.uint8)) == 0x3F).all()
    be.destroy(loaded)


def test_out_of_memory_is_out_of_resources(fresh, monkeypatch):
    import vulkan

    be = fresh()
    kept = be.allocate(1024)
    be.free(kept)

    def refuse(*args, **kwargs):
        raise vulkan.VkErrorOutOfDeviceMemory()

    monkeypatch.setattr(vulkan, "vkAllocateMemory", refuse)
    with pytest.raises(OutOfResources) as info:
        be.allocate(1 << 20)
    assert info.value.required >= 1 << 20 and info.value.limit > 0
    assert be.live_objects()["buffers"] == 0  # half-built buffer and the free list released


def test_failed_call_releases_its_buffers(vk, monkeypatch):
    import vulkan

    exe = _program()
    x = RNG.standard_normal(300).astype(np.float32)
    exe(x, x)
    before = vk.live_objects()
    real = vulkan.vkQueueSubmit

    def refuse(*args, **kwargs):
        raise vulkan.VkErrorOutOfDeviceMemory()

    monkeypatch.setattr(vulkan, "vkQueueSubmit", refuse)
    with pytest.raises(OutOfResources):
        exe(x, x)
    monkeypatch.setattr(vulkan, "vkQueueSubmit", real)
    after = vk.live_objects()
    assert after["buffers"] == before["buffers"]
    assert after["free_buffers"] == before["free_buffers"]  # per-call buffers back
    assert after["in_flight"] == 0
    np.testing.assert_allclose(exe(x, x)[0], np.exp(0.2 * x).sum(), rtol=1e-4)


def test_device_lost_raises_and_releases(fresh, monkeypatch):
    import vulkan

    be = fresh()
    loaded, result, bufs, _ = _scale_chain(be, 2)

    def lost(*args, **kwargs):
        raise vulkan.VkErrorDeviceLost()

    monkeypatch.setattr(vulkan, "vkQueueSubmit", lost)
    with pytest.raises(LaunchError, match="device lost"):
        be.synchronize()
    for buf in bufs:
        be.free(buf)  # never raises; destroys at once
    assert be.live_objects()["buffers"] == 0
    with pytest.raises(LaunchError, match="lost"):
        be.launch(loaded, Geometry(1, 64), [result, result], _PAIRS)
    with pytest.raises(LaunchError, match="lost"):
        be.allocate(64)


def test_launch_of_zero_groups_signals_its_event(vk):
    loaded = vk.load(vk.compile(K.scale()))
    buf = vk.allocate(256)
    event = vk.create_event()
    pairs = [("i32", 0), ("f64", 1.0), ("i32", 0), ("bool", False)]
    vk.launch(loaded, Geometry(0, 64), [buf, buf], pairs, None, (), event)
    vk.synchronize(event)
    vk.free(buf)
    vk.destroy(loaded)
