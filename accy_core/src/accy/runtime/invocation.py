"""A prepared invocation of an executable: bind and upload once, submit many times.

``inv = exe.prepare(*inputs)`` checks and binds the inputs (zero-copy on host-memory
backends, else one upload each) and the result buffers, and takes a workspace
(temporaries, loop buffers, streams, events) from the executable's pool.
``h = inv.submit()`` enqueues the launch graph and returns a :class:`Submission` without
waiting for the device (index checks of computed indices and ``loop.while`` conditions
still read back, and the CPU backend runs its launches before returning);
``h.wait()`` / ``inv.read()`` wait for it and return the outputs, the tuple ``exe(*inputs)``
returns. ``inv.update(i, array)`` replaces input ``i``; :meth:`Invocation.close` (or the
end of a ``with`` block, or garbage collection) frees its buffers and returns the
workspace. Each invocation has its own buffers, so two of one executable can be in flight.

On backends listing ``"streams"`` in their features the launches go to the invocation's
streams by the executable's :class:`~accy.runtime.streams.StreamPlan`: independent nodes
of the launch graph on different streams, cross-stream dependencies through events.
Elsewhere everything goes to the backend's default stream.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.errors import InputError
from accy.runtime.resources import MIN_BUFFER_BYTES, Workspace, release_all
from accy.runtime.sequence import geometry, launch_node, run_loop

__all__ = ["Invocation", "Submission"]


def as_bytes(arr: np.ndarray) -> np.ndarray:
    """Return contiguous ``arr``'s memory as a flat ``uint8`` array (a view when possible)."""
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


class _State:
    """What the invocation's finalizer releases: its buffers and its workspace."""

    def __init__(self, exe: Any) -> None:
        self.backend = exe.backend
        self.resources = exe._res
        self.buffers: list[object] = []  # parameter and output buffers, owned
        self.workspace = exe._res.take()
        self.pending = False  # submitted and not yet waited for
        self.closed = False

    def release(self, wait: bool = True) -> None:
        if self.closed:
            return
        self.closed = True
        first: Exception | None = None
        if self.pending and wait:
            try:  # in-flight work still uses the buffers
                _synchronize(self.backend, self.workspace)
            except Exception as e:  # noqa: BLE001 - release anyway, report it
                first = e
        self.pending = False
        first = first or release_all(self.backend, self.buffers)
        self.buffers.clear()
        try:
            self.resources.give_back(self.workspace)
        except Exception as e:  # noqa: BLE001
            first = first or e
        if first is not None:
            raise first

    def finalize(self) -> None:
        try:
            self.release()
        except Exception:  # noqa: BLE001, S110 - a collected invocation has no caller
            pass


def _synchronize(backend: Any, ws: Any) -> None:
    if ws.streams:
        for s in ws.streams:
            backend.synchronize(s)
    else:
        backend.synchronize()


class Submission:
    """One submitted run of an :class:`Invocation`; :meth:`wait` completes it."""

    def __init__(self, inv: Invocation, number: int) -> None:
        self._inv = inv
        self._number = number

    @property
    def done(self) -> bool:
        """Whether :meth:`wait` (or a read of the invocation) already completed it."""
        return not self._inv._state.pending or self._inv._submits != self._number

    def wait(self) -> tuple[np.ndarray, ...]:
        """Wait for the device and return the outputs (as :meth:`Invocation.read`).

        Raises:
            InputError: a later ``submit()`` of the invocation replaced these outputs, or
                the invocation was closed.
            BackendError: the device failed.
        """
        if self._inv._submits != self._number:
            raise InputError(f"{self._inv.exe.graph.name}: a later submit() of this "
                             "invocation replaced this submission's outputs")
        return self._inv.read()


