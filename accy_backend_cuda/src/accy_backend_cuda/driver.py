"""The CUDA driver layer: one small interface, two thin implementations.

Size: about 650 lines, past the 500-line aim on purpose: the interface and both
implementations stay together so that this remains the only module touching a driver binding.

This is the only module of the package that imports a CUDA driver binding, and it does so
inside :func:`load_driver`, never at import time. Two bindings are supported:

- ``pycuda`` (the extra ``accy-backend-cuda[pycuda]``), preferred when installed;
- NVIDIA's ``cuda-bindings`` (``cuda.bindings.driver``, extra ``[bindings]``) otherwise.

Both implement :class:`CudaDriver`: a context on one device (the device's primary context),
PTX module load with the JIT error log, device memory, asynchronous copies on streams,
events, kernel launch and synchronisation. Every call makes the context current on the
calling thread first. Handles are plain ints (device pointers) or binding objects the
caller treats as opaque.

A *sticky* fault (illegal address, misaligned address, illegal instruction, trap) leaves
the context unusable: the driver raises :class:`DriverFault`, and :meth:`CudaDriver.reset`
destroys and recreates the context (every module, buffer, stream and event of the old one
is gone). Driver error codes and names follow the CUDA Driver API reference, ``CUresult``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "STICKY_ERRORS",
    "CudaDriver",
    "DeviceInfo",
    "DriverError",
    "DriverFault",
    "load_driver",
    "probe_driver",
    "ptx_isa_for_driver",
]

#: CUresult codes after which the context is unusable (CUDA Driver API, ``CUresult``)
STICKY_ERRORS = {
    700: "CUDA_ERROR_ILLEGAL_ADDRESS",
    710: "CUDA_ERROR_ASSERT",
    714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
    715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    716: "CUDA_ERROR_MISALIGNED_ADDRESS",
    717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    718: "CUDA_ERROR_INVALID_PC",
    719: "CUDA_ERROR_LAUNCH_FAILED",
}
_JIT_LOG_BYTES = 1 << 16

# (driver version as CUDA_VERSION, highest PTX ISA it JIT-compiles, ISA x10), PTX ISA notes
_DRIVER_PTX = (
    (13000, 90), (12090, 88), (12080, 87), (12060, 85), (12050, 85), (12040, 84),
    (12030, 83), (12020, 82), (12010, 81), (12000, 80), (11080, 78), (11070, 77),
    (11060, 76), (11050, 75), (11040, 74), (11030, 73), (11020, 72), (11010, 71),
    (11000, 70),
)


def ptx_isa_for_driver(driver_version: int) -> int:
    """Return the highest PTX ISA (x10, ``85`` = 8.5) a driver of ``driver_version`` loads.

    ``driver_version`` is ``cuDriverGetVersion``'s number (``12040`` = CUDA 12.4). Newer
    drivers than the table knows get the table's newest ISA; older ones get 6.0.
    """
    for version, isa in _DRIVER_PTX:
        if driver_version >= version:
            return isa
    return 60


class DriverError(RuntimeError):
    """A driver call failed; ``code`` is the ``CUresult`` number, ``name`` its name."""

    def __init__(self, call: str, code: int, name: str, detail: str = "") -> None:
        message = f"{call} failed: {name} ({code})" + (f": {detail}" if detail else "")
        super().__init__(message)
        self.call, self.code, self.name, self.detail = call, code, name, detail


class DriverFault(DriverError):
    """A sticky device fault: the context must be reset before the next call."""


@dataclass(frozen=True)
class DeviceInfo:
    """What the driver says about the device (sizes in bytes, counts in threads)."""

    ordinal: int
    name: str
    compute_capability: tuple[int, int]
    driver_version: int
    max_threads_per_block: int
    shared_memory_per_block_bytes: int
    warp_size: int
    total_memory_bytes: int
    multiprocessor_count: int


def _error(call: str, code: int, name: str, detail: str = "") -> DriverError:
    cls = DriverFault if code in STICKY_ERRORS else DriverError
    return cls(call, code, name, detail)


class CudaDriver:
    """The interface both bindings implement; see the module docstring.

    Args:
        ordinal: the device number (``ACCY_CUDA_DEVICE``).
    """

    binding = "none"

    def __init__(self, ordinal: int = 0) -> None:
        self.ordinal = ordinal

    # device and context ------------------------------------------------------------------
    def info(self) -> DeviceInfo:
        """Return the device description."""
        raise NotImplementedError

    def reset(self) -> None:
        """Destroy the context (after a fault) and create a fresh one on the same device."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for all work of the context."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the context."""
        raise NotImplementedError

    # modules -----------------------------------------------------------------------------
    def load_module(self, ptx: str) -> object:
        """JIT-load PTX text; on failure raise :class:`DriverError` whose ``detail`` is the log."""
        raise NotImplementedError

    def function(self, module: object, name: str) -> object:
        """Return kernel ``name`` of a loaded module."""
        raise NotImplementedError

    def unload_module(self, module: object) -> None:
        """Unload a module."""
        raise NotImplementedError

    # memory ------------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> int:
        """Allocate ``nbytes`` of device memory and return the device pointer."""
        raise NotImplementedError

    def free(self, pointer: int) -> None:
        """Free device memory."""
        raise NotImplementedError

    def copy_to_device(self, pointer: int, host: np.ndarray, stream: object | None) -> None:
        """Copy the bytes of contiguous ``host`` to ``pointer`` (async on ``stream``)."""
        raise NotImplementedError

    def copy_to_host(self, host: np.ndarray, pointer: int, stream: object | None) -> None:
        """Copy ``host.nbytes`` bytes from ``pointer`` into contiguous ``host`` (async)."""
        raise NotImplementedError

    def copy_device(self, dst: int, src: int, nbytes: int, stream: object | None) -> None:
        """Copy ``nbytes`` between device buffers (async on ``stream``)."""
        raise NotImplementedError

    def fill_bytes(self, pointer: int, value: int, nbytes: int, stream: object | None) -> None:
        """Set ``nbytes`` bytes at ``pointer`` to ``value`` (0..255, async on ``stream``)."""
        raise NotImplementedError

    # streams, events, launch -------------------------------------------------------------
    def create_stream(self) -> object:
        """Create a non-blocking stream."""
        raise NotImplementedError

    def stream_synchronize(self, stream: object) -> None:
        """Wait for the work queued on ``stream``."""
        raise NotImplementedError

    def destroy_stream(self, stream: object) -> None:
        """Destroy a stream."""
        raise NotImplementedError

    def create_event(self) -> object:
        """Create an event (with timing)."""
        raise NotImplementedError

    def record_event(self, event: object, stream: object | None) -> None:
        """Record ``event`` on ``stream``."""
        raise NotImplementedError

    def wait_event(self, stream: object | None, event: object) -> None:
        """Make ``stream`` wait for ``event``."""
        raise NotImplementedError

    def event_synchronize(self, event: object) -> None:
        """Wait for ``event``."""
        raise NotImplementedError

    def elapsed_ms(self, start: object, end: object) -> float:
        """Return the time between two recorded, completed events, in milliseconds."""
        raise NotImplementedError

    def destroy_event(self, event: object) -> None:
        """Destroy an event."""
        raise NotImplementedError

    def is_event(self, obj: object) -> bool:
        """Return whether ``obj`` is an event of this binding (else a stream)."""
        return "event" in type(obj).__name__.lower()

    def launch(
        self,
        function: object,
        grid: int,
        block: int,
        args: Sequence[np.generic],
        stream: object | None,
        shared_bytes: int = 0,
    ) -> None:
        """Launch ``function`` on a 1-D grid; ``args`` are numpy scalars in parameter order
        (device pointers as ``np.uint64``, bool as ``np.uint8``)."""
        raise NotImplementedError


# ------------------------------------------------------------------------------- cuda-bindings


class BindingsDriver(CudaDriver):
    """:class:`CudaDriver` over NVIDIA's ``cuda.bindings.driver``."""

    binding = "cuda-bindings"

    def __init__(self, ordinal: int = 0) -> None:
        super().__init__(ordinal)
        self._cu = importlib.import_module("cuda.bindings.driver")
        self._check("cuInit", self._cu.cuInit(0))
        count = self._call("cuDeviceGetCount")
        if ordinal >= count:
            raise DriverError("cuDeviceGet", 101, "CUDA_ERROR_INVALID_DEVICE",
                              f"device {ordinal} requested, {count} present")
        self._device = self._call("cuDeviceGet", ordinal)
        self._context = self._call("cuDevicePrimaryCtxRetain", self._device)
        self._make_current()

    def _check(self, call: str, result: tuple | object) -> object:
        err, *rest = result if isinstance(result, tuple) else (result,)
        code = int(err)
        if code != 0:
            _, name = self._cu.cuGetErrorName(err)
            raise _error(call, code, name.decode() if isinstance(name, bytes) else str(err))
        return rest[0] if len(rest) == 1 else tuple(rest)

    def _call(self, call: str, *args: object) -> object:
        return self._check(call, getattr(self._cu, call)(*args))

    def _make_current(self) -> None:
        self._call("cuCtxSetCurrent", self._context)

    def _attribute(self, name: str) -> int:
        attr = getattr(self._cu.CUdevice_attribute, name)
        return int(self._call("cuDeviceGetAttribute", attr, self._device))

    def info(self) -> DeviceInfo:
        """Return the device description."""
        raw = self._call("cuDeviceGetName", 256, self._device)
        return DeviceInfo(
            ordinal=self.ordinal,
            name=raw.split(b"\0", 1)[0].decode(),
            compute_capability=(
                self._attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
                self._attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
            ),
            driver_version=int(self._call("cuDriverGetVersion")),
            max_threads_per_block=self._attribute("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            shared_memory_per_block_bytes=self._attribute(
                "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"
            ),
            warp_size=self._attribute("CU_DEVICE_ATTRIBUTE_WARP_SIZE"),
            total_memory_bytes=int(self._call("cuDeviceTotalMem", self._device)),
            multiprocessor_count=self._attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
        )

    def reset(self) -> None:
        """Reset the primary context and retain a fresh one."""
        self._cu.cuDevicePrimaryCtxRelease(self._device)
        self._call("cuDevicePrimaryCtxReset", self._device)
        self._context = self._call("cuDevicePrimaryCtxRetain", self._device)
        self._make_current()

    def synchronize(self) -> None:
        """Wait for all work of the context."""
        self._make_current()
        self._call("cuCtxSynchronize")

    def close(self) -> None:
        """Release the primary context."""
        self._cu.cuDevicePrimaryCtxRelease(self._device)

    def load_module(self, ptx: str) -> object:
        """JIT-load PTX; the error log becomes the ``detail`` of the raised error."""
        self._make_current()
        cu = self._cu
        log = bytearray(_JIT_LOG_BYTES)
        options = [
            cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER,
            cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ]
        values = [log, _JIT_LOG_BYTES]
        err, module = cu.cuModuleLoadDataEx(ptx.encode() + b"\0", len(options), options, values)
        if int(err) != 0:
            _, name = cu.cuGetErrorName(err)
            text = bytes(log).split(b"\0", 1)[0].decode(errors="replace").strip()
            raise _error("cuModuleLoadDataEx", int(err), name.decode(), text)
        return module

    def function(self, module: object, name: str) -> object:
        """Return kernel ``name`` of a loaded module."""
        return self._call("cuModuleGetFunction", module, name.encode())

    def unload_module(self, module: object) -> None:
        """Unload a module."""
        self._make_current()
        self._call("cuModuleUnload", module)

    def allocate(self, nbytes: int) -> int:
        """Allocate device memory."""
        self._make_current()
        return int(self._call("cuMemAlloc", max(nbytes, 1)))

    def free(self, pointer: int) -> None:
        """Free device memory."""
        self._make_current()
        self._call("cuMemFree", pointer)

    def copy_to_device(self, pointer: int, host: np.ndarray, stream: object | None) -> None:
        """Async host → device copy."""
        self._make_current()
        self._call("cuMemcpyHtoDAsync", pointer, host.ctypes.data, host.nbytes, stream or 0)

    def copy_to_host(self, host: np.ndarray, pointer: int, stream: object | None) -> None:
        """Async device → host copy."""
        self._make_current()
        self._call("cuMemcpyDtoHAsync", host.ctypes.data, pointer, host.nbytes, stream or 0)

    def copy_device(self, dst: int, src: int, nbytes: int, stream: object | None) -> None:
        """Async device → device copy."""
        self._make_current()
        self._call("cuMemcpyDtoDAsync", dst, src, nbytes, stream or 0)

    def fill_bytes(self, pointer: int, value: int, nbytes: int, stream: object | None) -> None:
        """Async byte fill."""
        self._make_current()
        self._call("cuMemsetD8Async", pointer, value, nbytes, stream or 0)

    def create_stream(self) -> object:
        """Create a non-blocking stream."""
        self._make_current()
        flags = self._cu.CUstream_flags.CU_STREAM_NON_BLOCKING
        return self._call("cuStreamCreate", int(flags))

    def stream_synchronize(self, stream: object) -> None:
        """Wait for ``stream``."""
        self._call("cuStreamSynchronize", stream)

    def destroy_stream(self, stream: object) -> None:
        """Destroy a stream."""
        self._call("cuStreamDestroy", stream)

    def create_event(self) -> object:
        """Create a timing event."""
        self._make_current()
        return self._call("cuEventCreate", 0)

    def record_event(self, event: object, stream: object | None) -> None:
        """Record ``event`` on ``stream``."""
        self._call("cuEventRecord", event, stream or 0)

    def wait_event(self, stream: object | None, event: object) -> None:
        """Make ``stream`` wait for ``event``."""
        self._call("cuStreamWaitEvent", stream or 0, event, 0)

    def event_synchronize(self, event: object) -> None:
        """Wait for ``event``."""
        self._call("cuEventSynchronize", event)

    def elapsed_ms(self, start: object, end: object) -> float:
        """Milliseconds between two events."""
        return float(self._call("cuEventElapsedTime", start, end))

    def destroy_event(self, event: object) -> None:
        """Destroy an event."""
        self._call("cuEventDestroy", event)

    def launch(self, function: object, grid: int, block: int, args: Sequence[np.generic],
               stream: object | None, shared_bytes: int = 0) -> None:
        """``cuLaunchKernel`` with a ``void**`` array pointing at copies of ``args``."""
        self._make_current()
        holders = [np.array(a) for a in args]
        pointers = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
        params = pointers.ctypes.data if holders else 0
        self._call("cuLaunchKernel", function, grid, 1, 1, block, 1, 1, shared_bytes,
                   stream or 0, params, 0)


