"""CpuBackend: compile kernel IR to host object code, load it (dlopen or MCJIT), run work-groups.

A program is linked into a shared object when a system linker is present and loaded with
``ctypes`` (no llvmlite on a warm-cache load: :mod:`accy_backend_cpu.shared_object`);
otherwise its object code goes into an MCJIT engine.

Buffers are 64-byte aligned 1-D ``numpy.uint8`` arrays in host memory (``host_view`` and
``import_host`` are zero-copy). A launch is synchronous: it splits ``[0, groups)`` over a
persistent thread pool of ``ACCY_NUM_THREADS`` threads (default ``os.cpu_count()``) by work —
work-items times the loop iterations of one (:func:`accy.kernel.loops.loop_trips`), so a
few long work-items (a row reduction) still use every thread; streams
and events exist for protocol compatibility and are already complete when returned.

Launch arguments follow the fixed order: buffers (outputs, inputs, optional element-count
buffer), then scalars as ``(dtype, value)`` pairs, each packed into an 8-byte slot.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from accy import config
from accy.backend import Artifact, Capabilities, TargetProfile
from accy.errors import LaunchError, UnsupportedError, VerifyError
from accy.hashing import sha256
from accy.kernel.dtypes import DTYPES, NUMPY_DTYPES, dtype_bytes
from accy.records import record

from accy_backend_cpu import shared_object
from accy_backend_cpu.bound_launch import bind_launch
from accy_backend_cpu.launch_args import check_workgroup, live_kernel, pack_pointers, pack_scalars
from accy_backend_cpu.loading import KERNEL_FN, check_artifact, library, mcjit_engine
from accy_backend_cpu.target import CpuTarget, default_num_threads
from accy_backend_cpu.threadpool import WorkgroupPool

if TYPE_CHECKING:  # kernel IR: compiling only (a warm-cache load imports none of it)
    from accy.kernel import Kernel

__all__ = ["CpuBackend", "LoadedKernel"]


_EMIT_FORMATS = ("llvm", "llvm-opt", "asm", "obj")


@record(frozen=False)
class LoadedKernel:
    """A loaded kernel, ``function(bufs, scalars, begin, end, nwg)``; ``engine`` keeps its
    code alive (an MCJIT engine, or the ``ctypes.CDLL`` of a linked program); ``driver``:
    the ``(run, help)`` functions of the native loop driver in its program, if it has one
    (:mod:`accy_backend_cpu.loop_driver`)."""

    artifact: Any
    engine: Any
    function: Any
    metadata: dict[str, Any]
    driver: Any = None


class _Handle:
    """A CPU stream or event: work is complete when a launch returns."""

    complete = True

    def __init__(self, kind: str = "streams") -> None:
        self.kind = kind


class CpuBackend:
    """The accy backend protocol on the host CPU (see ``accy.backend.protocol``).

    Args:
        num_threads: launch threads; default ``ACCY_NUM_THREADS`` or ``os.cpu_count()``.
        target: the :class:`CpuTarget` (default: this host, O3).
    """

    name = "cpu"
    #: run loop nodes with the native loop driver (:meth:`bind_loop`); False: the runtime
    #: launches loop bodies one launch at a time (for comparisons and tests)
    native_loops = True

    def __init__(self, num_threads: int | None = None, target: CpuTarget | None = None) -> None:
        self.target = target or CpuTarget()
        self.pool = WorkgroupPool(num_threads or default_num_threads(), target=self.target)
        self._jit_lock = threading.Lock()
        self._caps: Any = None
        # ids of live objects by kind, for live_objects() (leak checks)
        self._live: dict[str, set[int]] = {k: set() for k in ("kernels", "buffers", "streams",
                                                                  "events")}

    # description ------------------------------------------------------------------------
    def capabilities(self) -> Any:
        """Return the host's :class:`Capabilities` (all six dtypes, f64 math, atomics)."""
        if self._caps is None:
            self._caps = Capabilities(
                backend="cpu",
                device_name=f"{self.target.cpu} ({os.cpu_count()} threads)",
                device_fingerprint=self.target.fingerprint(),
                dtypes=frozenset(DTYPES),
                artifact_formats=("obj", "llvm", "asm"),
                max_workgroup_size=1024,
                subgroup_size=1,
                shared_memory_bytes=65536,
                features=frozenset({"f64", "i64", "f64_math", "float_atomics", "float64_atomics",
                                    "int64_atomics", "host_memory", self.target.simd_feature()}),
            )
        return self._caps

    def live_objects(self) -> dict[str, int]:
        """Return counts of live kernels, buffers, streams and events (leak checks): loaded
        or created and not yet destroyed, allocated or imported and not yet freed."""
        return {kind: len(ids) for kind, ids in self._live.items()}

    def target_profile(self) -> Any:
        """Return the :class:`TargetProfile` built from :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    # compilation ------------------------------------------------------------------------
    def _check(self, kernel: Kernel) -> None:
        if kernel.workgroup_size > 1024:
            raise UnsupportedError(
                f"kernel {kernel.name!r}: workgroup_size "
                f"{kernel.workgroup_size} exceeds the CPU limit 1024",
                feature="workgroup_size",
                backend="cpu",
            )
        shared = sum(a.size_elems * dtype_bytes(a.dtype) for a in kernel.shared)
        if shared > 65536:
            raise UnsupportedError(
                f"kernel {kernel.name!r}: {shared} bytes of shared memory "
                f"exceed the CPU limit 65536",
                feature="shared_memory",
                backend="cpu",
            )

    def prepare_compile(self) -> None:
        """Start the codegen worker now (no wait): a compile is coming, and the worker's
        start-up then overlaps the passes instead of delaying the first LLVM run."""
        from accy.codegen import start_worker

        start_worker()

    def _metadata(self, kernel: Kernel, noalias: bool,
                  fingerprint: str | None = None) -> dict[str, Any]:
        from accy.kernel.loops import loop_trips  # compiling only

        return {
            "buffers": [[b.name, b.dtype, b.access] for b in kernel.buffers],
            "scalars": [[s.name, s.dtype] for s in kernel.scalars],
            "workgroup_size": kernel.workgroup_size,
            # loop iterations per work-item (1 when not static): the pool splits by work
            "work_per_item": max(1, loop_trips(kernel) or 1),
            "noalias": noalias,
            "triple": self.target.triple,
            "cpu": self.target.cpu,
            "target_fingerprint": self.target.fingerprint(),
            "kernel_fingerprint": fingerprint or kernel.fingerprint(),
        }

    def compile(self, kernel: Kernel, options: dict[str, Any] | None = None) -> Any:
        """Compile ``kernel`` to an ``"obj"`` :class:`Artifact` (object code for this host).

        Options: ``noalias`` (bool, default True: buffers of one launch are distinct).

        Raises:
            VerifyError: invalid kernel. UnsupportedError: exceeds CPU limits.
            CodegenError: LLVM rejected the IR or crashed (worker process).
        """
        from accy.codegen import compile_llvm, emit_llvm_ir

        from accy_backend_cpu.vecmath import link_vecmath

        options = dict(options or {})
        noalias = bool(options.get("noalias", True))
        self._check(kernel)
        text = link_vecmath(emit_llvm_ir(kernel, self.target, noalias=noalias))
        data = compile_llvm(self.target.request(text, ("obj",)))["obj"]
        return Artifact(
            backend="cpu",
            kernel_name=kernel.name,
            format="obj",
            data=data,
            entry=kernel.name,
            metadata=self._metadata(kernel, noalias),
        )

    def compile_program(self, kernels: Sequence[Kernel], options: dict[str, Any] | None = None,
                        name: str = "program") -> Any:
        """Compile all ``kernels`` of one program into a single :class:`Artifact`: a shared
        object (format ``"so"``) when a system linker is on ``PATH`` and the linked program
        loads here, else object code (``"obj"``).

        One LLVM module holds the kernels, so the program costs one codegen round trip and
        one target-machine set-up, and :meth:`load_program` one ``dlopen`` or JIT engine.
        Kernels equal up to their name (a Python loop unrolled at trace time repeats the same
        kernel) share one function. A program of at least ``MIN_PARALLEL_KERNELS`` distinct
        kernels is split into up to twice ``ACCY_CODEGEN_WORKERS`` modules of similar size,
        compiled on that many worker processes at once (:mod:`accy_backend_cpu.program_parts`);
        its object files are linked into the one shared object, or loaded into the one
        engine. Metadata: ``kernels`` (name → per-kernel metadata, as :meth:`compile`),
        ``entries`` (name → symbol) and, for object code, ``objects`` (the sizes of the
        object files packed end to end in ``data``). Options: ``noalias`` (as
        :meth:`compile`); ``loop_driver`` (bool): add the native loop driver's module
        (:mod:`accy_backend_cpu.loop_ir`; metadata ``driver`` names its entries), so a
        program with loop nodes loads its driver with its kernels.

        Raises:
            VerifyError: an invalid kernel, or two kernels of the same name.
            UnsupportedError: a kernel exceeds the CPU limits.
            CodegenError: LLVM rejected the IR or crashed (worker process).
        """
        from accy.codegen import compile_llvm_many, emit_llvm_module

        # compile-only modules (a warm-cache load imports none of them)
        from accy_backend_cpu.loop_ir import DRIVER_ENTRIES, driver_ir
        from accy_backend_cpu.program_parts import (
            KERNEL_WEIGHT,
            MIN_PARALLEL_KERNELS,
            pack_objects,
            partition,
        )
        from accy_backend_cpu.vecmath import link_vecmath

        noalias = bool(dict(options or {}).get("noalias", True))
        unique: dict[str, Kernel] = {}
        weights: dict[str, int] = {}
        entries: dict[str, str] = {}
        metas: dict[str, dict[str, Any]] = {}
        for kernel in kernels:
            self._check(kernel)
            if kernel.name in metas:
                raise VerifyError(f"program {name!r}: two kernels named {kernel.name!r}")
            text = kernel.to_text()  # "kernel <name>(...": the name only on the first line
            head, _, rest = text.partition("(")
            if head != f"kernel {kernel.name}":  # not the expected layout: never merge it
                rest = text
            shape = sha256(rest.encode()).hexdigest()
            entries[kernel.name] = unique.setdefault(shape, kernel).name
            weights.setdefault(entries[kernel.name], KERNEL_WEIGHT + len(text))
            fingerprint = sha256(text.encode()).hexdigest()
            metas[kernel.name] = self._metadata(kernel, noalias, fingerprint)
        distinct = list(unique.values())
        workers = config.codegen_workers() if len(distinct) >= MIN_PARALLEL_KERNELS else 1
        groups = partition(distinct, [weights[k.name] for k in distinct], 2 * workers
                           if workers > 1 else 1)
        requests = [
            self.target.request(link_vecmath(emit_llvm_module(
                group, self.target, noalias=noalias,
                module_name=name if len(groups) == 1 else f"{name}.{i}")), ("obj",))
            for i, group in enumerate(groups)
        ]
        symbols = sorted(set(entries.values()))
        meta = {"program": True, "kernels": metas, "entries": entries,
                "cpu": self.target.cpu, "target_fingerprint": self.target.fingerprint()}
        if dict(options or {}).get("loop_driver"):
            requests.append(self.target.request(driver_ir(self.target.triple), ("obj",)))
            meta["driver"] = list(DRIVER_ENTRIES)
            symbols += DRIVER_ENTRIES
        objects = [out["obj"] for out in compile_llvm_many(requests, workers)]
        linked = shared_object.link(objects, symbols)
        if linked is None:
            data, meta["objects"] = pack_objects(objects)
        return Artifact(backend="cpu", kernel_name=name, format="obj" if linked is None else "so",
                        data=data if linked is None else linked, entry="", metadata=meta)

    def emit(self, kernel: Kernel, format: str) -> bytes:
        """Return ahead-of-time output: ``"llvm"`` (generated IR text), ``"llvm-opt"``,
        ``"asm"`` or ``"obj"``.

        Raises:
            UnsupportedError: unknown format.
        """
        if format not in _EMIT_FORMATS:
            raise UnsupportedError(
                f"cpu emit: unknown format {format!r}; known: {', '.join(_EMIT_FORMATS)}",
                feature=format,
                backend="cpu",
            )
        from accy.codegen import compile_llvm, emit_llvm_ir

        from accy_backend_cpu.vecmath import link_vecmath

        self._check(kernel)
        text = link_vecmath(emit_llvm_ir(kernel, self.target))
        if format == "llvm":
            return text.encode()
        return compile_llvm(self.target.request(text, (format,)))[format]

    def _check_artifact(self, artifact: Any, formats: tuple[str, ...] = ("obj",)) -> None:
        check_artifact(self.target, artifact, formats)

    def _engine(self, objects: Sequence[bytes],
                entries: Sequence[str]) -> tuple[Any, dict[str, int]]:
        """A fresh MCJIT engine holding ``objects``; the address of each entry."""
        return mcjit_engine(self.target, self._jit_lock, objects, entries)

    def load(self, artifact: Any) -> LoadedKernel:
        """Load an ``"obj"`` artifact of one kernel into a fresh MCJIT engine.

        Raises:
            LaunchError: wrong backend/format, or built for another CPU.
        """
        self._check_artifact(artifact)
        engine, addresses = self._engine([artifact.data], [artifact.entry])
        fn = KERNEL_FN(addresses[artifact.entry])
        loaded = LoadedKernel(artifact, engine, fn, dict(artifact.metadata))
        self._live["kernels"].add(id(loaded))
        return loaded

    def load_program(self, artifact: Any) -> dict[str, LoadedKernel]:
        """Load a :meth:`compile_program` artifact — a shared object with ``dlopen``, object
        code into one MCJIT engine; kernel name → :class:`LoadedKernel` (kernels sharing a
        function share its entry point).

        Raises:
            LaunchError: wrong backend/format, not a program, built for another CPU, or a
                shared object that does not load here.
        """
        self._check_artifact(artifact, ("obj", "so"))
        meta = artifact.metadata
        if not meta.get("program"):
            raise LaunchError(f"cpu load_program: {artifact.kernel_name!r} is not a program")
        entries: dict[str, str] = meta["entries"]
        symbols = sorted(set(entries.values()))
        drivers = list(meta.get("driver") or ())
        if drivers:  # the native loop driver's entry types (programs with loops only)
            from accy_backend_cpu.loop_ir import HELP_FN, RUN_FN
        if artifact.format == "so":
            engine, functions = library(artifact, symbols)
            driver = (RUN_FN((drivers[0], engine)), HELP_FN((drivers[1], engine))) \
                if drivers else None
        else:
            from accy_backend_cpu.program_parts import unpack_objects

            try:
                objects = unpack_objects(artifact.data, meta.get("objects"))
            except ValueError as e:
                raise LaunchError(f"cpu load_program: {artifact.kernel_name!r}: {e}") from None
            engine, addresses = self._engine(objects, symbols + drivers)
            functions = {e: KERNEL_FN(addresses[e]) for e in symbols}
            driver = (RUN_FN(addresses[drivers[0]]), HELP_FN(addresses[drivers[1]])) \
                if drivers else None
        out = {}
        for name, kmeta in meta["kernels"].items():
            view = Artifact(backend="cpu", kernel_name=name, format=artifact.format, data=b"",
                            entry=entries[name], metadata=kmeta)
            out[name] = LoadedKernel(view, engine, functions[entries[name]], dict(kmeta),
                                     driver)
            self._live["kernels"].add(id(out[name]))
        return out

    # memory -----------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> np.ndarray:
        """Return an uninitialised 64-byte aligned host buffer of ``nbytes`` bytes."""
        raw = np.empty(nbytes + 64, np.uint8)
        offset = (-raw.ctypes.data) % 64
        buf = raw[offset : offset + nbytes]
        self._live["buffers"].add(id(buf))
        return buf

    def write(self, buf: np.ndarray, array: np.ndarray) -> None:
        """Copy ``array``'s bytes to the start of ``buf``."""
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buf[: data.size] = data

    def read(self, buf: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Copy the first ``out.nbytes`` bytes of ``buf`` into ``out`` and return it."""
        out.reshape(-1).view(np.uint8)[:] = buf[: out.nbytes]
        return out

    def fill(self, buf: np.ndarray, byte_value: int) -> None:
        """Set every byte of ``buf`` to ``byte_value``."""
        buf.fill(byte_value)

    def copy(self, src: np.ndarray, dst: np.ndarray, nbytes: int) -> None:
        """Copy ``nbytes`` bytes from ``src`` to ``dst``."""
        dst[:nbytes] = src[:nbytes]

    def free(self, buf: np.ndarray) -> None:
        """Release ``buf`` (memory is reclaimed when the last reference goes)."""
        self._live["buffers"].discard(id(buf))

    def host_view(self, buf: np.ndarray, dtype: Any, shape: Sequence[int]) -> np.ndarray:
        """Return a zero-copy numpy view of ``buf`` (``dtype`` numpy or kernel dtype)."""
        dt = np.dtype(NUMPY_DTYPES.get(dtype, dtype)) if isinstance(dtype, str) else np.dtype(dtype)
        count = int(np.prod(shape)) if len(shape) else 1
        return buf[: count * dt.itemsize].view(dt).reshape(tuple(shape))

    def import_host(self, array: np.ndarray) -> np.ndarray | None:
        """Return ``array``'s memory as a buffer without copying (None if not contiguous)."""
        if not array.flags.c_contiguous:
            return None
        buf = array.reshape(-1).view(np.uint8)
        self._live["buffers"].add(id(buf))
        return buf

    # execution --------------------------------------------------------------------------
    def launch(
        self,
        loaded: LoadedKernel,
        geometry: Any,
        buffers: Sequence[np.ndarray],
        scalars: Sequence[tuple[str, int | float]],
        stream: Any = None,
        wait_events: Sequence[Any] = (),
        signal_event: Any = None,
    ) -> None:
        """Run ``loaded`` over ``geometry`` and return when it is done.

        Raises:
            LaunchError: buffer/scalar count or dtype mismatch, wrong work-group size, or the
                same buffer passed twice to a ``noalias`` kernel.
        """
        # the engine, then the function, held to the end: a destroy in another thread (it
        # clears the function first) then frees no code under this launch
        engine = loaded.engine
        fn = loaded.function
        name, meta = live_kernel(loaded)
        pointers = pack_pointers(name, meta, buffers)
        slots = pack_scalars(name, meta, scalars)
        check_workgroup(name, meta, geometry)
        groups = int(geometry.groups)
        if groups <= 0:  # (fn is not None: live_kernel saw the function after it was read)
            return

        self.pool.run_kernel(fn, ctypes.cast(fn, ctypes.c_void_p).value, pointers, slots,
                             groups, meta["workgroup_size"] * meta.get("work_per_item", 1))
        del engine

    def bind_launch(self, loaded: LoadedKernel, geometry: Any,
                    scalars: Sequence[tuple[str, int | float]],
                    work: int | None = None) -> tuple[Any, Any]:
        """Validate and pack a launch's geometry and scalars once, for repeated calls.

        ``work``: the launch's total work (work-items times their loop iterations) where the
        kernel's static trip counts do not tell (a data-dependent loop, e.g. SpMV's rows:
        the stored entries); it decides whether the launch is split over threads.

        Returns ``(pointers, run)``: ``pointers`` is a ctypes array with one slot per buffer
        (launch order) that the caller fills with buffer addresses; ``run()`` launches with
        the addresses it holds then; ``run`` holds the loaded kernel and its code, so it stays
        valid however long it is kept, and raises ``LaunchError`` once the kernel was
        destroyed (:meth:`destroy`). Unlike :meth:`launch`, nothing about the buffers is
        checked per call: the caller guarantees host buffers of the kernel's dtypes and
        sizes, and, for a ``noalias`` kernel, that no written buffer overlaps another.

        Raises:
            LaunchError: scalar count or dtype mismatch, or the wrong work-group size.
        """
        return bind_launch(self.pool, loaded, geometry, scalars, work)

    def bind_loop(self, flat: Any, kernels: dict[str, LoadedKernel]) -> Any:
        """The native driver of a flattened loop node (:mod:`accy_backend_cpu.loop_driver`):
        every iteration of the loop in one call, no Python per launch. ``flat``: a
        :class:`~accy.runtime.loop_plan.FlatLoop` with its alias facts; ``kernels``: kernel
        name → loaded kernel. None when :attr:`native_loops` is off or the loop does not
        fit the driver.

        Raises:
            LaunchError: a kernel was destroyed, or a launch's scalars or work-group size
                do not match its kernel.
        """
        if not self.native_loops:
            return None
        from accy_backend_cpu.loop_driver import bind_loop

        return bind_loop(self, flat, kernels)

    def create_stream(self) -> _Handle:
        """Return a stream (launches on the CPU are synchronous)."""
        handle = _Handle()
        self._live["streams"].add(id(handle))
        return handle

    def create_event(self) -> _Handle:
        """Return an event (always complete)."""
        handle = _Handle("events")
        self._live["events"].add(id(handle))
        return handle

    def synchronize(self, scope: Any = None) -> None:
        """Wait for outstanding work (none: launches are synchronous)."""

    def destroy(self, obj: Any) -> None:
        """Release a stream, event or loaded kernel (its JIT engine and code)."""
        if isinstance(obj, LoadedKernel):
            # the function first: launch and bind_launch read the engine, then the function
            obj.function = obj.engine = obj.driver = None
            self._live["kernels"].discard(id(obj))
        elif isinstance(obj, _Handle):
            self._live[obj.kind].discard(id(obj))

    def close(self) -> None:
        """Stop the thread pool."""
        self.pool.shutdown()
