"""The driver layer and CudaBackend: a fake driver always; a real device when the probe says so."""

from __future__ import annotations

import numpy as np
import pytest
from accy.backend import Geometry
from accy.errors import BackendUnavailable, LaunchError
from accy.kernel import BufferParam, If, Kernel, Load, ScalarParam, Store, ThreadId, Var, binary
from accy_backend_cuda.backend import CudaBackend
from accy_backend_cuda.driver import (
    CudaDriver,
    DeviceInfo,
    DriverFault,
    probe_driver,
    ptx_isa_for_driver,
)

GID = ThreadId("global")
REASON = probe_driver(0)


def axpy() -> Kernel:
    return Kernel(
        "axpy", (BufferParam("y", "f32", "write"), BufferParam("x", "f32", "read")),
        (ScalarParam("n", "i32"), ScalarParam("a", "f32")), workgroup_size=64,
        body=(If(binary("lt", GID, Var("n", "i32")),
                 (Store("y", GID, binary("mul", Var("a", "f32"), Load("x", GID, "f32"))),)),),
    )


class FakeDriver(CudaDriver):
    """In-memory driver: records launches, can fault once."""

    binding = "fake"

    def __init__(self) -> None:
        super().__init__(0)
        self.calls: list[tuple] = []
        self.fault_next = False
        self.resets = 0
        self._next = 0x1000

    def info(self) -> DeviceInfo:
        return DeviceInfo(0, "Fake H200", (9, 0), 12040, 1024, 49152, 32, 1 << 30, 132)

    def reset(self) -> None:
        self.resets += 1

    def create_stream(self) -> object:
        return "stream"

    def load_module(self, ptx: str) -> object:
        self.calls.append(("load", ptx.count(".entry")))
        return {"ptx": ptx}

    def function(self, module: object, name: str) -> object:
        return ("fn", name)

    def allocate(self, nbytes: int) -> int:
        self._next += 0x1000
        return self._next

    def launch(self, function, grid, block, args, stream, shared_bytes=0) -> None:
        if self.fault_next:
            self.fault_next = False
            raise DriverFault("cuLaunchKernel", 700, "CUDA_ERROR_ILLEGAL_ADDRESS")
        self.calls.append(("launch", function, grid, block, [a.dtype.str for a in args]))


def test_ptx_isa_follows_the_driver():
    assert ptx_isa_for_driver(12040) == 84
    assert ptx_isa_for_driver(13000) == 90
    assert ptx_isa_for_driver(99999) == 90
    assert ptx_isa_for_driver(10000) == 60


def test_backend_on_fake_driver_packs_arguments_in_order():
    be = CudaBackend(FakeDriver())
    assert be.target.sm == 90 and be.target.ptx_isa == 84
    caps = be.capabilities()
    assert caps.device_name == "Fake H200" and "ptx" in caps.artifact_formats
    loaded = be.load(be.compile(axpy()))
    y, x = be.allocate(256), be.allocate(256)
    be.launch(loaded, Geometry(1, 64), [y, x], [("i32", 64), ("f32", 2.0)])
    assert be.driver.calls[-1] == ("launch", ("fn", "axpy"), 1, 64, ["<u8", "<u8", "<i4", "<f4"])


def test_launch_argument_errors():
    be = CudaBackend(FakeDriver())
    loaded = be.load(be.compile(axpy()))
    y, x = be.allocate(256), be.allocate(256)
    with pytest.raises(LaunchError, match="expected 2 buffers and 2 scalars"):
        be.launch(loaded, Geometry(1, 64), [y], [("i32", 64), ("f32", 2.0)])
    with pytest.raises(LaunchError, match="scalar 'a' must be f32, got i32"):
        be.launch(loaded, Geometry(1, 64), [y, x], [("i32", 64), ("i32", 2)])
    with pytest.raises(LaunchError, match="workgroup_size 32 differs"):
        be.launch(loaded, Geometry(2, 32), [y, x], [("i32", 64), ("f32", 2.0)])
    with pytest.raises(LaunchError, match="written buffer 'y' is also bound"):
        be.launch(loaded, Geometry(1, 64), [y, y], [("i32", 64), ("f32", 2.0)])


def test_a_read_only_buffer_may_be_bound_twice():
    """``f(x, x)``: two read-only parameters on one buffer are fine (frontend ``x @ x``)."""
    kernel = Kernel(
        "square", (BufferParam("y", "f32", "write"), BufferParam("a", "f32", "read"),
                   BufferParam("b", "f32", "read")),
        (ScalarParam("n", "i32"),), workgroup_size=64,
        body=(If(binary("lt", GID, Var("n", "i32")),
                 (Store("y", GID, binary("mul", Load("a", GID, "f32"), Load("b", GID, "f32"))),)),),
    )
    be = CudaBackend(FakeDriver())
    loaded = be.load(be.compile(kernel))
    y, x = be.allocate(256), be.allocate(256)
    be.launch(loaded, Geometry(1, 64), [y, x, x], [("i32", 64)])
    assert be.driver.calls[-1][0] == "launch"
    with pytest.raises(LaunchError, match="written buffer 'y' is also bound"):
        be.launch(loaded, Geometry(1, 64), [y, y, x], [("i32", 64)])