# ------------------------------------------------------------------------------------ pycuda


class PycudaDriver(CudaDriver):
    """:class:`CudaDriver` over ``pycuda.driver``."""

    binding = "pycuda"

    def __init__(self, ordinal: int = 0) -> None:
        super().__init__(ordinal)
        self._cuda = importlib.import_module("pycuda.driver")
        self._wrap("cuInit", self._cuda.init)
        count = self._cuda.Device.count()
        if ordinal >= count:
            raise DriverError("cuDeviceGet", 101, "CUDA_ERROR_INVALID_DEVICE",
                              f"device {ordinal} requested, {count} present")
        self._device = self._cuda.Device(ordinal)
        self._context = self._wrap("cuDevicePrimaryCtxRetain", self._device.retain_primary_context)
        self._context.push()
        self._allocations: dict[int, object] = {}

    def _wrap(self, call: str, fn, *args, **kwargs):  # noqa: ANN001, ANN202
        try:
            return fn(*args, **kwargs)
        except self._cuda.Error as e:
            raise _pycuda_error(call, e) from e

    def _make_current(self) -> None:
        current = self._cuda.Context.get_current()
        if current != self._context:
            self._context.push()

    def info(self) -> DeviceInfo:
        """Return the device description."""
        attr = self._cuda.device_attribute
        get = self._device.get_attribute
        return DeviceInfo(
            ordinal=self.ordinal,
            name=self._device.name(),
            compute_capability=tuple(self._device.compute_capability()),
            driver_version=int(self._cuda.get_driver_version()),
            max_threads_per_block=get(attr.MAX_THREADS_PER_BLOCK),
            shared_memory_per_block_bytes=get(attr.MAX_SHARED_MEMORY_PER_BLOCK),
            warp_size=get(attr.WARP_SIZE),
            total_memory_bytes=int(self._device.total_memory()),
            multiprocessor_count=get(attr.MULTIPROCESSOR_COUNT),
        )

    def reset(self) -> None:
        """Drop the faulted context and retain a fresh primary context."""
        self._allocations.clear()
        try:
            self._context.pop()
            self._context.detach()
        except self._cuda.Error:
            pass
        self._context = self._wrap("cuDevicePrimaryCtxRetain", self._device.retain_primary_context)
        self._context.push()

    def synchronize(self) -> None:
        """Wait for all work of the context."""
        self._make_current()
        self._wrap("cuCtxSynchronize", self._context.synchronize)

    def close(self) -> None:
        """Release the primary context."""
        self._allocations.clear()
        self._context.pop()
        self._context.detach()

    def load_module(self, ptx: str) -> object:
        """JIT-load PTX; pycuda puts the JIT log into its exception text."""
        self._make_current()
        try:
            return self._cuda.module_from_buffer(ptx.encode())
        except self._cuda.Error as e:
            raise _pycuda_error("cuModuleLoadDataEx", e) from e

    def function(self, module: object, name: str) -> object:
        """Return kernel ``name`` of a loaded module."""
        return self._wrap("cuModuleGetFunction", module.get_function, name)

    def unload_module(self, module: object) -> None:
        """pycuda unloads a module when it is garbage-collected."""

    def allocate(self, nbytes: int) -> int:
        """Allocate device memory (pycuda frees it when the allocation object dies)."""
        self._make_current()
        allocation = self._wrap("cuMemAlloc", self._cuda.mem_alloc, max(nbytes, 1))
        self._allocations[int(allocation)] = allocation
        return int(allocation)

    def free(self, pointer: int) -> None:
        """Free device memory."""
        allocation = self._allocations.pop(pointer, None)
        if allocation is not None:
            self._make_current()
            self._wrap("cuMemFree", allocation.free)

    def copy_to_device(self, pointer: int, host: np.ndarray, stream: object | None) -> None:
        """Async host → device copy."""
        self._make_current()
        self._wrap("cuMemcpyHtoDAsync", self._cuda.memcpy_htod_async, pointer, host, stream)

    def copy_to_host(self, host: np.ndarray, pointer: int, stream: object | None) -> None:
        """Async device → host copy."""
        self._make_current()
        self._wrap("cuMemcpyDtoHAsync", self._cuda.memcpy_dtoh_async, host, pointer, stream)

    def copy_device(self, dst: int, src: int, nbytes: int, stream: object | None) -> None:
        """Async device → device copy."""
        self._make_current()
        self._wrap("cuMemcpyDtoDAsync", self._cuda.memcpy_dtod_async, dst, src, nbytes, stream)

    def fill_bytes(self, pointer: int, value: int, nbytes: int, stream: object | None) -> None:
        """Async byte fill."""
        self._make_current()
        self._wrap("cuMemsetD8Async", self._cuda.memset_d8_async, pointer, value, nbytes, stream)

    def create_stream(self) -> object:
        """Create a non-blocking stream."""
        self._make_current()
        return self._wrap("cuStreamCreate", self._cuda.Stream, flags=1)

    def stream_synchronize(self, stream: object) -> None:
        """Wait for ``stream``."""
        self._wrap("cuStreamSynchronize", stream.synchronize)

    def destroy_stream(self, stream: object) -> None:
        """pycuda destroys a stream when it is garbage-collected."""

    def create_event(self) -> object:
        """Create a timing event."""
        self._make_current()
        return self._wrap("cuEventCreate", self._cuda.Event)

    def record_event(self, event: object, stream: object | None) -> None:
        """Record ``event`` on ``stream``."""
        self._wrap("cuEventRecord", event.record, stream)

    def wait_event(self, stream: object | None, event: object) -> None:
        """Make ``stream`` wait for ``event``."""
        if stream is None:
            self._wrap("cuEventSynchronize", event.synchronize)
        else:
            self._wrap("cuStreamWaitEvent", stream.wait_for_event, event)

    def event_synchronize(self, event: object) -> None:
        """Wait for ``event``."""
        self._wrap("cuEventSynchronize", event.synchronize)

    def elapsed_ms(self, start: object, end: object) -> float:
        """Milliseconds between two events."""
        return float(self._wrap("cuEventElapsedTime", end.time_since, start))

    def destroy_event(self, event: object) -> None:
        """pycuda destroys an event when it is garbage-collected."""

    def launch(self, function: object, grid: int, block: int, args: Sequence[np.generic],
               stream: object | None, shared_bytes: int = 0) -> None:
        """Launch through pycuda's argument packing (numpy scalars pack as their bytes)."""
        self._make_current()
        self._wrap("cuLaunchKernel", function, *args, block=(block, 1, 1), grid=(grid, 1),
                   stream=stream, shared=shared_bytes)


