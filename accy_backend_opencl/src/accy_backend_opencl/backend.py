"""OpenCLBackend: the accy backend protocol on an OpenCL device through ``pyopencl``.

Compilation is device-independent: the shared LLVM generator emits SPIR-V for
:class:`~accy_backend_opencl.target.OpenCLTarget` (``compile`` → a ``"spirv"`` artifact).
``load`` builds it for the device along the device's path (:mod:`.device`): SPIR-V IL
directly (``clCreateProgramWithIL``), or SPIR 1.2 bitcode from the Khronos translator
(:mod:`.bridge`, Debian's PoCL). Built programs are cached on disk per device
(:mod:`.program_cache`). Buffers, streams and events: :mod:`.queues`.

Without a device (``OpenCLBackend(compile_only=True)``, what ``accy compile`` opens where no
OpenCL platform exists) ``compile`` and ``emit`` still work, for a portable device
(:data:`~accy_backend_opencl.target.PORTABLE_FEATURES`); everything that needs a device raises
:class:`~accy.errors.BackendUnavailable` with the reason.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from accy import config
from accy.backend import Artifact, Capabilities, Geometry, TargetProfile
from accy.backend.arguments import launch_arguments
from accy.codegen import emit_llvm_ir
from accy.codegen.spirv import emit_spirv
from accy.errors import BackendUnavailable, CompileError, LaunchError, UnsupportedError
from accy.kernel import Kernel

from accy_backend_opencl.bridge import SPIR_BUILD_OPTIONS, find_translator, spir_bitcode
from accy_backend_opencl.program_cache import ProgramCache, program_key
from accy_backend_opencl.queues import OpenCLEvent, OpenCLStream, QueueOps
from accy_backend_opencl.target import PORTABLE_FEATURES, OpenCLTarget, entry_name

__all__ = ["LoadedKernel", "OpenCLBackend"]

_EMIT_FORMATS = ("spirv", "llvm", "spir")
_SCALAR_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32,
                 "i64": np.int64, "bool": np.int32, "i8": np.int8, "u8": np.uint8,
                 "i16": np.int16, "u16": np.uint16, "u64": np.uint64}
#: float division and sqrt correctly rounded, as on every other backend (OpenCL allows
#: 2.5 / 3 ulp without it)
BUILD_OPTIONS = "-cl-fp32-correctly-rounded-divide-sqrt"
_GENERIC_WORKGROUP = 256
_GENERIC_LOCAL_BYTES = 32 * 1024


@dataclass(eq=False)
class LoadedKernel:
    """A built program and its kernel object (``None`` once destroyed)."""

    artifact: Artifact
    program: Any
    kernel: Any
    metadata: dict[str, Any] = field(default_factory=dict)


class OpenCLBackend(QueueOps):
    """The ``opencl`` backend.

    Args:
        device: device index or name substring (default ``ACCY_OPENCL_DEVICE``, else the
            first usable GPU, accelerator, then CPU), see :mod:`accy_backend_opencl.device`.
        compile_only: open without a device (compile and emit only).
        unavailable_reason: compile-only: why there is no device (for error messages).

    Raises:
        BackendUnavailable: no platform, no device, ``device`` names none, or the device
            can load no programs.
    """

    name = "opencl"

    def __init__(self, device: int | str | None = None, compile_only: bool = False,
                 unavailable_reason: str = "") -> None:
        self._lock = threading.RLock()
        self._streams: list[OpenCLStream] = []
        self._transfer = None
        self._live: dict[str, set[int]] = {k: set() for k in ("kernels", "buffers", "streams",
                                                                  "events")}
        self._reason = unavailable_reason or "opened for compile only"
        self._caps: Capabilities | None = None
        self.programs = ProgramCache()
        self.translator = find_translator()
        self.info = None
        self.subgroup_size = 1
        self._cl = self._context = self._queue = self._device = None
        if compile_only:
            self.target = OpenCLTarget(PORTABLE_FEATURES, None, None)
            return
        import pyopencl as cl

        from accy_backend_opencl.device import choose_device, list_devices, subgroup_size

        spec = device if device is not None else config.opencl_device()
        self.info, self._device = choose_device(list_devices(cl), spec, self.translator)
        self.path = self.info.loading_path(self.translator)
        try:
            self._context = cl.Context([self._device])
            self._queue = cl.CommandQueue(self._context, self._device)
        except cl.Error as e:
            raise BackendUnavailable(f"opencl: cannot open {self.info.label}: {e}",
                                     backend="opencl", reason=str(e)) from e
        self._cl = cl
        self.subgroup_size = subgroup_size(cl, self._context, self._device, self.info)
        self.target = OpenCLTarget(self.info.features(), self.info.max_workgroup_size,
                                   self.info.local_memory_bytes)

    def _device_module(self) -> Any:
        if self._cl is None:
            raise BackendUnavailable(f"opencl backend is compile-only here: {self._reason}",
                                     backend="opencl", reason=self._reason)
        return self._cl

    # description ------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """Return the device's limits and features (compile-only: a generic device)."""
        if self._caps is None:
            info, tf = self.info, self.target.features
            if info is None:
                name, ident = "compile-only OpenCL SPIR-V", "compile-only"
                workgroup, local = _GENERIC_WORKGROUP, _GENERIC_LOCAL_BYTES
            else:
                name, ident = info.label, f"{info.fingerprint()}|{self.path}"
                workgroup, local = info.max_workgroup_size, info.local_memory_bytes
            ident += f"|{self.target.fingerprint()}"
            # 8/16-bit integers are OpenCL C's char/short (core: Int8/Int16 in the Kernel
            # environment); u64 is ulong
            dtypes = {"f32", "i32", "u32", "bool", "i64", "u64", "i8", "u8", "i16", "u16"} | (
                {"f64"} & tf)
            # streams: in-order queues ordered through events (:mod:`.queues`)
            features = {"i64", "float_atomics", "streams"} | ({"subgroups", "int64_atomics"}
                                                               & tf)
            if "f64" in tf:
                features |= {"f64", "f64_math"}
                if "int64_atomics" in tf:
                    features.add("float64_atomics")
            self._caps = Capabilities(
                backend="opencl", device_name=name,
                device_fingerprint=hashlib.sha256(ident.encode()).hexdigest(),
                dtypes=frozenset(dtypes), artifact_formats=_EMIT_FORMATS,
                max_workgroup_size=workgroup, subgroup_size=self.subgroup_size,
                shared_memory_bytes=local, features=frozenset(features),
            )
        return self._caps

    def target_profile(self) -> TargetProfile:
        """Return the :class:`TargetProfile` built from :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    # compilation ------------------------------------------------------------------------
    def _target_for(self, noalias: bool) -> OpenCLTarget:
        t = self.target
        if noalias == t.noalias:
            return t
        return OpenCLTarget(t.features, t.max_workgroup_size, t.local_memory_bytes, noalias)

    def compile(self, kernel: Kernel, options: Mapping[str, object] | None = None) -> Artifact:
        """Compile ``kernel`` to a ``"spirv"`` :class:`Artifact` (no device needed).

        Options: ``noalias`` (bool, default True: buffers of one launch are distinct).

        Raises:
            VerifyError: invalid kernel. CapabilityError: beyond the device's limits.
            CodegenError: LLVM failed or the module imports an unknown function.
        """
        noalias = bool((options or {}).get("noalias", True))
        target = self._target_for(noalias)
        spirv = emit_spirv(kernel, target)
        metadata = {
            "buffers": [[b.name, b.dtype, b.access] for b in kernel.buffers],
            "scalars": [[s.name, s.dtype] for s in kernel.scalars],
            "workgroup_size": kernel.workgroup_size,
            "noalias": noalias,
            "target_fingerprint": target.fingerprint(),
            "kernel_fingerprint": kernel.fingerprint(),
        }
        return Artifact("opencl", kernel.name, "spirv", spirv, entry_name(kernel.name), metadata)

    def emit(self, kernel: Kernel, format: str, **_: Any) -> bytes:
        """Return ``"spirv"`` (OpenCL SPIR-V), ``"llvm"`` (generated IR) or ``"spir"``
        (SPIR 1.2 bitcode through the translator) for ``kernel``.

        Raises:
            UnsupportedError: unknown format. CompileError: ``"spir"`` without translator.
        """
        if format not in _EMIT_FORMATS:
            raise UnsupportedError(
                f"opencl emit: unknown format {format!r}; known: {', '.join(_EMIT_FORMATS)}",
                feature=format, backend="opencl",
            )
        if format == "llvm":
            return emit_llvm_ir(kernel, self.target).encode()
        spirv = emit_spirv(kernel, self.target)
        return spir_bitcode(spirv, kernel.name, self.translator) if format == "spir" else spirv

    def load(self, artifact: Artifact) -> LoadedKernel:
        """Build ``artifact`` for the device (or take the built program from the disk cache).

        Raises:
            LaunchError: wrong backend or format.
            CompileError: the translator or the driver's compiler failed (build log).
        """
        if artifact.backend != "opencl" or artifact.format != "spirv":
            raise LaunchError(f"opencl load: needs an opencl 'spirv' artifact, got "
                              f"{artifact.backend!r} {artifact.format!r}")
        cl = self._device_module()
        options = BUILD_OPTIONS + (f" {SPIR_BUILD_OPTIONS}" if self.path == "spir" else "")
        key = program_key(self.info.fingerprint(), artifact.data, self.path, options)
        program = self._from_cache(key, options)
        if program is None:
            program = self._build(artifact, options)
            with self._guard("program binaries"):
                binaries = program.get_info(cl.program_info.BINARIES)
            self.programs.store(key, artifact.kernel_name, binaries[0] if binaries else b"")
        with self._guard(f"load {artifact.kernel_name!r}"):
            kernel = cl.Kernel(program, artifact.entry)
        loaded = LoadedKernel(artifact, program, kernel, dict(artifact.metadata))
        self._live["kernels"].add(id(loaded))
        return loaded

    def _from_cache(self, key: str, options: str) -> Any:
        binary = self.programs.load(key)
        if binary is None:
            return None
        cl = self._cl
        try:
            with self._lock:
                return cl.Program(self._context, [self._device], [binary]).build(options)
        except cl.Error:  # a binary of another driver build: rebuild from source
            self.programs.forget(key)
            return None

    def _build(self, artifact: Artifact, options: str) -> Any:
        cl = self._cl
        if self.path == "il":
            program = cl.Program(self._context, artifact.data)
        else:
            bitcode = spir_bitcode(artifact.data, artifact.kernel_name, self.translator)
            program = cl.Program(self._context, [self._device], [bitcode])
        try:
            with self._lock:
                return program.build(options)
        except cl.Error as e:
            log = _build_log(cl, program, self._device) or str(e)
            raise CompileError(
                f"opencl: {self.info.label} could not build kernel {artifact.kernel_name!r} "
                f"({self.path} path): {log.strip().splitlines()[-1] if log.strip() else e}",
                tool=f"clBuildProgram ({self.path})", stderr=log,
            ) from e

    # launch -------------------------------------------------------------------------------
    def launch(self, loaded: LoadedKernel, geometry: Geometry, buffers: Sequence[Any],
               scalars: Sequence[tuple[str, int | float]], stream: Any = None,
               wait_events: Sequence[Any] = (), signal_event: Any = None) -> None:
        """Enqueue ``loaded`` over ``geometry``: buffers (outputs, inputs, count) then scalars.

        Raises:
            LaunchError: destroyed kernel, argument count/dtype/size mismatch, wrong
                work-group size, aliasing buffers for a ``noalias`` kernel, bad events.
            OutOfResources: the device could not run it.
        """
        meta, name = loaded.metadata, loaded.artifact.kernel_name
        if loaded.kernel is None:
            raise LaunchError(f"launch {name!r}: the kernel was destroyed")
        if geometry.workgroup_size != meta["workgroup_size"]:
            raise LaunchError(f"launch {name!r}: workgroup_size {geometry.workgroup_size} "
                              f"differs from the kernel's {meta['workgroup_size']}")
        if geometry.groups < 0:
            raise LaunchError(f"launch {name!r}: groups must be >= 0, got {geometry.groups}")
        waits = [e.event for e in wait_events if _event(e, name).event is not None]
        with self._guard(f"launch {name!r}") as cl:
            # the buffers' memory objects are read under the lock too: a free in another
            # thread cannot release one between reading it and enqueueing the launch
            args = self._arguments(name, meta, buffers, scalars)
            queue = self._queue_of(stream, waits)
            if geometry.groups == 0:
                done = cl.enqueue_marker(queue, wait_for=waits or None)
            else:
                kernel = loaded.kernel  # under the lock: a destroy in another thread is done
                if kernel is None:
                    raise LaunchError(f"launch {name!r}: the kernel was destroyed")
                kernel.set_args(*args)
                done = cl.enqueue_nd_range_kernel(
                    queue, kernel, (geometry.total_items,), (geometry.workgroup_size,),
                    wait_for=waits or None)
            self._after_launch(stream, done)
        if signal_event is not None:
            _event(signal_event, name).event = done

    def _arguments(self, name: str, meta: dict[str, Any], buffers: Sequence[Any],
                   scalars: Sequence[tuple[str, int | float]]) -> list[Any]:
        return launch_arguments(
            name, meta, buffers, scalars,
            buffer_arg=lambda buf: self._mem(buf, f"launch {name!r}"),
            scalar_arg=lambda dtype, value: _SCALAR_TYPES[dtype](
                int(bool(value)) if dtype == "bool" else value),
            alias_key=id)

    # lifetime -------------------------------------------------------------------------------
    def destroy(self, obj: Any) -> None:
        """Release a loaded kernel, a stream or an event (drops its last ``cl.Event``)."""
        if isinstance(obj, OpenCLStream):
            self._destroy_stream(obj)
        elif isinstance(obj, OpenCLEvent):
            obj.event = None
            self._live["events"].discard(id(obj))
        elif isinstance(obj, LoadedKernel) and obj.kernel is not None:
            with self._lock:  # not while a launch sets its arguments and enqueues it
                obj.kernel = obj.program = None
            self._live["kernels"].discard(id(obj))

    def close(self) -> None:
        """Wait for all work and release the queues and the context."""
        if self._cl is None:
            return
        try:
            self.synchronize()
        except Exception:  # noqa: BLE001 - closing a failed device still releases it
            pass
        self._streams.clear()
        self._transfer = None
        self._queue = self._context = self._cl = None


def _event(obj: Any, name: str) -> OpenCLEvent:
    if not isinstance(obj, OpenCLEvent):
        raise LaunchError(f"launch {name!r}: expected an opencl event, got {type(obj).__name__}")
    return obj


def _build_log(cl: Any, program: Any, device: Any) -> str:
    try:
        return str(program.get_build_info(device, cl.program_build_info.LOG))
    except Exception:  # noqa: BLE001 - the log is best effort
        return ""

