"""CudaBackend: the accy backend protocol over :mod:`accy_backend_cuda.driver`.

Kept apart from ``driver.py`` so that the binding layer stays one small module with two thin
implementations; this module never imports a binding. Without a driver (``driver=None``)
the backend is *compile-only*: capabilities, ``compile`` and ``emit`` work for a chosen SM
(pure llvmlite), and everything that needs a device raises
:class:`~accy.errors.BackendUnavailable` with the probe's reason.

Streams and their ordering against transfers: :mod:`accy_backend_cuda.streams`.

Device faults: a sticky fault (illegal address, ...) raises :class:`~accy.errors.LaunchError`
and recreates the context. Loaded kernels reload themselves on their next launch; buffers
allocated before the fault are gone and raise ``LaunchError`` when used.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from accy.backend import Artifact, Capabilities, Geometry, TargetProfile
from accy.backend.arguments import launch_arguments
from accy.codegen import compile_llvm, emit_llvm_ir
from accy.errors import (
    BackendError,
    BackendUnavailable,
    CompileError,
    LaunchError,
    OutOfResources,
    UnsupportedError,
)
from accy.kernel import Kernel

from accy_backend_cuda.streams import StreamOrdering
from accy_backend_cuda.target import LLVM_MAX_PTX_ISA, CudaTarget
from accy_backend_cuda.toolchain import find_libdevice

__all__ = ["CudaBackend", "CudaBuffer", "LoadedKernel"]

_EMIT_FORMATS = ("ptx", "llvm", "llvm-opt")
_SCALAR_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32,
                 "i64": np.int64, "bool": np.uint8, "i8": np.int8, "u8": np.uint8,
                 "i16": np.int16, "u16": np.uint16, "u64": np.uint64}
_OUT_OF_MEMORY = 2  # CUDA_ERROR_OUT_OF_MEMORY
_MAX_GRID_X = 2**31 - 1
_STATIC_SHARED_BYTES = 48 * 1024


@dataclass
class CudaBuffer:
    """A device allocation: pointer, size in bytes, context generation it belongs to
    (:data:`FREED` once freed)."""

    pointer: int
    nbytes: int
    generation: int


#: the generation of a freed buffer: any later use is a LaunchError, not a dangling pointer
FREED = -1


@dataclass
class LoadedKernel:
    """A PTX module loaded in one context generation, with its kernel function."""

    artifact: Artifact
    module: object
    function: object
    generation: int
    metadata: dict[str, Any] = field(default_factory=dict)


class CudaBackend(StreamOrdering):
    """The ``cuda`` backend.

    Args:
        driver: an opened :class:`~accy_backend_cuda.driver.CudaDriver`, or ``None`` for
            compile-only use.
        sm: SM to compile for without a driver (default 90); ignored with a driver.
        unavailable_reason: compile-only: why there is no driver (for error messages).
    """

    name = "cuda"

    def __init__(self, driver: Any = None, sm: int = 90, unavailable_reason: str = "") -> None:
        self.driver = driver
        # held by every device call and by launch/load as a whole: the stream-ordering state
        # (the streams a transfer joins), the context generation and module unloads are
        # shared by every thread that uses this backend (a transfer iterating the pending
        # streams while another thread's launch added one raised RuntimeError)
        self._api_lock = threading.RLock()
        self._reason = unavailable_reason or "opened for compile only"
        # ids of live objects by kind, for live_objects() (leak checks)
        self._counts: dict[str, set[int]] = {k: set() for k in ("kernels", "buffers", "streams",
                                                                  "events")}
        self._generation = 0
        libdevice = find_libdevice()
        if driver is None:
            self.info = None
            self.target = CudaTarget(sm, libdevice=libdevice)
        else:
            from accy_backend_cuda.driver import ptx_isa_for_driver

            self.info = driver.info()
            major, minor = self.info.compute_capability
            isa = min(ptx_isa_for_driver(self.info.driver_version), LLVM_MAX_PTX_ISA)
            self.target = CudaTarget(_known_sm(major * 10 + minor), isa, libdevice)
            self._stream = driver.create_stream()
        self._caps: Capabilities | None = None
        self._reset_ordering()

    def live_objects(self) -> dict[str, int]:
        """Return counts of live kernels, buffers, streams and events (leak checks)."""
        return {kind: len(ids) for kind, ids in self._counts.items()}

    # description ------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """Return the device's capabilities (compile-only: the chosen SM's usual limits)."""
        if self._caps is None:
            t, info = self.target, self.info
            codegen = f"ptx{t.ptx_isa}|{'libdevice' if t.libdevice else 'fastmath'}"
            if info is None:
                name, driver, threads, shared, warp = f"compile-only sm_{t.sm}", 0, 1024, 0, 32
                shared = _STATIC_SHARED_BYTES
            else:
                name, driver, threads = info.name, info.driver_version, info.max_threads_per_block
                shared = min(info.shared_memory_per_block_bytes, _STATIC_SHARED_BYTES)
                warp = info.warp_size
            identity = f"{name}|sm_{t.sm}|driver {driver}|{codegen}"
            features = {"f64", "i64", "float_atomics", "float64_atomics", "int64_atomics",
                        "streams"}
            features |= {"f64_math"} if t.libdevice else set()
            self._caps = Capabilities(
                backend="cuda",
                device_name=name,
                device_fingerprint=hashlib.sha256(identity.encode()).hexdigest(),
                dtypes=frozenset(_SCALAR_TYPES),
                artifact_formats=_EMIT_FORMATS,
                max_workgroup_size=threads,
                subgroup_size=warp,
                shared_memory_bytes=shared,
                features=frozenset(features),
            )
        return self._caps

    def target_profile(self) -> TargetProfile:
        """Return the :class:`TargetProfile` built from :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    # compilation ------------------------------------------------------------------------
    def _target_for(self, sm: str | int | None, noalias: bool = True) -> CudaTarget:
        t = self.target
        if sm is None and noalias == t.noalias:
            return t
        if sm is None:
            return CudaTarget(t.sm, t.ptx_isa, t.libdevice, t.opt_level, noalias)
        return CudaTarget(sm, None, t.libdevice, t.opt_level, noalias)

    def _ptx(self, kernel: Kernel, target: CudaTarget, outputs: tuple[str, ...]) -> dict:
        text = emit_llvm_ir(kernel, target)
        request = _request(target, text, outputs)
        return {"llvm": text.encode(), **compile_llvm(request)}

    def compile(self, kernel: Kernel, options: Mapping[str, object] | None = None) -> Artifact:
        """Compile ``kernel`` to a ``"ptx"`` :class:`Artifact` for this device's SM.

        Options: ``noalias`` (bool, default True: buffers of one launch are distinct).

        Raises:
            VerifyError: invalid kernel. CapabilityError: beyond this target's limits.
            CodegenError: LLVM rejected the IR or crashed (worker process).
        """
        noalias = bool((options or {}).get("noalias", True))
        target = self._target_for(None, noalias)
        ptx = self._ptx(kernel, target, ("ptx",))["ptx"]
        metadata = {
            "buffers": [[b.name, b.dtype, b.access] for b in kernel.buffers],
            "scalars": [[s.name, s.dtype] for s in kernel.scalars],
            "workgroup_size": kernel.workgroup_size,
            "noalias": noalias,
            "sm": target.sm,
            "ptx_isa": target.ptx_isa,
            "libdevice": bool(target.libdevice),
            "kernel_fingerprint": kernel.fingerprint(),
        }
        return Artifact("cuda", kernel.name, "ptx", ptx, kernel.name, metadata)

    def emit(self, kernel: Kernel, format: str, target: str | int | None = None) -> bytes:
        """Return ``"ptx"``, ``"llvm"`` (generated IR) or ``"llvm-opt"`` for ``kernel``.

        Args:
            target: SM to compile for (``"sm_90"``); default: the device's (or the
                compile-only SM).

        Raises:
            UnsupportedError: unknown format. CapabilityError: unknown SM.
        """
        if format not in _EMIT_FORMATS:
            raise UnsupportedError(
                f"cuda emit: unknown format {format!r}; known: {', '.join(_EMIT_FORMATS)}",
                feature=format, backend="cuda",
            )
        chosen = self._target_for(target)
        if format == "llvm":
            return emit_llvm_ir(kernel, chosen).encode()
        return self._ptx(kernel, chosen, (format,))[format]

    # device access ------------------------------------------------------------------------
    def _device(self) -> Any:
        if self.driver is None:
            raise BackendUnavailable(
                f"cuda backend is compile-only here: {self._reason}", backend="cuda",
                reason=self._reason,
            )
        return self.driver

    @contextmanager
    def _guard(self, what: str) -> Iterator[Any]:
        from accy_backend_cuda.driver import DriverError, DriverFault

        driver = self._device()
        try:
            with self._api_lock:
                yield driver
        except DriverFault as e:
            self._recover()
            raise LaunchError(
                f"cuda {what}: device fault {e.name}; the context was recreated, buffers "
                "allocated before it are gone; check the kernel's indexing"
            ) from e
        except DriverError as e:
            if e.code == _OUT_OF_MEMORY:
                raise OutOfResources(f"cuda {what}: out of device memory ({e})",
                                     resource="device_memory") from e
            raise BackendError(f"cuda {what}: {e}") from e

    def _recover(self) -> None:
        self.driver.reset()
        self._generation += 1
        self._stream = self.driver.create_stream()
        self._reset_ordering()

    def load(self, artifact: Artifact) -> LoadedKernel:
        """JIT-load a ``"ptx"`` artifact into this context.

        Raises:
            LaunchError: wrong backend or format, or PTX for a newer SM than the device.
            CompileError: the driver JIT rejected the PTX (its log is in the message).
        """
        if artifact.backend != "cuda" or artifact.format != "ptx":
            raise LaunchError(
                f"cuda load: needs a cuda 'ptx' artifact, got {artifact.backend!r} "
                f"{artifact.format!r}"
            )
        sm = artifact.metadata.get("sm", 0)
        if sm > self.target.sm:
            raise LaunchError(
                f"cuda load: {artifact.kernel_name!r} was built for sm_{sm}, the device is "
                f"sm_{self.target.sm}; recompile"
            )
        return self._load(artifact)

    def _load(self, artifact: Artifact) -> LoadedKernel:
        from accy_backend_cuda.driver import DriverError

        driver = self._device()
        with self._api_lock:  # the module, its function and the generation: one context
            try:
                module = driver.load_module(artifact.data.decode())
            except DriverError as e:
                raise CompileError(
                    f"cuda load: the driver JIT rejected {artifact.kernel_name!r}: {e.name}: "
                    f"{e.detail or '(no log)'}", tool="cuda-jit", stderr=e.detail,
                ) from e
            with self._guard("load") as d:
                function = d.function(module, artifact.entry)
            loaded = LoadedKernel(artifact, module, function, self._generation,
                                  dict(artifact.metadata))
        self._counts["kernels"].add(id(loaded))
        return loaded

    def allocate(self, nbytes: int) -> CudaBuffer:
        """Return a device buffer of ``nbytes`` bytes (contents undefined)."""
        with self._guard("allocate") as d:
            buf = CudaBuffer(d.allocate(nbytes), nbytes, self._generation)
        self._counts["buffers"].add(id(buf))
        return buf

    def _live(self, buffer: CudaBuffer, what: str) -> int:
        if not isinstance(buffer, CudaBuffer):
            raise LaunchError(f"cuda {what}: expected a cuda buffer, got {type(buffer).__name__}")
        if buffer.generation == FREED:
            raise LaunchError(f"cuda {what}: the buffer was freed")
        if buffer.generation != self._generation:
            raise LaunchError(
                f"cuda {what}: buffer was allocated before a device fault reset the context; "
                "allocate it again"
            )
        return buffer.pointer

    def write(self, buffer: CudaBuffer, data: np.ndarray) -> None:
        """Copy contiguous host ``data`` into the start of ``buffer``."""
        with self._guard("write") as d:  # the pointer too, under the lock (see free)
            pointer = self._live(buffer, "write")
            self._join(d)  # a launch may still read the buffer
            d.copy_to_device(pointer, np.ascontiguousarray(data), self._stream)
            self._transferred(d)

    def read(self, buffer: CudaBuffer, out: np.ndarray) -> np.ndarray:
        """Copy the start of ``buffer`` into contiguous host ``out`` and return it."""
        with self._guard("read") as d:  # the pointer too, under the lock (see free)
            pointer = self._live(buffer, "read")
            self._join(d)
            d.copy_to_host(out, pointer, self._stream)
            d.stream_synchronize(self._stream)
        return out

    def fill(self, buffer: CudaBuffer, value: int) -> None:
        """Set every byte of ``buffer`` to ``value``."""
        with self._guard("fill") as d:  # the pointer too, under the lock (see free)
            pointer = self._live(buffer, "fill")
            self._join(d)
            d.fill_bytes(pointer, value, buffer.nbytes, self._stream)
            self._transferred(d)

    def copy(self, src: CudaBuffer, dst: CudaBuffer, nbytes: int) -> None:
        """Copy ``nbytes`` from the start of ``src`` to the start of ``dst``."""
        with self._guard("copy") as d:
            s, t = self._live(src, "copy"), self._live(dst, "copy")
            self._join(d)
            d.copy_device(t, s, nbytes, self._stream)
            self._transferred(d)

    def free(self, buffer: CudaBuffer) -> None:
        """Release ``buffer`` (a buffer of a reset context is just forgotten)."""
        self._counts["buffers"].discard(id(buffer))
        with self._api_lock:
            generation, buffer.generation = buffer.generation, FREED
            if generation == self._generation and self.driver is not None:
                with self._guard("free") as d:
                    d.free(buffer.pointer)

    def host_view(self, buffer: Any, dtype: Any, shape: tuple[int, ...]) -> None:
        """No host-visible memory: always ``None``."""
        return None

    def import_host(self, array: np.ndarray) -> None:
        """No zero-copy host buffers: always ``None``."""
        return None

    # launch -------------------------------------------------------------------------------
    def launch(self, loaded: LoadedKernel, geometry: Geometry, buffers: Sequence[CudaBuffer],
               scalars: Sequence[tuple[str, int | float]], stream: Any = None,
               wait_events: Sequence[Any] = (), signal_event: Any = None) -> None:
        """Launch ``loaded``: buffers (outputs, inputs, count) then scalars, each checked.

        Raises:
            LaunchError: argument count, dtype or size mismatch, wrong work-group size,
                aliasing buffers for a ``noalias`` kernel, or a device fault.
        """
        # all of it under the lock: the buffers' pointers (a free in another thread between
        # reading one and the launch: a dangling pointer), the generation check, a reload
        with self._api_lock:
            self._launch(loaded, geometry, buffers, scalars, stream, wait_events, signal_event)

    def _launch(self, loaded: LoadedKernel, geometry: Geometry, buffers: Sequence[CudaBuffer],
                scalars: Sequence[tuple[str, int | float]], stream: Any,
                wait_events: Sequence[Any], signal_event: Any) -> None:
        meta, name = loaded.metadata, loaded.artifact.kernel_name
        args = self._arguments(name, meta, buffers, scalars)
        if geometry.workgroup_size != meta["workgroup_size"]:
            raise LaunchError(
                f"launch {name!r}: workgroup_size {geometry.workgroup_size} differs from the "
                f"kernel's {meta['workgroup_size']}"
            )
        if not 0 < geometry.groups <= _MAX_GRID_X:
            if geometry.groups == 0:
                return
            raise LaunchError(f"launch {name!r}: groups must be 1..{_MAX_GRID_X}, "
                              f"got {geometry.groups}")
        if loaded.function is None:
            raise LaunchError(f"launch {name!r}: the kernel was destroyed")
        if loaded.generation != self._generation:
            fresh = self._load(loaded.artifact)
            self._counts["kernels"].discard(id(fresh))  # it replaces loaded's module
            loaded.module, loaded.function, loaded.generation = (
                fresh.module, fresh.function, fresh.generation)
        queue = stream if stream is not None else self._stream
        with self._guard(f"launch {name!r}") as d:
            self._order_launch(d, stream)
            for event in wait_events:
                d.wait_event(queue, event)
            d.launch(loaded.function, geometry.groups, geometry.workgroup_size, args, queue)
            if signal_event is not None:
                d.record_event(signal_event, queue)
            if queue is not self._stream:
                self._pending[id(queue)] = queue  # joined by the next transfer

    def _arguments(self, name: str, meta: dict[str, Any], buffers: Sequence[CudaBuffer],
                   scalars: Sequence[tuple[str, int | float]]) -> list[np.generic]:
        return launch_arguments(
            name, meta, buffers, scalars,
            buffer_arg=lambda buf: np.uint64(self._live(buf, f"launch {name!r}")),
            scalar_arg=lambda dtype, value: _SCALAR_TYPES[dtype](value), alias_key=int)

    # lifetime ------------------------------------------------------------------------------
    def destroy(self, obj: Any) -> None:
        """Release a loaded kernel, stream or event."""
        if self.driver is None:
            return
        with self._guard("destroy") as d:
            if isinstance(obj, LoadedKernel):
                self._counts["kernels"].discard(id(obj))
                if obj.generation == self._generation and obj.function is not None:
                    d.unload_module(obj.module)
                obj.module = obj.function = None  # a later launch: LaunchError
            elif d.is_event(obj):
                self._counts["events"].discard(id(obj))
                d.destroy_event(obj)
            else:
                self._counts["streams"].discard(id(obj))
                d.destroy_stream(obj)
                self._forget_stream(d, obj)

    def close(self) -> None:
        """Release the context."""
        if self.driver is not None:
            self.driver.close()
            self.driver = None


def _known_sm(sm: int) -> int:
    """Map a device SM the target table lacks to the nearest lower known one (PTX JITs up)."""
    from accy_backend_cuda.target import _SM_MIN_ISA

    lower = [k for k in _SM_MIN_ISA if k <= sm]
    return max(lower) if lower else sm


def _request(target: CudaTarget, text: str, outputs: tuple[str, ...]) -> Any:
    from accy.codegen import CodegenRequest

    return CodegenRequest(
        ir=text, triple=target.triple, cpu=target.cpu, features=target.features,
        opt_level=target.opt_level, outputs=outputs, reloc="default", code_model="default",
        link_libraries=target.link_libraries(),
    )