def _pycuda_error(call: str, e: Exception) -> DriverError:
    text = str(e)
    for code, name in STICKY_ERRORS.items():
        if name.removeprefix("CUDA_ERROR_").replace("_", " ").lower() in text.lower():
            return DriverFault(call, code, name, text)
    return DriverError(call, -1, type(e).__name__, text)


_BINDINGS = {"pycuda": ("pycuda.driver", PycudaDriver),
             "cuda-bindings": ("cuda.bindings.driver", BindingsDriver)}


def load_driver(ordinal: int = 0, binding: str | None = None) -> CudaDriver:
    """Open device ``ordinal`` through pycuda, else cuda-bindings (or the named ``binding``).

    Raises:
        ImportError: neither binding (or not the named one) is installed.
        DriverError: the driver library is missing, or there is no such device.
    """
    names = [binding] if binding else list(_BINDINGS)
    missing = []
    for name in names:
        module, cls = _BINDINGS[name]
        try:
            importlib.import_module(module)
        except ImportError as e:
            missing.append(f"{name} ({e})")
            continue
        try:
            return cls(ordinal)
        except DriverError:
            raise
        except Exception as e:  # a binding that cannot find libcuda raises its own types
            raise DriverError("cuInit", -1, type(e).__name__, str(e).splitlines()[0]) from e
    raise ImportError("no CUDA driver binding importable: " + "; ".join(missing))