def test_fault_becomes_launch_error_and_context_is_recreated():
    driver = FakeDriver()
    be = CudaBackend(driver)
    loaded = be.load(be.compile(axpy()))
    y, x = be.allocate(256), be.allocate(256)
    driver.fault_next = True
    with pytest.raises(LaunchError, match="CUDA_ERROR_ILLEGAL_ADDRESS; the context was recreated"):
        be.launch(loaded, Geometry(1, 64), [y, x], [("i32", 64), ("f32", 2.0)])
    assert driver.resets == 1
    with pytest.raises(LaunchError, match="allocated before a device fault"):
        be.launch(loaded, Geometry(1, 64), [y, x], [("i32", 64), ("f32", 2.0)])
    y, x = be.allocate(256), be.allocate(256)
    be.launch(loaded, Geometry(1, 64), [y, x], [("i32", 64), ("f32", 2.0)])  # reloads the module
    assert [c[0] for c in driver.calls].count("load") == 2


def test_compile_only_backend_refuses_device_work():
    be = CudaBackend(None, sm=80, unavailable_reason="no NVIDIA driver")
    assert be.capabilities().device_name == "compile-only sm_80"
    assert b".target sm_80" in be.emit(axpy(), "ptx")
    with pytest.raises(BackendUnavailable, match="compile-only here: no NVIDIA driver"):
        be.allocate(16)


@pytest.mark.skipif(REASON == "", reason="a CUDA device is present")
def test_without_a_device_the_probe_says_why_and_open_refuses():
    from accy.plugins import open_backend, probe_backend

    available, reason = probe_backend("cuda")
    assert not available and reason.startswith(REASON)
    with pytest.raises(BackendUnavailable, match="unavailable"):
        open_backend("cuda")


# ------------------------------------------------------------------------------ real device

device = pytest.mark.skipif(REASON != "", reason=f"cuda unavailable: {REASON}")


@pytest.fixture(scope="module")
def gpu():
    from accy.plugins import open_backend

    return open_backend("cuda")


@pytest.mark.cuda
@device
def test_gpu_axpy_roundtrip(gpu):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    loaded = gpu.load(gpu.compile(axpy()))
    by, bx = gpu.allocate(y.nbytes), gpu.allocate(x.nbytes)
    gpu.write(bx, x)
    gpu.launch(loaded, Geometry((n + 63) // 64, 64), [by, bx], [("i32", n), ("f32", 3.0)])
    gpu.synchronize()
    np.testing.assert_array_equal(gpu.read(by, y), 3.0 * x)
    for b in (by, bx):
        gpu.free(b)


@pytest.mark.cuda
@device
def test_gpu_illegal_address_is_a_launch_error_then_recovers(gpu):
    bad = Kernel("oob", (BufferParam("y", "f32", "write"),), (), workgroup_size=64,
                 body=(Store("y", binary("add", GID, Var("big", "i32")), Load("y", GID, "f32")),),
                 scalars=(ScalarParam("big", "i32"),))
    loaded = gpu.load(gpu.compile(bad))
    buf = gpu.allocate(256)
    with pytest.raises(LaunchError, match="device fault"):
        gpu.launch(loaded, Geometry(64, 64), [buf], [("i32", 1 << 30)])
        gpu.synchronize()
    test_gpu_axpy_roundtrip(gpu)


@pytest.mark.cuda
@device
def test_gpu_jit_log_in_error(gpu):
    from accy.backend import Artifact
    from accy.errors import CompileError

    bogus = Artifact("cuda", "bogus", "ptx", b".version 8.0\n.target sm_80\nnope;\n", "bogus",
                     {"sm": 80})
    with pytest.raises(CompileError, match="driver JIT rejected 'bogus'"):
        gpu.load(bogus)


class _LifetimeDriver(FakeDriver):
    """FakeDriver plus the release calls, each recorded."""

    def create_stream(self) -> object:
        return object()

    def create_event(self) -> object:
        return ["event"]

    def is_event(self, obj: object) -> bool:
        return isinstance(obj, list)

    def destroy_event(self, event: object) -> None:
        self.calls.append(("destroy_event",))

    def destroy_stream(self, stream: object) -> None:
        self.calls.append(("destroy_stream",))

    def unload_module(self, module: object) -> None:
        self.calls.append(("unload",))

    def free(self, pointer: int) -> None:
        self.calls.append(("free", pointer))


def test_live_objects_count_what_is_not_yet_released():
    be = CudaBackend(_LifetimeDriver())
    zero = {"kernels": 0, "buffers": 0, "streams": 0, "events": 0}
    assert be.live_objects() == zero
    objs = [be.load(be.compile(axpy())), be.create_stream(), be.create_event()]
    buf = be.allocate(256)
    assert be.live_objects() == {"kernels": 1, "buffers": 1, "streams": 1, "events": 1}
    for obj in objs:
        be.destroy(obj)
    be.free(buf)
    assert be.live_objects() == zero
    assert [c[0] for c in be.driver.calls[-4:]] == ["unload", "destroy_stream",
                                                    "destroy_event", "free"]