class Invocation:
    """Bound inputs and outputs of one executable, submitted any number of times.

    Made by :meth:`Executable.prepare`; see the module docstring. Inputs on a host-memory
    backend (CPU) are bound zero-copy: ``submit()`` reads the arrays given to ``prepare``
    or ``update`` as they are then, so do not modify them while a submission is in flight.
    Not thread-safe: use one invocation from one thread at a time.
    """

    def __init__(self, exe: Any, arrays: list[np.ndarray], *, internal: bool = False) -> None:
        self.exe = exe
        self.backend = exe.backend
        self._state = _State(exe)
        # ``internal``: a call's own invocation, closed by the call (no finalizer to pay for)
        self._finalizer = None if internal else weakref.finalize(self, self._state.finalize)
        if self._finalizer is not None:
            self._finalizer.atexit = False  # backends may be closed by then
        self._arrays = list(arrays)
        self._buffers: dict[int, object] = {}
        self._zero_copy: set[int] = set()
        self._outputs: dict[int, np.ndarray] = {}
        self._submits = 0
        self._result: tuple[np.ndarray, ...] | None = None
        try:
            g = exe.graph
            for slot, arr in zip(g.param_slots, arrays, strict=True):
                self._bind(slot, arr, write=True)
            self._bind_outputs()
        except BaseException:
            self._state.release(wait=False)
            raise
        if not internal:
            exe._res.invocations.add(self)

    # ------------------------------------------------------------------------ binding

    def _bind(self, slot: int, arr: np.ndarray, write: bool) -> None:
        be, st = self.backend, self._state
        if self.exe._host:
            buf = be.import_host(arr)
            if buf is not None:
                st.buffers.append(buf)
                self._buffers[slot] = buf
                self._zero_copy.add(slot)
                return
        buf = be.allocate(max(arr.nbytes, MIN_BUFFER_BYTES))
        st.buffers.append(buf)
        self._buffers[slot] = buf
        self._zero_copy.discard(slot)
        if write and arr.nbytes:
            be.write(buf, as_bytes(arr))

    def _unbind(self, slot: int) -> None:
        buf = self._buffers.pop(slot)
        owned = self._state.buffers
        del owned[next(i for i, b in enumerate(owned) if b is buf)]  # numpy buffers: no ==
        self.backend.free(buf)

    def _bind_outputs(self) -> None:
        g, exe = self.exe.graph, self.exe
        new = np.zeros if g.zero_results else np.empty
        for slot, t in zip(g.result_slots, g.result_types, strict=True):
            if (slot in exe._written or g.zero_results) and slot not in self._outputs:
                self._outputs[slot] = new(t.shape, dtype=t.dtype.numpy)
                self._bind(slot, self._outputs[slot], write=g.zero_results)

    def _fresh_outputs(self) -> None:
        """Before a repeated submit: zero accumulating outputs; on host memory, give the
        outputs handed out by ``read()`` new arrays (the caller keeps the old ones)."""
        g, handed = self.exe.graph, self._result is not None
        for slot, arr in list(self._outputs.items()):
            if handed and slot in self._zero_copy:
                self._unbind(slot)
                del self._outputs[slot]
            elif g.zero_results and slot in self._zero_copy:
                arr.fill(0)
            elif g.zero_results:
                self.backend.fill(self._buffers[slot], 0)
        self._bind_outputs()  # new arrays for those handed out, zeroed when they must be

    def _check_open(self) -> None:
        if self._state.closed:
            raise InputError(f"{self.exe.graph.name}: this invocation was closed")

    # ------------------------------------------------------------------------ public API

    def update(self, index: int, array: Any) -> None:
        """Replace input ``index`` with ``array`` (same shape and dtype) for later submits.

        Waits for an in-flight submission first. On host-memory backends ``array`` is bound
        zero-copy; elsewhere it is uploaded into the existing buffer.

        Raises:
            InputError: bad index, dtype or shape (as for the executable's call), or the
                invocation was closed.
        """
        self._check_open()
        n = len(self.exe.param_types)
        if not isinstance(index, int) or not 0 <= index < n:
            raise InputError(f"{self.exe.graph.name}: update index must be 0..{n - 1}, "
                             f"got {index!r}")
        arr = self.exe._check_input(index, array)
        self._complete()
        slot = self.exe.graph.param_slots[index]
        with self.exe._lock:
            if slot in self._zero_copy:
                self._unbind(slot)
                self._bind(slot, arr, write=True)
            elif arr.nbytes:
                self.backend.write(self._buffers[slot], as_bytes(arr))
        self._arrays[index] = arr

    def submit(self) -> Submission:
        """Enqueue the launch graph on the bound buffers; return without waiting.

        A second submit of the same invocation first waits for the previous one.

        Raises:
            InputError: the invocation was closed.
            IndexOutOfRangeError: an index check failed (nothing launched from that op on).
            BackendError: the backend failed a launch.
        """
        self._check_open()
        self._complete()
        with self.exe._lock:
            self._submit()
        return Submission(self, self._submits)

    def _submit(self) -> None:
        """Enqueue (the caller holds the executable's lock and checked the state)."""
        if self._submits:
            self._fresh_outputs()
        self._submits += 1
        self._result = None
        self._state.pending = True
        try:
            _Run(self).run()
        except BaseException:
            self._complete()
            self._drop_workspace()  # it may be half-built: do not pool it
            raise

    def read(self) -> tuple[np.ndarray, ...]:
        """Wait for the last submission and return the outputs (the ``exe(*inputs)`` tuple).

        Reading twice returns the same arrays.

        Raises:
            InputError: nothing was submitted yet, or the invocation was closed.
            BackendError: the device failed.
        """
        self._check_open()
        if not self._submits:
            raise InputError(f"{self.exe.graph.name}: read() before submit()")
        if self._result is None:
            self._complete()
            be = self.backend
            outputs = {}
            with self.exe._lock:
                for slot, arr in self._outputs.items():
                    if slot not in self._zero_copy:
                        arr = np.empty_like(arr)
                        if arr.nbytes:
                            be.read(self._buffers[slot], as_bytes(arr))
                    outputs[slot] = arr
            self._result = self.exe._collect(self._arrays, outputs)
        return self._result

    def close(self) -> None:
        """Wait for an in-flight submission, free the buffers, return the workspace.

        Idempotent. Raises BackendError if a release failed (all others still happen).
        Under the executable's lock: a submit of this invocation in another thread finishes
        before its buffers are freed.
        """
        if self._finalizer is not None:
            self._finalizer.detach()
        with self.exe._lock:
            self._state.release()

    def __enter__(self) -> Invocation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop_workspace(self) -> None:
        st = self._state
        ws, st.workspace = st.workspace, Workspace()
        err = ws.release(self.backend)
        if err is not None:
            raise err

    def _complete(self) -> None:
        st = self._state
        if st.pending:
            st.pending = False
            _synchronize(self.backend, st.workspace)


