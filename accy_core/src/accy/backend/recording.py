"""An in-memory backend that records every call, for runtime tests without a device.

:class:`RecordingBackend` implements the whole :class:`~accy.backend.Backend` protocol on
host memory: a buffer is a numpy ``uint8`` array, a loaded kernel holds the kernel object,
streams and events are counters. Each call increments ``calls[name]`` and appends a
``(name, *summary)`` tuple to ``log``, so a test can check the argument order of launches,
the schedule of a launch graph and leaks (:attr:`RecordingBackend.live_buffers`).

When :func:`accy.kernel.interpret` is importable, ``launch`` also runs the kernel on the
buffers with the kernel-IR interpreter, so results are real; otherwise it only records.

For cleanup tests it counts live objects by kind (:meth:`RecordingBackend.live_objects`)
and can fail on purpose: :meth:`RecordingBackend.inject_failure` makes the k-th later call
of a method raise :class:`~accy.errors.BackendError` before it acquires anything.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accy.backend.protocol import Artifact, Capabilities, Geometry, TargetProfile
from accy.errors import BackendError, InputError, LaunchError

__all__ = ["RecordedBuffer", "RecordedHandle", "RecordingBackend"]

_INJECTABLE = frozenset({"load", "allocate", "write", "import_host", "launch",
                         "create_stream", "create_event"})
_NUMPY_DTYPES = {
    "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
    "u32": np.uint32, "bool": np.bool_,
}


@dataclass(eq=False)
class RecordedBuffer:
    """A host-memory buffer: ``data`` is a 1-D ``uint8`` array of ``nbytes`` bytes."""

    id: int
    data: np.ndarray
    imported: bool = False
    freed: bool = False

    @property
    def nbytes(self) -> int:
        """Return the buffer size in bytes."""
        return int(self.data.nbytes)


@dataclass(eq=False)
class RecordedHandle:
    """A loaded kernel, stream or event; ``kind`` says which and ``payload`` holds extras."""

    kind: str
    id: int
    payload: dict[str, Any] = field(default_factory=dict)
    destroyed: bool = False


class RecordingBackend:
    """Implement the backend protocol in memory and record every call.

    Args:
        name: backend name reported in capabilities and artifacts.
        host_memory: list ``"host_memory"`` in the features and bind host arrays zero-copy
            through :meth:`import_host` / :meth:`host_view`.
        interpret: run launched kernels with :func:`accy.kernel.interpret` when available.
        max_loop_iterations: report this loop limit in the capabilities and make the
            interpreter refuse launches that exceed it (a lavapipe stand-in for tests).
        streams: list ``"streams"`` in the features, so executables spread independent
            launches over streams (recorded per launch; work still runs at launch time).

    Attributes:
        calls: call counts by method name.
        log: ``(method name, *argument summary)`` per call, in call order; buffers appear
            as ``"buf#<id>"``, streams and events as ``"stream#<id>"`` / ``"event#<id>"``.
    """

    DTYPES = frozenset(_NUMPY_DTYPES)
    FEATURES = frozenset({"f64", "i64", "float_atomics", "float64_atomics", "int64_atomics",
                          "subgroups", "f64_math"})

    def __init__(self, name: str = "recording", *, host_memory: bool = False,
                 interpret: bool = True, max_loop_iterations: int | None = None,
                 streams: bool = True) -> None:
        self.name = name
        self._streams = streams
        self._failures: dict[str, int] = {}
        self.max_loop_iterations = max_loop_iterations
        self.calls: collections.Counter[str] = collections.Counter()
        self.log: list[tuple] = []
        self._host_memory = host_memory
        self._interpret = interpret
        self._ids = itertools.count(1)
        self._buffers: dict[int, RecordedBuffer] = {}
        self._handles: dict[int, RecordedHandle] = {}

    # ----------------------------------------------------------------------- bookkeeping

    def _record(self, method: str, *summary: object) -> None:
        self.calls[method] += 1
        self.log.append((method, *summary))

    def inject_failure(self, method: str, k: int = 1) -> None:
        """Make the ``k``-th call of ``method`` from now on raise :class:`BackendError`
        (once), before it acquires anything; ``k=0`` cancels an injection.

        ``method``: ``load``, ``allocate``, ``write``, ``import_host``, ``launch``,
        ``create_stream`` or ``create_event``.

        Raises:
            InputError: another method name, or ``k`` < 0.
        """
        if method not in _INJECTABLE:
            raise InputError(f"inject_failure: method must be one of "
                             f"{', '.join(sorted(_INJECTABLE))}, got {method!r}")
        if not isinstance(k, int) or k < 0:
            raise InputError(f"inject_failure: k must be an int >= 0, got {k!r}")
        if k:
            self._failures[method] = k
        else:
            self._failures.pop(method, None)

    def _maybe_fail(self, method: str) -> None:
        left = self._failures.get(method)
        if left is None:
            return
        if left > 1:
            self._failures[method] = left - 1
            return
        del self._failures[method]
        self._record("injected_failure", method)
        raise BackendError(f"{method}: injected failure (recording backend)")

    def live_objects(self) -> dict[str, int]:
        """Return counts of live objects by kind: ``kernels``, ``buffers``, ``streams``,
        ``events`` (allocated or imported and not freed / created and not destroyed)."""
        counts = {"kernels": 0, "buffers": self.live_buffers, "streams": 0, "events": 0}
        for h in self._handles.values():
            if not h.destroyed:
                counts[h.kind + "s"] += 1
        return counts

    @property
    def live_buffers(self) -> int:
        """Return the number of buffers allocated or imported and not yet freed."""
        return sum(1 for b in self._buffers.values() if not b.freed)

    @property
    def live_handles(self) -> int:
        """Return the number of loaded kernels, streams and events not yet destroyed."""
        return sum(1 for h in self._handles.values() if not h.destroyed)

    def launches(self) -> list[tuple]:
        """Return the ``log`` entries of launches, in order."""
        return [entry for entry in self.log if entry[0] == "launch"]

    def launch_streams(self) -> list[tuple[str, str | None]]:
        """Return ``(kernel name, stream label)`` per launch, in order (None: default)."""
        return [(entry[1], entry[5]) for entry in self.launches()]

    def _buffer(self, buffer: object, method: str) -> RecordedBuffer:
        if not isinstance(buffer, RecordedBuffer) or self._buffers.get(buffer.id) is not buffer:
            raise BackendError(f"{method}: {buffer!r} is not a buffer of backend '{self.name}'")
        if buffer.freed:
            raise BackendError(f"{method}: buf#{buffer.id} was already freed")
        return buffer

    def _handle(self, obj: object, kind: str, method: str) -> RecordedHandle:
        if not isinstance(obj, RecordedHandle) or obj.kind != kind or obj.destroyed:
            raise BackendError(f"{method}: expected a live {kind} of backend '{self.name}', "
                               f"got {obj!r}")
        return obj

    def _new_handle(self, kind: str, **payload: Any) -> RecordedHandle:
        handle = RecordedHandle(kind, next(self._ids), dict(payload))
        self._handles[handle.id] = handle
        return handle

    @staticmethod
    def _label(obj: object) -> str | None:
        if obj is None:
            return None
        if isinstance(obj, RecordedBuffer):
            return f"buf#{obj.id}"
        if isinstance(obj, RecordedHandle):
            return f"{obj.kind}#{obj.id}"
        return repr(obj)

    # ----------------------------------------------------------------------- description

    def capabilities(self) -> Capabilities:
        """Return fixed capabilities: every kernel dtype, most features, 1024 work-items."""
        self._record("capabilities")
        features = (self.FEATURES | ({"host_memory"} if self._host_memory else set())
                    | ({"streams"} if self._streams else set()))
        return Capabilities(
            backend=self.name, device_name="in-memory recorder",
            device_fingerprint=f"{self.name}:in-memory:v1", dtypes=self.DTYPES,
            artifact_formats=("recording",), max_workgroup_size=1024, subgroup_size=32,
            shared_memory_bytes=48 * 1024, features=frozenset(features),
            max_loop_iterations=self.max_loop_iterations,
        )

    def target_profile(self) -> TargetProfile:
        """Return the profile of :meth:`capabilities`."""
        return TargetProfile.from_capabilities(self.capabilities())

    # ----------------------------------------------------------------------- compile

    def compile(self, kernel: Any, options: Mapping[str, object] | None = None) -> Artifact:
        """Return a ``"recording"`` artifact carrying ``kernel`` in ``metadata["kernel"]``.

        The artifact is not serialisable (``metadata["cacheable"]`` is False).
        """
        name = getattr(kernel, "name", "kernel")
        self._record("compile", name, dict(options or {}))
        metadata = {
            "kernel": kernel,
            "cacheable": False,
            "workgroup_size": getattr(kernel, "workgroup_size", 0),
            "buffer_dtypes": [p.dtype for p in getattr(kernel, "buffers", ())],
            "scalar_dtypes": [p.dtype for p in getattr(kernel, "scalars", ())],
        }
        return Artifact(backend=self.name, kernel_name=name, format="recording", data=b"",
                        entry=name, metadata=metadata)

    def emit(self, kernel: Any, format: str) -> bytes:
        """Return the kernel's text form for ``format="recording"``.

        Raises:
            InputError: any other format.
        """
        self._record("emit", getattr(kernel, "name", "kernel"), format)
        if format != "recording":
            raise InputError(f"backend '{self.name}' emits format 'recording' only, "
                             f"got {format!r}")
        to_text = getattr(kernel, "to_text", None)
        return (to_text() if callable(to_text) else repr(kernel)).encode()

    def load(self, artifact: Artifact) -> object:
        """Return a loaded-kernel handle for a ``"recording"`` artifact.

        Raises:
            BackendError: the artifact comes from another backend or format.
        """
        self._maybe_fail("load")
        self._record("load", artifact.kernel_name)
        if artifact.format != "recording" or "kernel" not in artifact.metadata:
            raise BackendError(f"backend '{self.name}' cannot load a {artifact.format!r} "
                               f"artifact from backend '{artifact.backend}'")
        return self._new_handle("kernel", kernel=artifact.metadata["kernel"],
                                name=artifact.kernel_name)

    # ----------------------------------------------------------------------- buffers

    def allocate(self, nbytes: int) -> object:
        """Return a zero-filled buffer of ``nbytes`` bytes."""
        if nbytes < 0:
            raise InputError(f"allocate: nbytes must be >= 0, got {nbytes}")
        self._maybe_fail("allocate")
        buf = RecordedBuffer(next(self._ids), np.zeros(nbytes, np.uint8))
        self._buffers[buf.id] = buf
        self._record("allocate", nbytes, self._label(buf))
        return buf

    def write(self, buffer: object, data: np.ndarray) -> None:
        """Copy ``data``'s bytes into the start of ``buffer``."""
        buf = self._buffer(buffer, "write")
        self._maybe_fail("write")
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self._record("write", self._label(buf), raw.nbytes)
        if raw.nbytes > buf.nbytes:
            raise BackendError(f"write: {raw.nbytes} bytes do not fit buf#{buf.id} "
                               f"of {buf.nbytes} bytes")
        buf.data[: raw.nbytes] = raw

    def read(self, buffer: object, out: np.ndarray) -> np.ndarray:
        """Copy the start of ``buffer`` into contiguous ``out`` and return it."""
        buf = self._buffer(buffer, "read")
        raw = out.reshape(-1).view(np.uint8)
        self._record("read", self._label(buf), raw.nbytes)
        if raw.nbytes > buf.nbytes:
            raise BackendError(f"read: {raw.nbytes} bytes requested from buf#{buf.id} "
                               f"of {buf.nbytes} bytes")
        raw[:] = buf.data[: raw.nbytes]
        return out

    def fill(self, buffer: object, value: int) -> None:
        """Set every byte of ``buffer`` to ``value``."""
        buf = self._buffer(buffer, "fill")
        self._record("fill", self._label(buf), value)
        buf.data[:] = value

    def copy(self, src: object, dst: object, nbytes: int) -> None:
        """Copy ``nbytes`` bytes from the start of ``src`` to the start of ``dst``."""
        s, d = self._buffer(src, "copy"), self._buffer(dst, "copy")
        self._record("copy", self._label(s), self._label(d), nbytes)
        if nbytes > min(s.nbytes, d.nbytes):
            raise BackendError(f"copy: {nbytes} bytes exceed buf#{s.id} ({s.nbytes} bytes) "
                               f"or buf#{d.id} ({d.nbytes} bytes)")
        d.data[:nbytes] = s.data[:nbytes]

    def free(self, buffer: object) -> None:
        """Release ``buffer``; freeing it twice raises :class:`BackendError`."""
        buf = self._buffer(buffer, "free")
        self._record("free", self._label(buf))
        buf.freed = True

    def host_view(self, buffer: object, dtype: Any, shape: tuple[int, ...]) -> np.ndarray | None:
        """Return a numpy view of ``buffer`` (None unless created with ``host_memory``)."""
        buf = self._buffer(buffer, "host_view")
        self._record("host_view", self._label(buf), str(np.dtype(dtype)), tuple(shape))
        if not self._host_memory:
            return None
        count = int(np.prod(shape, dtype=np.int64))
        return buf.data[: count * np.dtype(dtype).itemsize].view(dtype).reshape(shape)

    def import_host(self, array: np.ndarray) -> object | None:
        """Wrap contiguous ``array`` as a buffer without copying (None unless ``host_memory``)."""
        self._maybe_fail("import_host")
        self._record("import_host", array.nbytes)
        if not self._host_memory or not array.flags.c_contiguous:
            return None
        buf = RecordedBuffer(next(self._ids), array.reshape(-1).view(np.uint8), imported=True)
        self._buffers[buf.id] = buf
        return buf

    # ----------------------------------------------------------------------- execution

    def launch(
        self,
        loaded: object,
        geometry: Geometry,
        buffers: Sequence[object],
        scalars: Sequence[tuple[str, int | float]],
        stream: object | None = None,
        wait_events: Sequence[object] = (),
        signal_event: object | None = None,
    ) -> None:
        """Record the launch and, when the interpreter is available, run the kernel.

        Raises:
            BackendError: a freed or foreign buffer, stream or event.
            LaunchError: a malformed scalar (not a ``(dtype, value)`` pair).
        """
        handle = self._handle(loaded, "kernel", "launch")
        bufs = [self._buffer(b, "launch") for b in buffers]
        for s in (stream,) if stream is not None else ():
            self._handle(s, "stream", "launch")
        for e in [*wait_events, *((signal_event,) if signal_event is not None else ())]:
            self._handle(e, "event", "launch")
        for pair in scalars:
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
                raise LaunchError(f"launch {handle.payload['name']!r}: scalars must be "
                                  f"(dtype name, value) pairs, got {pair!r}")
        self._maybe_fail("launch")
        self._record(
            "launch", handle.payload["name"], (geometry.groups, geometry.workgroup_size),
            tuple(self._label(b) for b in bufs), tuple(scalars), self._label(stream),
            tuple(self._label(e) for e in wait_events), self._label(signal_event),
        )
        if self._interpret:
            self._run(handle.payload["kernel"], geometry, bufs, scalars)

    def _run(self, kernel: Any, geometry: Geometry, bufs: list[RecordedBuffer],
             scalars: Sequence[tuple[str, int | float]]) -> None:
        try:
            from accy.kernel import interpret
        except ImportError:
            return
        params = getattr(kernel, "buffers", None)
        if params is None or len(params) != len(bufs):
            arrays = [b.data for b in bufs]
        else:
            arrays = [_typed(b.data, p.dtype) for b, p in zip(bufs, params, strict=True)]
        interpret(kernel, geometry, arrays, [value for _, value in scalars],
                  max_loop_iterations=self.max_loop_iterations)

    # ----------------------------------------------------------------------- streams, events

    def create_stream(self) -> object:
        """Return a new stream handle."""
        self._maybe_fail("create_stream")
        handle = self._new_handle("stream")
        self._record("create_stream", self._label(handle))
        return handle

    def create_event(self) -> object:
        """Return a new event handle."""
        self._maybe_fail("create_event")
        handle = self._new_handle("event")
        self._record("create_event", self._label(handle))
        return handle

    def synchronize(self, scope: object | None = None) -> None:
        """Record a synchronization (work already ran synchronously)."""
        self._record("synchronize", self._label(scope))

    def destroy(self, obj: object) -> None:
        """Release a loaded kernel, stream or event; destroying twice raises BackendError."""
        if not isinstance(obj, RecordedHandle) or obj.destroyed:
            raise BackendError(f"destroy: {obj!r} is not a live handle of backend '{self.name}'")
        self._record("destroy", self._label(obj))
        obj.destroyed = True


def _typed(data: np.ndarray, dtype: str) -> np.ndarray:
    """View ``uint8`` ``data`` as kernel dtype ``dtype`` (trailing partial element dropped)."""
    np_dtype = np.dtype(_NUMPY_DTYPES.get(dtype, np.uint8))
    usable = data.nbytes - data.nbytes % np_dtype.itemsize
    return data[:usable].view(np_dtype)