_DRIVER_LIBRARIES = ("libcuda.so.1", "libcuda.so", "nvcuda.dll", "libcuda.dylib")


def probe_driver(ordinal: int = 0) -> str:
    """Return ``""`` when device ``ordinal`` is usable, else one line saying why not.

    Cheap: checks that a binding is installed without importing it, then asks the driver
    library itself (through ctypes) for ``cuInit`` and the device count.
    """
    import ctypes
    import importlib.util

    def installed(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is not None
        except ImportError:
            return False

    if not (installed("pycuda") or installed("cuda.bindings")):
        return ("no CUDA driver binding: pip install pycuda (or cuda-bindings), or, in a "
                "clone of the accy repository, pip install './accy_backend_cuda[pycuda]' "
                "(or [bindings])")
    library = None
    for name in _DRIVER_LIBRARIES:
        try:
            library = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if library is None:
        return "no NVIDIA driver: libcuda.so.1 not found (install the NVIDIA display driver)"
    code = library.cuInit(0)
    if code != 0:
        text = ctypes.c_char_p()
        library.cuGetErrorName(code, ctypes.byref(text))
        name = text.value.decode() if text.value else str(code)
        return f"cuInit failed: {name} ({code})"
    count = ctypes.c_int(0)
    library.cuDeviceGetCount(ctypes.byref(count))
    if count.value == 0:
        return "the NVIDIA driver reports no CUDA device"
    if ordinal >= count.value:
        return f"ACCY_CUDA_DEVICE={ordinal}, but only {count.value} CUDA device(s) present"
    return ""
