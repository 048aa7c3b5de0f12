"""A launch graph bound to a live backend: validate inputs, launch, return outputs.

The executable owns its loaded kernels, constant buffers and a pool of workspaces
(:mod:`accy.runtime.resources`); :meth:`Executable.prepare` makes an
:class:`~accy.runtime.Invocation` (:mod:`accy.runtime.invocation`), and a call is
``prepare`` + ``submit`` + ``wait`` + ``read``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from accy.errors import InputError
from accy.runtime.fast_call import build_fast_call, no_fast_call
from accy.runtime.graph import LaunchGraph, graph_nodes
from accy.runtime.resources import MIN_BUFFER_BYTES, Resources

if TYPE_CHECKING:  # dependencies and streams: only backends with streams plan them;
    # invocations: calls the small-call path does not take (imported by those)
    from accy.runtime.deps import DependencyGraph
    from accy.runtime.invocation import Invocation
    from accy.runtime.streams import StreamPlan

__all__ = ["Executable"]


class Executable:
    """Call with numpy arrays (one per parameter); returns a tuple of numpy arrays.

    Buffers: on a backend with host memory (CPU) parameters and results are bound
    zero-copy; elsewhere they are copied per call. Constants live as long as the executable;
    temporaries belong to a workspace that invocations take from a pool and give back, so
    repeated calls reuse them. :meth:`close` (a ``with`` block, or garbage collection)
    releases kernels, buffers, streams and events. Calls (and ``close``) are serialized by a
    lock, so one executable may be called from several threads.

    Args:
        backend: the live backend.
        graph: the launch graph.
        loaded: kernel name → loaded kernel (``backend.load`` of its artifact).
        module, stages, cache_stats: the compiler's products (see Attributes).
        restage: runs the stages again when :attr:`stages` is read (pipeline-cache hits).
        loader: returns kernel name → loaded kernel, to load them again after :meth:`close`.
        owns_kernels: :meth:`close` destroys the loaded kernels (False for kernels shared
            with other executables, e.g. a kernel family's per-backend cache).

    Raises:
        BackendError: uploading a constant failed (what was uploaded before is freed).

    Attributes:
        backend: the live backend the kernels run on.
        graph: the :class:`LaunchGraph` (slots, launches, kernels).
        module: the module after the last stage (or None for families).
        stages: stage products (IR, records, fingerprints), empty for families.
        kernel_count: kernel launches per call.
        kernels: kernel name → kernel IR.
        cache_stats: artifact cache counters (``disk_hits``, ``disk_misses``, ``memory_hits``).
        max_streams: the most streams one invocation uses on a backend listing
            ``"streams"`` (1: everything on one stream).
    """

    max_streams = 4

    def __init__(self, backend: Any, graph: LaunchGraph, loaded: dict[str, object],
                 module: Any = None, stages: Sequence[Any] | None = (),
                 cache_stats: dict[str, int] | None = None,
                 restage: Callable[[], Sequence[Any]] | None = None, *,
                 loader: Callable[[], dict[str, object]] | None = None,
                 owns_kernels: bool = False) -> None:
        self.backend = backend
        self.graph = graph
        self._module = module
        self._stages = list(stages) if stages is not None else None
        self._restage = restage
        self.cache_stats = cache_stats or {}
        self.param_types = list(graph.param_types)
        self.result_types = list(graph.result_types)
        features = backend.capabilities().features
        self._host = "host_memory" in features
        self._streams = "streams" in features
        self._res = Resources(backend, loaded, owns_kernels, loader)
        self._lock = self._res.lock
        self._written = graph.written_slots
        self._fast: Any = None  # the small-call plan (accy.runtime.fast_call), built lazily
        self._native: dict[int, Any] = {}  # id(loop node) -> native driver or False
        self._nodes = graph_nodes(graph)  # launches and loop nodes in run order
        self._geometry_list: list[Any] | None = None  # per launch, made on first use
        self._deps: DependencyGraph | None = None
        self._plan: StreamPlan | None = None
        self._finalizer = weakref.finalize(self, self._res.finalize)
        self._finalizer.atexit = False  # backends may be closed by then
        try:
            for slot in graph.constants:
                self._constant(slot)
        except BaseException:
            self._res.finalize()
            raise

    @property
    def stages(self) -> list[Any]:
        """The stage products; for a graph read from the pipeline cache the stages are run
        again on first access (the launch graph itself came from the cache)."""
        if self._stages is None:
            self._stages = list(self._restage()) if self._restage is not None else []
        return self._stages

    @property
    def module(self) -> Any:
        """The module after the last stage (None for families)."""
        if self._module is None and (self._stages or self._restage is not None):
            stages = self.stages
            self._module = stages[-1].module if stages else None
        return self._module

    @property
    def _geometries(self) -> list[Any]:
        """Each launch's :class:`~accy.backend.Geometry` (None: an empty launch), made on
        first use: the small-call path binds its own, so a warm first call imports no
        launch-sequence code."""
        geoms = self._geometry_list
        if geoms is None:
            from accy.runtime.sequence import geometry

            geoms = self._geometry_list = [geometry(ln) if ln.groups > 0 else None
                                           for ln in self.graph.launches]
        return geoms

    @property
    def kernels(self) -> Any:
        """Kernel name → kernel IR (the graph's; a cached graph's is read on first use)."""
        return self.graph.kernels

    @property
    def kernel_count(self) -> int:
        return len(self.graph.launches)

    @property
    def _loaded(self) -> dict[str, object]:
        """Kernel name → loaded kernel (what is loaded now)."""
        return self._res.loaded

    @property
    def dependencies(self) -> DependencyGraph:
        """The :class:`~accy.runtime.deps.DependencyGraph` of the launch graph (computed
        once)."""
        if self._deps is None:
            from accy.runtime.deps import dependency_graph

            self._deps = dependency_graph(self.graph)
        return self._deps

    def _stream_plan(self) -> StreamPlan | None:
        """The stream plan on a backend with streams, else None."""
        if not self._streams:
            return None
        if self._plan is None:
            from accy.runtime.streams import plan_streams

            self._plan = plan_streams(self.dependencies, self.max_streams)
        return self._plan

    def _check_input(self, i: int, a: Any) -> np.ndarray:
        t = self.param_types[i]
        arr = a if isinstance(a, np.ndarray) else np.asarray(a)
        want = t.dtype.numpy
        if arr.dtype != want:
            raise InputError(
                f"{self.graph.name} input #{i}: expected {t} (numpy {want}), got {arr.dtype} "
                f"{list(arr.shape)}; convert with .astype(np.{want})"
            )
        if arr.shape != t.shape:
            raise InputError(
                f"{self.graph.name} input #{i}: expected shape {list(t.shape)} ({t}), "
                f"got {list(arr.shape)}"
            )
        return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)

    def _check_inputs(self, args: Sequence[Any]) -> list[np.ndarray]:
        from accy.runtime.invocation import check_arrays

        return check_arrays(self, args)

    def prepare(self, *args: Any) -> Invocation:
        """Bind ``args`` (numpy arrays, one per parameter, of the parameter types) and
        upload them once; return an :class:`~accy.runtime.Invocation` to ``submit()``.

        Raises:
            InputError: wrong input count, dtype or shape (message says expected vs got).
            BackendError: an allocation or upload failed (what was acquired is released).
        """
        from accy.runtime.invocation import Invocation, check_arrays

        arrays = check_arrays(self, args)
        with self._lock:
            return Invocation(self, arrays)

    def __call__(self, *args: Any) -> tuple[np.ndarray, ...]:
        """Run on numpy inputs: ``prepare``, ``submit``, wait, ``read``, ``close`` (or, for
        small host-memory programs, the equivalent fast path of :meth:`call_fast`).

        Raises:
            InputError: wrong input count, dtype or shape (message says expected vs got).
            IndexOutOfRangeError: a checked gather/scatter index is out of range.
            BackendError: the backend failed a launch.
        """
        out = self.call_fast(args)
        if out is not None:
            return out
        from accy.runtime.invocation import check_arrays

        return self._run(check_arrays(self, args))

    def _run(self, arrays: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        """The ordinary path on checked ``arrays``: prepare, submit, wait, read, close."""
        from accy.runtime.invocation import Invocation

        with self._lock:
            inv = Invocation(self, arrays, internal=True)
            try:
                inv._submit()
                return inv.read()
            finally:
                inv.close()

    def call_fast(self, args: Sequence[Any]) -> tuple[np.ndarray, ...] | None:
        """Run through the small-call fast path (:mod:`accy.runtime.fast_call`) when ``args``
        are C-contiguous numpy arrays of exactly the parameters' dtypes and shapes and the
        program has such a path; otherwise return ``None`` (nothing ran)."""
        return self.fast_function()(args)

    def fast_function(self) -> Callable[[Sequence[Any]], tuple[np.ndarray, ...] | None]:
        """The function behind :meth:`call_fast` (built on first use): ``f(args)`` runs the
        call or returns ``None``; after :meth:`close` it returns ``None`` for every call
        (ask again for the new one)."""
        fast = self._fast
        if fast is None:
            with self._lock:
                fast = self._fast
                if fast is None:
                    fast = self._fast = build_fast_call(self) or False
        return fast.call if fast else no_fast_call

    # buffers and the sequence protocol (device-array runs use the default workspace) ---
    def _constant(self, slot: int) -> object | None:
        """The buffer of constant ``slot`` (uploaded on first use), or None for others."""
        arr = self.graph.constants.get(slot)
        if arr is None:
            return None
        res = self._res
        buf = res.constants.get(slot)
        if buf is None:
            buf = self.backend.allocate(max(arr.nbytes, MIN_BUFFER_BYTES))
            try:
                if arr.nbytes:
                    from accy.runtime.invocation import as_bytes

                    self.backend.write(buf, as_bytes(arr))
            except BaseException:
                self.backend.free(buf)
                raise
            res.constants[slot] = buf
        return buf

    def _new_temporary(self, slot: int) -> object:
        return self.backend.allocate(max(self.graph.slot_bytes[slot], MIN_BUFFER_BYTES))

    def buffer(self, slot: int, buffers: dict[int, object]) -> object:
        """Sequence protocol: ``buffers[slot]``, else a constant or the default workspace's."""
        buf = buffers.get(slot)
        if buf is None:
            buf = self._constant(slot)
            buf = buffers[slot] = self.own(slot) if buf is None else buf
        return buf

    def own(self, slot: int) -> object:
        """Sequence protocol: the default workspace's buffer of ``slot``."""
        temps = self._res.default.temps
        buf = temps.get(slot)
        if buf is None:
            buf = temps[slot] = self._new_temporary(slot)
        return buf

    def spare(self, slot: int) -> object:
        """Sequence protocol: the default workspace's second buffer of ``slot``."""
        spares = self._res.default.spares
        buf = spares.get(slot)
        if buf is None:
            buf = spares[slot] = self._new_temporary(slot)
        return buf

    def native_loop(self, node: Any) -> Any:
        """Sequence protocol: the backend's native driver of loop ``node`` (built on first
        use, :func:`~accy.runtime.loop_plan.build_native_loop`), or None."""
        got = self._native.get(id(node))
        if got is None:
            from accy.runtime.loop_plan import build_native_loop

            got = self._native[id(node)] = build_native_loop(self, node) or False
        return got or None

    def unbind(self) -> None:
        """Drop the native loop drivers and the small-call plan (which binds them and the
        launches' thread split): the next call binds them again, under the backend's
        settings then (``CpuBackend.native_loops``, the pool's ``num_threads``), where they
        were fixed when first bound. A small-call function taken before
        (:meth:`fast_function`) refuses every later call (it returns ``None``)."""
        with self._lock:
            if self._fast:
                self._fast.kill()
            self._fast = None
            self._native = {}

    def _kernel(self, name: str) -> object:
        """The loaded kernel ``name`` (loaded again after :meth:`close`)."""
        return self._res.kernel(name)

    def launch(self, ln: Any, bound: list[object]) -> None:
        """Sequence protocol: launch ``ln`` on the default stream."""
        from accy.runtime.sequence import geometry

        self.backend.launch(self._res.kernel(ln.kernel), geometry(ln), bound, list(ln.scalars))

    def sync(self) -> None:
        """Sequence protocol: wait for all work."""
        self.backend.synchronize()

    def _check_indices(self, before: int, params: dict, buffers: dict, ctx: Any) -> None:
        """Index checks due before launch ``before``: parameters and constants on the host;
        a slot computed by earlier launches is read back first (after ``ctx.sync()``)."""
        for c in self.graph.checks:
            if c.before != before or c.count == 0:
                continue
            arr = params.get(c.slot)
            if arr is None:
                arr = self.graph.constants.get(c.slot)
            if arr is None:
                ctx.sync()
                arr = np.empty(c.count, dtype=np.dtype({"i32": np.int32, "i64": np.int64,
                                                        "u32": np.uint32}[c.dtype]))
                from accy.runtime.invocation import as_bytes

                self.backend.read(ctx.buffer(c.slot, buffers), as_bytes(arr))
            flat = np.asarray(arr).reshape(-1)
            bad = (flat < c.low) | (flat >= c.high)
            if bad.any():
                from accy.families.validate import IndexOutOfRangeError

                pos = int(np.argmax(bad))
                raise IndexOutOfRangeError(
                    f"{self.graph.name}: {c.what} {int(flat[pos])} at position {pos} is out "
                    f"of range [{c.low}, {c.high}); nothing was launched from that op on",
                    pos, int(flat[pos]), c.high)

    def _collect(self, arrays: list[np.ndarray], outputs: dict[int, np.ndarray]) -> tuple:
        g = self.graph
        params = dict(zip(g.param_slots, arrays, strict=True))
        results, handed_out = [], set()
        for slot, t in zip(g.result_slots, g.result_types, strict=True):
            if slot in outputs:
                arr = outputs[slot]
                results.append(arr.copy() if slot in handed_out else arr)
                handed_out.add(slot)
            elif slot in params:
                results.append(params[slot].copy())
            else:
                results.append(g.constants[slot].reshape(t.shape).copy())
        return tuple(results)

    def close(self) -> None:
        """Release the kernels (when owned), constant buffers, workspaces (temporaries,
        streams, events) and every live invocation's buffers.

        The executable stays usable (``accy.compile`` may hand the same one to other
        callers): the next call loads the kernels again from their artifacts, allocates
        the buffers again and uploads the constants. Idempotent.

        Raises:
            BackendError: a release failed (everything else is still released).
        """
        with self._lock:  # all of it: a call in between would bind what is being released
            if self._fast:  # it holds the kernels' and persistent buffers' addresses
                self._fast.kill()
            self._fast = None
            self._native = {}  # so do the native loop drivers
            self._res.release()

    def __enter__(self) -> Executable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stage_text(self, stage: str) -> str:
        """The IR after ``stage``, kernels included."""
        for p in self.stages:
            if p.stage == stage:
                text = p.module.to_text()
                for name, k in sorted(p.module.attrs.get("kernels", {}).items()):
                    text += f"\n// kernel {name}\n{k.to_text()}"
                return text
        known = ", ".join(p.stage for p in self.stages)
        raise InputError(f"unknown stage {stage!r}; known: {known}")
