"""Buffers, streams (command queues) and events of the OpenCL backend; driver errors.

A mixin of :class:`~accy_backend_opencl.backend.OpenCLBackend`: it expects ``self._cl``
(the ``pyopencl`` module), ``self._context``, ``self._queue`` (the default stream),
``self._streams``, ``self._lock`` and ``self.info``.

- Buffers are ``cl.Buffer`` objects of at least 16 bytes (OpenCL refuses size 0); the
  protocol size is kept beside them. ``write``/``read``/``fill``/``copy`` (and launches with
  ``stream=None``) run on the default queue.
- Streams are in-order command queues (the protocol's stream is in-order; an out-of-order
  queue would need a chain of events per stream for the same meaning). Events hold the
  ``cl.Event`` of the launch that signalled them.
- Ordering between the default queue and the streams (what the ``streams`` feature asks):
  a command on the default queue first *joins* every stream with work queued since the last
  join (a marker on that stream, in the command's wait list), so a transfer never overtakes
  a launch on another queue; ``write`` and ``read`` are blocking, so they are complete when
  they return. A non-blocking command on the default queue (``fill``, ``copy``, a default
  launch) leaves its event as the *transfer event*, which every later launch on a stream
  waits for (until a blocking transfer or a synchronize shows the default queue drained).
  Each stream counts its launches (``OpenCLStream.launches``), so tests can see where a
  program's launches went.
- :func:`cl_error` maps driver status codes to accy errors: allocation failures and
  ``CL_OUT_OF_RESOURCES`` → :class:`~accy.errors.OutOfResources`, invalid launches →
  :class:`~accy.errors.LaunchError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from accy.errors import BackendError, LaunchError, OutOfResources

__all__ = ["OpenCLBuffer", "OpenCLEvent", "OpenCLStream", "QueueOps", "cl_error"]

_MIN_BYTES = 16
_OUT_OF_RESOURCES = {-4: "device_memory", -5: "device_resources", -6: "host_memory"}
_INVALID_LAUNCH = {-48, -52, -53, -54, -55, -56, -63}  # kernel, args, sizes, offset, wg


@dataclass(eq=False)
class OpenCLBuffer:
    """A device buffer: the ``cl.Buffer`` (``None`` once freed) and its size in bytes."""

    mem: Any
    nbytes: int


@dataclass(eq=False)
class OpenCLStream:
    """An in-order command queue."""

    queue: Any
    pending: bool = False  # launches queued since the default queue last joined it
    launches: int = 0  # launches enqueued on it (diagnostics, tests)


@dataclass(eq=False)
class OpenCLEvent:
    """The event of the last launch that signalled it (``None``: never signalled)."""

    event: Any = None


def cl_error(cl: Any, what: str, e: Exception) -> Exception:
    """Return the accy error for ``pyopencl`` error ``e`` raised by ``what``."""
    code = getattr(e, "code", 0)
    code = code if isinstance(code, int) else 0
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if code in _OUT_OF_RESOURCES:
        return OutOfResources(f"opencl {what}: {text}", resource=_OUT_OF_RESOURCES[code])
    if code in _INVALID_LAUNCH:
        return LaunchError(f"opencl {what}: invalid launch: {text}")
    return BackendError(f"opencl {what}: {text}")


class QueueOps:
    """Buffers, streams and events (see the module docstring)."""

    _cl: Any
    _context: Any
    _queue: Any
    _streams: list[OpenCLStream]
    _lock: Any
    info: Any

    @contextmanager
    def _guard(self, what: str) -> Iterator[Any]:
        cl = self._device_module()
        with self._lock:
            try:
                yield cl
            except cl.Error as e:
                raise cl_error(cl, what, e) from e

    _live: dict[str, set[int]]

    def live_objects(self) -> dict[str, int]:
        """Return counts of live kernels, buffers, streams and events (leak checks)."""
        return {kind: len(ids) for kind, ids in self._live.items()}

    def _device_module(self) -> Any:
        raise NotImplementedError

    def _mem(self, buffer: Any, what: str) -> Any:
        if not isinstance(buffer, OpenCLBuffer):
            raise LaunchError(f"opencl {what}: expected an opencl buffer, got "
                              f"{type(buffer).__name__}")
        if buffer.mem is None:
            raise LaunchError(f"opencl {what}: the buffer was freed")
        return buffer.mem

    _transfer: Any  # event of the last non-blocking default-queue command, or None

    def _join_streams(self) -> list[Any]:
        """Markers of the streams with work since the last join (the wait list of a
        default-queue command, which then runs after all of it)."""
        cl, marks = self._cl, []
        for s in self._streams:
            if s.pending:
                marks.append(cl.enqueue_marker(s.queue))
                s.pending = False
        return marks

    def _wait_other_streams(self) -> None:
        for s in self._streams:
            if s.pending:
                s.queue.finish()
                s.pending = False

    # buffers ---------------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> OpenCLBuffer:
        """Return a device buffer of ``nbytes`` bytes (contents undefined).

        Raises:
            OutOfResources: larger than the device's largest allocation, or the driver
                could not allocate it.
        """
        limit = self.info.max_allocation_bytes if self.info is not None else 0
        if limit and nbytes > limit:
            raise OutOfResources(
                f"opencl allocate: {nbytes} bytes exceed the device's largest allocation "
                f"({limit} bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                resource="device_memory", required=nbytes, limit=limit,
            )
        with self._guard("allocate") as cl:
            mem = cl.Buffer(self._context, cl.mem_flags.READ_WRITE, max(int(nbytes), _MIN_BYTES))
        buf = OpenCLBuffer(mem, int(nbytes))
        self._live["buffers"].add(id(buf))
        return buf

    def write(self, buffer: OpenCLBuffer, data: np.ndarray) -> None:
        """Copy contiguous host ``data`` into the start of ``buffer`` (blocking)."""
        mem = self._mem(buffer, "write")
        self._check_size(buffer, data.nbytes, "write")
        if data.nbytes == 0:
            return
        with self._guard("write") as cl:
            mem = self._mem(buffer, "write")  # again under the lock (see free)
            cl.enqueue_copy(self._queue, mem, np.ascontiguousarray(data), is_blocking=True,
                            wait_for=self._join_streams() or None)
            self._transfer = None  # in order: everything before it on the queue is done

    def read(self, buffer: OpenCLBuffer, out: np.ndarray) -> np.ndarray:
        """Copy the start of ``buffer`` into contiguous host ``out`` (after all work)."""
        mem = self._mem(buffer, "read")
        self._check_size(buffer, out.nbytes, "read")
        if out.nbytes == 0:
            return out
        with self._guard("read") as cl:
            mem = self._mem(buffer, "read")
            target = out if out.flags.c_contiguous else np.empty_like(out, order="C")
            cl.enqueue_copy(self._queue, target, mem, is_blocking=True,
                            wait_for=self._join_streams() or None)
            self._transfer = None
        if target is not out:
            out[...] = target
        return out

    def fill(self, buffer: OpenCLBuffer, value: int) -> None:
        """Set every byte of ``buffer`` to ``value``."""
        mem = self._mem(buffer, "fill")
        if buffer.nbytes == 0:
            return
        with self._guard("fill") as cl:
            mem = self._mem(buffer, "fill")
            self._transfer = cl.enqueue_fill_buffer(self._queue, mem, np.uint8(value & 0xFF), 0,
                                                    buffer.nbytes,
                                                    wait_for=self._join_streams() or None)

    def copy(self, src: OpenCLBuffer, dst: OpenCLBuffer, nbytes: int) -> None:
        """Copy the first ``nbytes`` bytes of ``src`` to the start of ``dst``."""
        s, d = self._mem(src, "copy"), self._mem(dst, "copy")
        if nbytes > min(src.nbytes, dst.nbytes):
            raise LaunchError(f"opencl copy: {nbytes} bytes exceed a buffer "
                              f"({src.nbytes} -> {dst.nbytes} bytes)")
        if nbytes <= 0:
            return
        with self._guard("copy") as cl:
            s, d = self._mem(src, "copy"), self._mem(dst, "copy")
            self._transfer = cl.enqueue_copy(self._queue, d, s, byte_count=int(nbytes),
                                             wait_for=self._join_streams() or None)

    def free(self, buffer: OpenCLBuffer) -> None:
        """Release ``buffer`` (after the work queued so far; freeing twice is harmless)."""
        if isinstance(buffer, OpenCLBuffer) and buffer.mem is not None:
            # under the lock: every command reads a buffer's memory object under it too, so
            # none is enqueued with a released one (PoCL aborts the process on that)
            with self._guard("free"):
                mem, buffer.mem = buffer.mem, None
                if mem is None:  # freed by another thread meanwhile
                    return
                self._live["buffers"].discard(id(buffer))
                mem.release()

    @staticmethod
    def _check_size(buffer: OpenCLBuffer, nbytes: int, what: str) -> None:
        if nbytes > buffer.nbytes:
            raise LaunchError(f"opencl {what}: {nbytes} bytes do not fit the buffer's "
                              f"{buffer.nbytes}")

    def host_view(self, buffer: Any, dtype: Any, shape: tuple[int, ...]) -> None:
        """No zero-copy host views (the ``host_memory`` feature is not offered)."""
        return None

    def import_host(self, array: np.ndarray) -> None:
        """Host arrays are copied, never imported."""
        return None

    # streams and events -----------------------------------------------------------------------
    def create_stream(self) -> OpenCLStream:
        """Return a new in-order stream (its own command queue)."""
        with self._guard("create_stream") as cl:
            stream = OpenCLStream(cl.CommandQueue(self._context, self._device))
        self._streams.append(stream)
        self._live["streams"].add(id(stream))
        return stream

    def create_event(self) -> OpenCLEvent:
        """Return a new event a launch can signal or wait for."""
        self._device_module()
        event = OpenCLEvent()
        self._live["events"].add(id(event))
        return event

    def _queue_of(self, stream: Any, waits: list[Any]) -> Any:
        """The queue of a launch on ``stream``; adds what it must wait for to ``waits``
        (the streams' markers on the default queue, the transfer event on a stream)."""
        if stream is None:
            waits.extend(self._join_streams())
            return self._queue
        if not isinstance(stream, OpenCLStream) or stream not in self._streams:
            raise LaunchError(f"opencl: not a live stream of this backend: {stream!r}")
        if self._transfer is not None:
            waits.append(self._transfer)
        stream.pending = True
        stream.launches += 1
        return stream.queue

    def _after_launch(self, stream: Any, done: Any) -> None:
        if stream is None:
            self._transfer = done

    def synchronize(self, scope: Any = None) -> None:
        """Wait for all work (``None``), for a stream or for an event."""
        with self._guard("synchronize"):
            if isinstance(scope, OpenCLEvent):
                if scope.event is not None:
                    scope.event.wait()
                return
            if isinstance(scope, OpenCLStream):
                scope.queue.finish()
                scope.pending = False
                return
            self._queue.finish()
            self._wait_other_streams()
            self._transfer = None

    def _destroy_stream(self, stream: OpenCLStream) -> None:
        if stream in self._streams:
            with self._guard("destroy"):
                stream.queue.finish()
            self._streams.remove(stream)
        self._live["streams"].discard(id(stream))
