"""Device resources of an executable: loaded kernels, constants, workspaces; their release.

:class:`Resources` is what an :class:`~accy.runtime.Executable` owns on its backend, kept
apart from the executable so that ``weakref.finalize`` can release it without keeping the
executable alive:

- loaded kernels (destroyed by :meth:`Resources.release` when the executable owns them:
  kernels a kernel-library family shares across calls are not its to destroy) and a
  loader to load them all again after a release;
- constant buffers (uploaded once, read-only, shared by every invocation);
- a pool of :class:`Workspace` s: the temporaries, loop double-buffers, streams and events
  of one invocation. An invocation takes one and gives it back, so repeated calls reuse
  the same buffers; two invocations in flight hold two.

Release never stops half-way: every object is released, then the first error is raised.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["MIN_BUFFER_BYTES", "Resources", "Workspace", "release_all"]

# an empty tensor still gets a buffer; 8 bytes is a whole number of elements of every dtype
MIN_BUFFER_BYTES = 8

#: workspaces kept for reuse once given back; more are released
POOL_LIMIT = 2


def release_all(backend: Any, buffers: list[object] = (), handles: list[object] = ()
                ) -> Exception | None:
    """Free ``buffers`` and destroy ``handles`` (kernels, streams, events) on ``backend``,
    all of them even when some fail; return the first error (or None)."""
    first: Exception | None = None
    for method, objs in ((backend.free, buffers), (backend.destroy, handles)):
        for obj in objs:
            try:
                method(obj)
            except Exception as e:  # noqa: BLE001 - keep releasing, report the first
                first = first or e
    return first


class Workspace:
    """The per-invocation device state: temporaries, loop spares, streams and events.

    Attributes:
        temps: slot → buffer of temporaries (and a carried slot's first buffer).
        spares: slot → second buffer of a carried loop result slot.
        streams: streams of the invocation's stream plan (empty on single-stream backends).
        events: node index → event the node signals.
    """

    def __init__(self) -> None:
        self.temps: dict[int, object] = {}
        self.spares: dict[int, object] = {}
        self.streams: list[object] = []
        self.events: dict[int, object] = {}

    def release(self, backend: Any) -> Exception | None:
        """Release every buffer, stream and event; return the first error (or None)."""
        err = release_all(backend, [*self.temps.values(), *self.spares.values()],
                          [*self.events.values(), *self.streams])
        self.temps.clear()
        self.spares.clear()
        self.streams.clear()
        self.events.clear()
        return err


class Resources:
    """An executable's kernels, constants and workspace pool (see the module docstring)."""

    def __init__(self, backend: Any, loaded: dict[str, object], owns_kernels: bool,
                 loader: Callable[[], dict[str, object]] | None) -> None:
        self.backend = backend
        self.loaded = dict(loaded)
        self.owns_kernels = owns_kernels
        self.loader = loader
        self.constants: dict[int, object] = {}
        self.pool: list[Workspace] = []
        self.default = Workspace()  # device-array runs (serialized by the executable's lock)
        self.invocations: weakref.WeakSet = weakref.WeakSet()
        self.lock = threading.RLock()

    def take(self) -> Workspace:
        """Return a workspace from the pool, or a new empty one."""
        with self.lock:
            return self.pool.pop() if self.pool else Workspace()

    def give_back(self, ws: Workspace) -> None:
        """Keep ``ws`` for the next invocation, or release it when the pool is full.

        Raises:
            BackendError: releasing it failed.
        """
        with self.lock:
            if len(self.pool) < POOL_LIMIT:
                self.pool.append(ws)
                return
        err = ws.release(self.backend)
        if err is not None:
            raise err

    def kernel(self, name: str) -> object:
        """Return the loaded kernel ``name``; after :meth:`release` the loader loads all
        of them again (one program, one engine on the CPU).

        Raises:
            InputError: they were released and there is no loader.
        """
        obj = self.loaded.get(name)
        if obj is None:
            with self.lock:
                obj = self.loaded.get(name)
                if obj is None:
                    if self.loader is None or not self.owns_kernels:
                        from accy.errors import InputError

                        raise InputError(f"kernel {name!r} is not loaded (released by close()"
                                         "); compile the program again")
                    self.loaded.update(self.loader())
                    obj = self.loaded[name]
        return obj

    def release(self) -> None:
        """Release everything: workspaces, constants and (when owned) the loaded kernels.

        Live invocations are closed first. Safe to call twice.

        Raises:
            BackendError: some release failed (every other object is still released).
        """
        first: Exception | None = None
        for inv in list(self.invocations):
            try:
                inv.close()
            except Exception as e:  # noqa: BLE001 - keep releasing, report the first
                first = first or e
        with self.lock:
            spaces, self.pool = [*self.pool, self.default], []
            self.default = Workspace()
            consts = list(self.constants.values())
            self.constants.clear()
            # a program's kernels may share one loaded object: destroy each once
            kernels = list({id(k): k for k in self.loaded.values()}.values()
                           ) if self.owns_kernels else []
            if self.owns_kernels:
                self.loaded.clear()
        for ws in spaces:
            first = first or ws.release(self.backend)
        first = first or release_all(self.backend, consts, kernels)
        if first is not None:
            raise first

    def finalize(self) -> None:
        """:meth:`release` for garbage collection: errors are dropped (nothing to tell)."""
        try:
            self.release()
        except Exception:  # noqa: BLE001, S110 - a collected executable has no caller
            pass
