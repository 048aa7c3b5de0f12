"""Run a family variant's kernels on a backend as one :class:`accy.runtime.LaunchGraph`.

A variant describes one call as a :class:`Plan`: host inputs (parameters), temporaries and
outputs (buffer slots, sizes in elements), and an ordered list of launches, each binding
slots in the fixed launch order (outputs, inputs) with ``(dtype, value)`` scalars. Outputs
start zeroed on every backend; temporaries are uninitialised (write before reading). ``run``
compiles every kernel once per backend (memory and disk artifact caches of
:func:`accy.runtime.compiler.compile_kernel`), keeps the loaded kernels per process, and
executes the graph through :class:`accy.runtime.Executable`, which binds host arrays
zero-copy on backends with host memory.

Tile kernels (one work-item walks a contiguous tile, e.g. radix-sort histograms) are few
work-items; :func:`tile_geometry` spreads them over enough work-items that a CPU backend's
thread pool runs them in parallel (idle lanes return at once).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator
from dataclasses import field
from typing import Any

import numpy as np

from accy.records import record

__all__ = ["MAX_WORK_ITEMS", "SPLIT_ITEMS", "CapturedRun", "Plan", "Slot", "backend_object",
           "capture_plans", "check_launch", "host_like", "split_items", "split_lanes",
           "tile_geometry"]

_NUMPY = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
          "u32": np.uint32, "bool": np.bool_}
# Loaded kernels per live backend object (not per backend name: a second instance of a
# backend has its own context/device, and a kernel loaded in another one is invalid there —
# OpenCL raised INVALID_CONTEXT once a test opened a fresh backend).
_LOADED: dict[int, tuple[Any, dict[str, object]]] = {}
_LOCK = threading.Lock()
_CAPTURE: contextvars.ContextVar[list | None] = contextvars.ContextVar("accy_plan_capture",
                                                                      default=None)


@record
class CapturedRun:
    """One :meth:`Plan.run` seen by :func:`capture_plans`: the backend, the launch graph,
    its loaded kernels (name → handle) and the host inputs (in ``graph.param_slots``
    order)."""

    backend: Any
    graph: Any
    loaded: dict[str, object]
    params: tuple[np.ndarray, ...]


@contextlib.contextmanager
def capture_plans() -> Iterator[list[CapturedRun]]:
    """Record every :meth:`Plan.run` in this context (thread, task) into the yielded list;
    the plans still run. Family sweeps use it to replay only the launches of a call."""
    runs: list[CapturedRun] = []
    token = _CAPTURE.set(runs)
    try:
        yield runs
    finally:
        _CAPTURE.reset(token)


@record
class Slot:
    """A buffer slot of a plan: ``size_elems`` elements of kernel dtype ``dtype``."""

    index: int
    dtype: str
    size_elems: int


def backend_object(backend: str | Any) -> Any:
    """Return the live backend for a name (opened through :mod:`accy.plugins`) or object.

    Raises:
        BackendUnavailable: unknown or unavailable backend name.
    """
    if isinstance(backend, str):
        from accy.plugins import open_backend

        return open_backend(backend)
    return backend


def host_like(backend: Any) -> bool:
    """Return True when the backend runs on host memory (CPU-like thread pool)."""
    return "host_memory" in backend_object(backend).capabilities().features


#: work-items per thread from which a host pool splits a launch, where the backend does not
#: say (a compile-time target): the CPU backend pool's default ``min_items_per_thread``
SPLIT_ITEMS = 8192


def split_items(backend: Any) -> int:
    """Work-items per thread from which a host-memory backend's thread pool splits a launch
    over its threads: its pool's ``min_items_per_thread`` (the CPU backend's
    ``WorkgroupPool``; a launch of ``threads * split_items`` work-items or more gives every
    thread a part), :data:`SPLIT_ITEMS` where the backend has no pool that says. Families
    that launch few heavy work-items size their idle-lane strides by it instead of a
    constant of their own."""
    pool = getattr(backend_object(backend), "pool", None)
    per = getattr(pool, "min_items_per_thread", None)
    return per if isinstance(per, int) and not isinstance(per, bool) and per > 0 else SPLIT_ITEMS


def split_lanes(backend: Any) -> int:
    """Work-items a host launch needs for its backend's pool to give every thread a part:
    the pool's ``num_threads`` (the CPU count where the backend has no pool that says)
    times :func:`split_items`. Families space the few working lanes of a tile launch over
    at least this many."""
    threads = getattr(getattr(backend_object(backend), "pool", None), "num_threads", None)
    threads = threads if isinstance(threads, int) and threads > 0 else os.cpu_count() or 1
    return threads * split_items(backend)


def tile_geometry(backend: Any, tiles: int, workgroup_size: int) -> tuple[int, int]:
    """Return ``(groups, lane_stride)`` for a kernel where one work-item walks one tile.

    Work-item ``t * lane_stride`` handles tile ``t``; the others idle. On host-memory
    backends the stride makes the launch at least :func:`split_lanes` work-items, so that
    the pool gives every thread a part, and no more idle lanes than that (each costs its
    guard); elsewhere the stride is 1.
    """
    stride = 1
    be = backend_object(backend)
    if host_like(be) and tiles > 0:
        stride = max(1, -(-split_lanes(be) // tiles))
    items = tiles * stride
    return max(0, -(-items // workgroup_size)), stride


@record(frozen=False)
class Plan:
    """A launch graph under construction for one family call (see the module docstring)."""

    name: str
    _sizes: list[tuple[str, int]] = field(default_factory=list)
    _params: list[tuple[int, np.ndarray]] = field(default_factory=list)
    _results: list[int] = field(default_factory=list)
    _launches: list[tuple[Any, int, tuple[int, ...], tuple[tuple[str, Any], ...]]] = field(
        default_factory=list)

    def _slot(self, dtype: str, size_elems: int) -> Slot:
        self._sizes.append((dtype, int(size_elems)))
        return Slot(len(self._sizes) - 1, dtype, int(size_elems))

    def param(self, array: np.ndarray, dtype: str) -> Slot:
        """Add host input ``array`` (1-D view, numpy dtype of kernel dtype ``dtype``)."""
        arr = np.ascontiguousarray(array).reshape(-1)
        if arr.dtype != _NUMPY[dtype]:
            arr = arr.view(_NUMPY[dtype]) if arr.itemsize == np.dtype(_NUMPY[dtype]).itemsize \
                else arr.astype(_NUMPY[dtype])
        if any(a is arr or np.may_share_memory(a, arr) for _, a in self._params):
            arr = arr.copy()
        s = self._slot(dtype, arr.size)
        self._params.append((s.index, arr))
        return s

    def temp(self, dtype: str, size_elems: int) -> Slot:
        """Add a temporary of ``size_elems`` elements (uninitialised; write before reading).

        At least one element is allocated so that empty problems bind whole elements.
        """
        return self._slot(dtype, max(1, size_elems))

    def output(self, dtype: str, size_elems: int) -> Slot:
        """Add a result of ``size_elems`` elements, returned by :meth:`run` in this order.

        Outputs start zeroed on every backend (host or device memory, fresh or reused
        buffers), so a kernel may accumulate into one (``out[i] += v``) without a fill launch.
        """
        s = self._slot(dtype, size_elems)
        self._results.append(s.index)
        return s

    def launch(self, kernel: Any, groups: int, slots: list[Slot],
               scalars: list[tuple[str, Any]] = ()) -> None:  # type: ignore[assignment]
        """Append a launch of ``kernel`` over ``groups`` work-groups binding ``slots``.

        ``slots`` bind the kernel's buffers in order, ``scalars`` (``(dtype, value)``) its
        scalars; the kernel must declare the buffers it writes before the read-only ones.

        Raises:
            InputError: wrong number of slots or scalars, or a written buffer declared
                after a read-only one.
            UnsupportedError: the launch cannot be indexed (see :func:`check_launch`).
        """
        check_launch(self.name, kernel, groups, scalars)
        _check_bindings(self.name, kernel, slots, scalars)
        self._launches.append((kernel, int(groups), tuple(s.index for s in slots),
                               tuple(scalars)))

    def graph(self) -> Any:
        """Return the :class:`accy.runtime.graph.LaunchGraph` of this plan."""
        from accy.ir import TensorType
        from accy.runtime.graph import GraphLaunch, LaunchGraph

        itemsize = {k: np.dtype(v).itemsize for k, v in _NUMPY.items()}
        g = LaunchGraph(
            slot_bytes=[itemsize[d] * n for d, n in self._sizes],
            param_slots=[i for i, _ in self._params],
            param_types=[TensorType(self._sizes[i][0], (self._sizes[i][1],))
                         for i, _ in self._params],
            result_slots=list(self._results),
            result_types=[TensorType(self._sizes[i][0], (self._sizes[i][1],))
                          for i in self._results],
            name=self.name,
            zero_results=True,
        )
        for kernel, groups, slots, scalars in self._launches:
            g.kernels[kernel.name] = kernel
            g.launches.append(GraphLaunch(kernel.name, groups, kernel.workgroup_size, slots,
                                          scalars))
        return g

    def run(self, backend: str | Any) -> tuple[np.ndarray, ...]:
        """Compile, load and run the plan on ``backend``; return the outputs (1-D arrays).

        Raises:
            BackendUnavailable: the backend cannot be opened.
            CodegenError, CompileError, LaunchError: the backend failed.
        """
        from accy.runtime.executable import Executable

        be = backend_object(backend)
        g = self.graph()
        loaded = {name: _load(be, k) for name, k in g.kernels.items()}
        runs = _CAPTURE.get()
        if runs is not None:
            runs.append(CapturedRun(be, g, loaded, tuple(a for _, a in self._params)))
        exe = Executable(be, g, loaded)
        try:
            return exe(*[a for _, a in self._params])
        finally:
            exe.close()


#: work-item ids are i32: a launch may hold at most 2**31 work-items (ids 0 .. 2**31 - 1)
MAX_WORK_ITEMS = 1 << 31
_INT_RANGE = {"i32": (-(1 << 31), 1 << 31), "u32": (0, 1 << 32), "i64": (-(1 << 63), 1 << 63)}


def check_launch(plan: str, kernel: Any, groups: int, scalars: Any) -> None:
    """Refuse a launch the kernels cannot index: more than :data:`MAX_WORK_ITEMS`
    work-items (their i32 ids would wrap negative and pass ``id < n`` guards), or an
    integer scalar outside its dtype (a size past 2**31 - 1 would wrap).

    Raises:
        UnsupportedError: names the plan, the kernel and the value (``feature="size"``).
    """
    from accy.errors import UnsupportedError

    items = int(groups) * int(kernel.workgroup_size)
    if items > MAX_WORK_ITEMS:
        raise UnsupportedError(
            f"{plan}: kernel {kernel.name!r} would launch {items} work-items, more than the "
            f"{MAX_WORK_ITEMS} that 32-bit work-item ids index; split the input",
            feature="size")
    for dtype, value in scalars:
        bounds = _INT_RANGE.get(dtype)
        if bounds is not None and not bounds[0] <= int(value) < bounds[1]:
            raise UnsupportedError(
                f"{plan}: kernel {kernel.name!r} scalar {value} does not fit {dtype} "
                f"(32-bit sizes and indices); split the input", feature="size")


def _check_bindings(plan: str, kernel: Any, slots: list[Slot], scalars: Any) -> None:
    from accy.errors import InputError

    where = f"plan {plan!r}: launch of kernel {kernel.name!r}"
    if len(slots) != len(kernel.buffers):
        raise InputError(f"{where} binds {len(slots)} slots to {len(kernel.buffers)} buffers "
                         f"({', '.join(b.name for b in kernel.buffers)})")
    if len(tuple(scalars)) != len(kernel.scalars):
        raise InputError(f"{where} passes {len(tuple(scalars))} scalars for "
                         f"{len(kernel.scalars)} ({', '.join(s.name for s in kernel.scalars)})")
    access = [b.access != "read" for b in kernel.buffers]
    if access != sorted(access, reverse=True):
        raise InputError(f"{where}: declare the buffers it writes ('write'/'readwrite') before "
                         f"the read-only ones (launch order: outputs, then inputs)")


#: kernel object id -> (kernel, fingerprint): a kernel's text is hashed once, not per launch
#: (the family builders cache their kernels, so the same objects come back on every call);
#: the entry holds the kernel, so its id cannot be reused while it is stored
_FINGERPRINTS: dict[int, tuple[Any, str]] = {}
_MAX_FINGERPRINTS = 4096


def _fingerprint(kernel: Any) -> str:
    """``kernel.fingerprint()``, computed once per kernel object (thread-safe: a race
    computes the same digest twice)."""
    hit = _FINGERPRINTS.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    fp = kernel.fingerprint()
    if len(_FINGERPRINTS) >= _MAX_FINGERPRINTS:  # kernels built per call: never unbounded
        _FINGERPRINTS.clear()
    _FINGERPRINTS[id(kernel)] = (kernel, fp)
    return fp


def _load(backend: Any, kernel: Any) -> object:
    from accy.runtime.compiler import compile_kernel

    fp = _fingerprint(kernel)
    with _LOCK:
        entry = _LOADED.get(id(backend))
        hit = entry[1].get(fp) if entry is not None and entry[0] is backend else None
    if hit is not None:
        return hit
    art = compile_kernel(backend, kernel)
    obj = backend.load(art)
    with _LOCK:
        entry = _LOADED.get(id(backend))
        if entry is None or entry[0] is not backend:  # the entry holds the backend: no id reuse
            entry = _LOADED[id(backend)] = (backend, {})
        # first one in wins: a second thread that compiled the same kernel meanwhile gets the
        # stored object, so every caller holds the one that the cache keeps alive
        kept = entry[1].setdefault(fp, obj)
    if kept is not obj:  # ours lost the race and nothing else holds it: release it now (a
        backend.destroy(obj)  # device pipeline or program would otherwise wait for GC)
    return kept
