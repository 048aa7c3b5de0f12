"""A launch graph bound to a live backend: validate inputs, launch, return outputs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accy.errors import InputError
from accy.runtime.fast_call import build_fast_call
from accy.runtime.graph import LaunchGraph
from accy.runtime.sequence import run_sequence

__all__ = ["Executable"]


# an empty tensor still gets a buffer; 8 bytes is a whole number of elements of every dtype
_MIN_BUFFER_BYTES = 8


def _as_bytes(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


class Executable:
    """Call with numpy arrays (one per parameter); returns a tuple of numpy arrays.

    Buffers: on a backend with host memory (CPU) parameters and results are bound
    zero-copy; elsewhere they are copied per call. Temporaries and constants live as long
    as the executable (:meth:`close` releases them). Calls are serialized by a lock.

    Attributes:
        backend: the live backend the kernels run on.
        graph: the :class:`LaunchGraph` (slots, launches, kernels).
        module: the module after the last stage (or None for families).
        stages: stage products (IR, records, fingerprints), empty for families.
        kernel_count: kernel launches per call.
        kernels: kernel name → kernel IR.
        cache_stats: artifact cache counters (``disk_hits``, ``disk_misses``, ``memory_hits``).
    """

    def __init__(self, backend: Any, graph: LaunchGraph, loaded: dict[str, object],
                 module: Any = None, stages: Sequence[Any] | None = (),
                 cache_stats: dict[str, int] | None = None,
                 restage: Callable[[], Sequence[Any]] | None = None) -> None:
        self.backend = backend
        self.graph = graph
        self._module = module
        self._stages = list(stages) if stages is not None else None
        self._restage = restage
        self.cache_stats = cache_stats or {}
        self.kernels = dict(graph.kernels)
        self.param_types = list(graph.param_types)
        self.result_types = list(graph.result_types)
        self._loaded = loaded
        self._host = "host_memory" in backend.capabilities().features
        self._lock = threading.Lock()
        self._written = graph.written_slots
        self._persistent: dict[int, object] = {}
        self._fast: Any = None  # the small-call plan (accy.runtime.fast_call), built lazily
        for slot in graph.constants:
            self._persistent[slot] = self._new_persistent(slot)

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
    def kernel_count(self) -> int:
        return len(self.graph.launches)

    def _check_inputs(self, args: Sequence[Any]) -> list[np.ndarray]:
        name = self.graph.name
        if len(args) != len(self.param_types):
            raise InputError(f"{name}: expected {len(self.param_types)} inputs, got {len(args)}")
        arrays = []
        for i, (a, t) in enumerate(zip(args, self.param_types, strict=True)):
            arr = a if isinstance(a, np.ndarray) else np.asarray(a)
            want = t.dtype.numpy
            if arr.dtype != want:
                raise InputError(
                    f"{name} input #{i}: expected {t} (numpy {want}), got {arr.dtype} "
                    f"{list(arr.shape)}; convert with .astype(np.{want})"
                )
            if arr.shape != t.shape:
                raise InputError(
                    f"{name} input #{i}: expected shape {list(t.shape)} ({t}), "
                    f"got {list(arr.shape)}"
                )
            arrays.append(arr if arr.flags.c_contiguous else np.ascontiguousarray(arr))
        return arrays

    def __call__(self, *args: Any) -> tuple[np.ndarray, ...]:
        """Run on numpy inputs.

        Raises:
            InputError: wrong input count, dtype or shape (message says expected vs got).
            BackendError: the backend failed a launch.
        """
        out = self.call_fast(args)
        if out is not None:
            return out
        arrays = self._check_inputs(args)
        with self._lock:
            return self._run(arrays)

    def call_fast(self, args: Sequence[Any]) -> tuple[np.ndarray, ...] | None:
        """Run through the small-call fast path (:mod:`accy.runtime.fast_call`) when ``args``
        are C-contiguous numpy arrays of exactly the parameters' dtypes and shapes and the
        program has such a path; otherwise return ``None`` (nothing ran)."""
        with self._lock:
            fast = self._fast
            if fast is None:
                fast = self._fast = build_fast_call(self) or False
            return fast(args) if fast else None

    def _bind(self, arr: np.ndarray, per_call: list[object], write: bool) -> object:
        be = self.backend
        if self._host:
            buf = be.import_host(arr)
            if buf is not None:
                per_call.append(buf)
                return buf
        buf = be.allocate(max(arr.nbytes, _MIN_BUFFER_BYTES))
        per_call.append(buf)
        if write and arr.nbytes:
            be.write(buf, _as_bytes(arr))
        return buf

    def _new_persistent(self, slot: int) -> object:
        """A buffer for a temporary slot, or for a constant slot holding the constant."""
        arr = self.graph.constants.get(slot)
        if arr is None:
            return self.backend.allocate(max(self.graph.slot_bytes[slot], _MIN_BUFFER_BYTES))
        buf = self.backend.allocate(max(arr.nbytes, _MIN_BUFFER_BYTES))
        if arr.nbytes:
            self.backend.write(buf, _as_bytes(arr))
        return buf

    def _buffer(self, slot: int, buffers: dict[int, object]) -> object:
        buf = buffers.get(slot)
        if buf is None:
            buf = self._persistent.get(slot)
            if buf is None:  # a temporary's first use, or any slot after close()
                buf = self._persistent[slot] = self._new_persistent(slot)
            buffers[slot] = buf
        return buf

    def _run(self, arrays: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        be, g = self.backend, self.graph
        per_call: list[object] = []
        buffers: dict[int, object] = {}
        outputs: dict[int, np.ndarray] = {}
        try:
            for slot, arr in zip(g.param_slots, arrays, strict=True):
                buffers[slot] = self._bind(arr, per_call, write=True)
            new = np.zeros if g.zero_results else np.empty
            for slot, t in zip(g.result_slots, g.result_types, strict=True):
                if (slot in self._written or g.zero_results) and slot not in outputs:
                    outputs[slot] = new(t.shape, dtype=t.dtype.numpy)
                    buffers[slot] = self._bind(outputs[slot], per_call, write=g.zero_results)
            params = dict(zip(g.param_slots, arrays, strict=True))

            def checks(i: int) -> None:
                if g.checks:
                    self._check_indices(i, params, buffers)

            run_sequence(self, g, buffers, checks)
            be.synchronize()
            if not self._host:
                for slot, arr in outputs.items():
                    if arr.nbytes:
                        be.read(buffers[slot], _as_bytes(arr))
            return self._collect(arrays, outputs)
        finally:
            for buf in per_call:
                be.free(buf)

    def _check_indices(self, before: int, params: dict, buffers: dict) -> None:
        """Index checks due before launch ``before``: parameters and constants on the host;
        a slot computed by earlier launches is read back first (after a synchronize)."""
        for c in self.graph.checks:
            if c.before != before or c.count == 0:
                continue
            arr = params.get(c.slot)
            if arr is None:
                arr = self.graph.constants.get(c.slot)
            if arr is None:
                self.backend.synchronize()
                arr = np.empty(c.count, dtype=np.dtype({"i32": np.int32, "i64": np.int64,
                                                        "u32": np.uint32}[c.dtype]))
                self.backend.read(self._buffer(c.slot, buffers), _as_bytes(arr))
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
        """Release the executable's persistent device buffers (constants, temporaries).

        The executable stays usable (``accy.compile`` may hand the same one to other
        callers): the next call allocates them again and uploads the constants.
        """
        with self._lock:
            self._fast = None  # it holds the persistent buffers' addresses
            for buf in self._persistent.values():
                self.backend.free(buf)
            self._persistent.clear()
            for buf in self.__dict__.pop("_spare", {}).values():
                self.backend.free(buf)

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
