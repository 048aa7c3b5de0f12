"""The recording backend: protocol conformance, call log, leaks, argument checks, execution."""

from __future__ import annotations

import numpy as np
import pytest
from accy.backend import Artifact, Backend, Geometry, RecordingBackend, TargetProfile
from accy.errors import BackendError, CapabilityError, InputError, LaunchError


def _saxpy():
    from accy.kernel import KernelBuilder

    kb = KernelBuilder("saxpy", 4)
    y = kb.buffer("y", "f32", "write")
    x = kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    a = kb.scalar("a", "f32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(y, i, a * x[i])
    return kb.build()


def test_implements_the_protocol():
    be = RecordingBackend()
    assert isinstance(be, Backend)
    caps = be.capabilities()
    assert caps.backend == "recording" and "f64" in caps.dtypes
    assert be.target_profile() == TargetProfile.from_capabilities(caps)


def test_buffers_round_trip_and_log():
    be = RecordingBackend()
    a, b = be.allocate(16), be.allocate(16)
    be.write(a, np.arange(4, dtype=np.int32))
    be.copy(a, b, 8)
    out = be.read(b, np.zeros(4, np.int32))
    assert out.tolist() == [0, 1, 0, 0]
    be.fill(b, 255)
    assert be.read(b, np.zeros(2, np.uint8)).tolist() == [255, 255]
    assert be.live_buffers == 2
    be.free(a)
    be.free(b)
    assert be.live_buffers == 0
    assert [e[0] for e in be.log] == [
        "allocate", "allocate", "write", "copy", "read", "fill", "read", "free", "free"]
    assert be.calls["read"] == 2
    assert be.log[2] == ("write", f"buf#{a.id}", 16)


def test_misuse_is_an_error():
    be = RecordingBackend()
    buf = be.allocate(4)
    with pytest.raises(BackendError, match="8 bytes do not fit"):
        be.write(buf, np.zeros(2, np.float32))
    be.free(buf)
    with pytest.raises(BackendError, match="already freed"):
        be.free(buf)
    with pytest.raises(BackendError, match="not a buffer of backend 'recording'"):
        RecordingBackend().read(be.allocate(4), np.zeros(1, np.uint8))
    with pytest.raises(InputError, match="emits format 'recording' only"):
        be.emit(object(), "ptx")


def test_launch_records_argument_order_and_runs_the_interpreter():
    be = RecordingBackend()
    loaded = be.load(be.compile(_saxpy()))
    y, x = be.allocate(6 * 4), be.allocate(6 * 4)
    be.write(x, np.arange(6, dtype=np.float32))
    stream, event = be.create_stream(), be.create_event()
    be.launch(loaded, Geometry(2, 4), [y, x], [("i32", 6), ("f32", 2.0)], stream=stream,
              signal_event=event)
    be.synchronize(stream)
    assert be.read(y, np.zeros(6, np.float32)).tolist() == [0, 2, 4, 6, 8, 10]
    (entry,) = be.launches()
    assert entry == ("launch", "saxpy", (2, 4), (f"buf#{y.id}", f"buf#{x.id}"),
                     (("i32", 6), ("f32", 2.0)), f"stream#{stream.id}", (), f"event#{event.id}")
    for obj in (loaded, stream, event):
        be.destroy(obj)
    assert be.live_handles == 0


def test_launch_checks_arguments():
    be = RecordingBackend(interpret=False)
    loaded = be.load(be.compile(_saxpy()))
    buf = be.allocate(4)
    with pytest.raises(LaunchError, match=r"scalars must be \(dtype name, value\) pairs"):
        be.launch(loaded, Geometry(1, 4), [buf, buf], [6])
    be.free(buf)
    with pytest.raises(BackendError, match="already freed"):
        be.launch(loaded, Geometry(1, 4), [buf, buf], [])
    be.destroy(loaded)
    with pytest.raises(BackendError, match="expected a live kernel"):
        be.launch(loaded, Geometry(1, 4), [], [])


def test_artifact_carries_kernel_and_is_not_cacheable():
    kernel = _saxpy()
    art = RecordingBackend().compile(kernel)
    assert isinstance(art, Artifact)
    assert art.format == "recording" and art.metadata["kernel"] is kernel
    assert art.metadata["cacheable"] is False
    assert art.metadata["buffer_dtypes"] == ["f32", "f32"]
    assert art.metadata["scalar_dtypes"] == ["i32", "f32"]
    with pytest.raises(BackendError, match="cannot load a 'obj' artifact"):
        RecordingBackend().load(Artifact("cpu", "k", "obj", b"", "k"))


def test_host_memory_is_zero_copy_only_when_enabled():
    arr = np.arange(4, dtype=np.float32)
    assert RecordingBackend().import_host(arr) is None
    be = RecordingBackend(host_memory=True)
    assert "host_memory" in be.capabilities().features
    buf = be.import_host(arr)
    be.host_view(buf, np.float32, (4,))[0] = 7.0
    assert arr[0] == 7.0
    be.free(buf)
    assert be.live_buffers == 0


def test_target_profile_messages():
    profile = TargetProfile(backend="vulkan", dtypes=frozenset({"f32", "i32"}),
                            features=frozenset({"subgroups"}), max_workgroup_size=256,
                            subgroup_size=32, shared_memory_bytes=16384)
    assert profile.supports_dtype("f32") and not profile.supports_dtype("f64")
    profile.require_dtype("f32", "x")
    with pytest.raises(CapabilityError) as info:
        profile.require_dtype("f64", "arith.add")
    assert str(info.value) == ("'arith.add': dtype f64 is not supported by backend 'vulkan' "
                               "(supported: f32, i32); cast to f32 first")
    assert (info.value.feature, info.value.backend) == ("f64", "vulkan")
    with pytest.raises(CapabilityError, match=r"^'scatter.add': feature float_atomics is not "
                       r"supported by backend 'vulkan' \(supported: subgroups\); "):
        profile.require_feature("float_atomics", "scatter.add")
