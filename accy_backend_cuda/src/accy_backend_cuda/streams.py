"""Streams and events of :class:`~accy_backend_cuda.backend.CudaBackend`, and their ordering
against transfers (a mixin: it expects ``self._stream``, the copy stream, ``self._guard``
and ``self._counts``).

Streams: transfers (``write``/``read``/``fill``/``copy``) and default-stream launches run on
the backend's own stream (the *copy stream*). Launches on other streams are ordered after
the transfers through an internal event recorded on the copy stream after each transfer
(``cuStreamWaitEvent`` before a stream's next launch, once per transfer); a copy-stream
command first *joins* every stream with launches since the last join (an internal event
recorded on that stream, waited for on the copy stream), so ``read`` sees every launch and a
``fill``/``copy`` never overtakes a launch still reading or writing its buffer. Hence the
``streams`` feature: executables spread independent launches over streams.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StreamOrdering"]


class StreamOrdering:
    """Streams, events, synchronize and the transfer/stream ordering (module docstring)."""

    _stream: Any
    _counts: dict[str, set[int]]

    def _guard(self, what: str) -> Any:
        raise NotImplementedError

    def _reset_ordering(self) -> None:
        """Forget the stream-ordering state (a new context: its events are gone)."""
        self._pending: dict[int, object] = {}  # id → stream with launches since the last join
        self._tails: dict[int, object] = {}  # id(stream) → internal event for joins
        self._copy_event: object | None = None  # recorded on the copy stream after transfers
        self._copy_seq = 0  # transfers so far
        self._seen: dict[int, int] = {}  # id(stream) → transfers it already waited for

    def _join(self, d: Any) -> None:
        """Order the copy stream after every launch on the other streams so far."""
        for key, stream in self._pending.items():
            tail = self._tails.get(key)
            if tail is None:
                tail = self._tails[key] = d.create_event()
            d.record_event(tail, stream)
            d.wait_event(self._stream, tail)
        self._pending.clear()

    def _transferred(self, d: Any) -> None:
        """Note a transfer on the copy stream: later launches on streams wait for it."""
        if self._copy_event is None:
            self._copy_event = d.create_event()
        d.record_event(self._copy_event, self._stream)
        self._copy_seq += 1

    def _order_launch(self, d: Any, stream: Any) -> None:
        """Before a launch on ``stream``: the copy stream joins the others; another stream
        waits for the transfers since its last launch."""
        if stream is None or stream is self._stream:
            self._join(d)
        elif self._seen.get(id(stream), 0) < self._copy_seq:
            d.wait_event(stream, self._copy_event)  # after the transfers so far
            self._seen[id(stream)] = self._copy_seq

    def _forget_stream(self, d: Any, stream: Any) -> None:
        """Drop ``stream``'s ordering state and its internal event (it is being destroyed)."""
        self._pending.pop(id(stream), None)
        self._seen.pop(id(stream), None)
        tail = self._tails.pop(id(stream), None)
        if tail is not None:
            d.destroy_event(tail)

    def create_stream(self) -> object:
        """Return a new non-blocking stream."""
        with self._guard("create_stream") as d:
            stream = d.create_stream()
        self._counts["streams"].add(id(stream))
        return stream

    def create_event(self) -> object:
        """Return a new event."""
        with self._guard("create_event") as d:
            event = d.create_event()
        self._counts["events"].add(id(event))
        return event

    def synchronize(self, scope: Any = None) -> None:
        """Wait for all work (``None``), or for a stream or event from this backend."""
        with self._guard("synchronize") as d:
            if scope is None:
                d.synchronize()
                self._pending.clear()
            elif d.is_event(scope):
                d.event_synchronize(scope)
            else:
                d.stream_synchronize(scope)