class _Run:
    """One submission's run context (the protocol of :mod:`accy.runtime.sequence`)."""

    def __init__(self, inv: Invocation) -> None:
        self.inv = inv
        self.exe = inv.exe
        self.backend = inv.backend
        self.ws = inv._state.workspace
        self.plan = self.exe._stream_plan()
        self.buffers = dict(inv._buffers)
        self._stream: object | None = None
        self._waits: list[object] = []
        self._signal: object | None = None
        self._held: tuple | None = None
        if self.plan is not None:
            be = self.backend
            while len(self.ws.streams) < self.plan.count:
                self.ws.streams.append(be.create_stream())
            for j, signals in enumerate(self.plan.signals):
                if signals and j not in self.ws.events:
                    self.ws.events[j] = be.create_event()

    # sequence protocol ----------------------------------------------------------------
    def buffer(self, slot: int, buffers: dict[int, object]) -> object:
        buf = buffers.get(slot)
        if buf is None:
            buf = self.exe._constant(slot)
            buf = buffers[slot] = self.own(slot) if buf is None else buf
        return buf

    def own(self, slot: int) -> object:
        buf = self.ws.temps.get(slot)
        if buf is None:
            buf = self.ws.temps[slot] = self.exe._new_temporary(slot)
        return buf

    def spare(self, slot: int) -> object:
        buf = self.ws.spares.get(slot)
        if buf is None:
            buf = self.ws.spares[slot] = self.exe._new_temporary(slot)
        return buf

    def native_loop(self, node: Any) -> Any:
        return self.exe.native_loop(node) if self.plan is None else None

    def launch(self, ln: Any, bound: list[object]) -> None:
        kernel = self.exe._res.kernel(ln.kernel)
        if self.plan is None:
            self.backend.launch(kernel, geometry(ln), bound, list(ln.scalars))
            return
        self._issue()  # the previous launch of this node: not its last, signals nothing
        self._held = (kernel, geometry(ln), bound, list(ln.scalars), self._stream,
                      tuple(self._waits))
        self._waits = []

    def sync(self) -> None:
        self._issue()
        self.backend.synchronize()

    # nodes -------------------------------------------------------------------------------
    def _issue(self, signal: object | None = None) -> None:
        if self._held is not None:
            kernel, geom, bound, scalars, stream, waits = self._held
            self._held = None
            self.backend.launch(kernel, geom, bound, scalars, stream=stream,
                                wait_events=waits, signal_event=signal)

    def _begin(self, j: int) -> None:
        if self.plan is None:
            return
        s = self.plan.stream_of[j]
        self._stream = self.ws.streams[s] if s >= 0 else None
        self._waits = [self.ws.events[p] for p in self.plan.waits[j]]
        self._signal = self.ws.events.get(j) if self.plan.signals[j] else None

    def _end(self) -> None:
        if self.plan is None:
            return
        if self._held is not None:
            self._issue(self._signal)
        elif self._signal is not None and self._waits:
            self.backend.synchronize()  # launched nothing: its waiters must still wait
        self._waits, self._signal = [], None

    def run(self) -> None:
        exe, g = self.exe, self.exe.graph
        if self.plan is None and not g.loops and not g.checks:
            self._run_plain()
            return
        params = dict(zip(g.param_slots, self.inv._arrays, strict=True))
        li = 0
        for j, node in enumerate(exe._nodes):
            if hasattr(node, "body"):
                self._begin(j)
                run_loop(self, node, self.buffers)
            else:
                if g.checks:
                    exe._check_indices(li, params, self.buffers, self)
                self._begin(j)
                launch_node(self, node, self.buffers)
                li += 1
            self._end()
        if g.checks:
            exe._check_indices(li, params, self.buffers, self)


    def _run_plain(self) -> None:
        """Launches only, on the default stream: the common case, kept lean."""
        exe, buffers = self.exe, self.buffers
        loaded, launch = exe._res.loaded, self.backend.launch
        for ln, geom in zip(exe.graph.launches, exe._geometries, strict=True):
            if geom is None:
                continue
            kernel = loaded.get(ln.kernel)
            if kernel is None:
                kernel = exe._res.kernel(ln.kernel)
            bound = [buffers[s] if s in buffers else self.buffer(s, buffers) for s in ln.slots]
            launch(kernel, geom, bound, list(ln.scalars))


def check_arrays(exe: Any, args: Sequence[Any]) -> list[np.ndarray]:
    """Check call inputs against ``exe``'s parameter types (see :meth:`Executable.prepare`)."""
    name = exe.graph.name
    if len(args) != len(exe.param_types):
        raise InputError(f"{name}: expected {len(exe.param_types)} inputs, got {len(args)}")
    return [exe._check_input(i, a) for i, a in enumerate(args)]
