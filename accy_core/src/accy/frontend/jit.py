"""``accy.jit``: trace a numpy-style Python function into tensor IR, compile, cache, run.

The first call with a given *signature* — the (dtype, shape) of every array argument plus
the values of the static ones (Python numbers, strings, ``static_argnums``) and the nesting
of tuples/lists/dicts; static numbers by type and value, so ``1``, ``1.0`` and ``True``,
and ``0.0`` and ``-0.0``, are distinct signatures — runs the Python function once on
:class:`Tracer` arguments. Every ``accy.numpy`` call and array operator appends an op to a
fresh IR function; Python control flow simply runs (at trace time). The module is compiled
for the backend and cached; later calls with the same signature reuse it without running
the Python function (:attr:`Jitted.trace_count` counts traces). A signature the jit index
knows (an earlier process traced the same function, unchanged in everything the trace
reads: :mod:`accy.frontend.jit_index`) is not traced at all: its executable comes from the
disk caches (:attr:`Jitted.index_hits` counts those).

A function that writes into one of its array arguments (``a[1:] = ...``, ``a += 1``)
returns the written value as an extra, hidden result, copied back into the caller's numpy
array after the run (``np.copyto``), as numba does; a device-array argument that is written
into is refused (return the updated array instead).

Calling convention: host arrays in → numpy arrays out; if any array argument is a
:class:`~accy.frontend.device_array.DeviceArray`, the call runs on its backend and returns
device arrays (host arguments are uploaded). ``backend="reference"`` evaluates the traced IR
with the numpy reference evaluator instead of compiling (for debugging and tests).
"""

from __future__ import annotations

import functools
import gc
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from accy.errors import AccyError, InputError, UnsupportedError
from accy.frontend.arg_alias import argument_aliases, write_back
from accy.frontend.arg_keys import _mark_static, _Static, _typed, _unmark, call_key, with_statics
from accy.frontend.device_array import DeviceArray, asarray
from accy.frontend.errors import TracerConversionError, conversion_cause, host_store_message
from accy.frontend.numpy_api import value_of
from accy.frontend.trace import _STATE as _TRACE_STATE
from accy.frontend.trace import Trace, array_dtype, current_trace, tracing
from accy.frontend.tracer import Tracer
from accy.frontend.tree import flatten, unflatten
from accy.frontend.written_fast import fast_written
from accy.ir import Builder, Module, TensorType

__all__ = ["Jitted", "jit"]

REFERENCE = "reference"
_LEAF = ("*",)  # the tree of a single array result
_MISS = object()  # no result from the dtype-and-shape lookup (Jitted._by_shapes)


class _Entry:
    """A traced signature: its module, result tree, executable and, once it ran through
    the small-call path, that path's function (``fast``, see ``Jitted.__call__``). An entry
    from the jit index has no module until one is asked for (``retrace`` makes it)."""

    __slots__ = ("_module", "retrace", "out_tree", "executable", "writes", "fast", "single",
                 "index_key")

    def __init__(self, module: Module | None, out_tree: Any, executable: Any = None,
                 writes: tuple[int, ...] = (), retrace: Callable[[], Module] | None = None
                 ) -> None:
        self._module = module
        self.retrace = retrace
        self.out_tree = out_tree
        self.executable = executable
        self.writes = writes  # argument leaves the function wrote into (extra results)
        self.fast: Any = None
        self.single = out_tree == _LEAF  # one array result: returned as it is
        self.index_key: str | None = None  # its jit index key, to store once compiled

    @property
    def module(self) -> Module:
        """The traced module (traced now for an entry that came from the jit index)."""
        if self._module is None:
            self._module = self.retrace()  # type: ignore[misc]
        return self._module


def _ir_name(fn: Callable[..., Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", getattr(fn, "__name__", "fn")) or "fn"
    return name if not name[0].isdigit() else f"f{name}"


def _leaf_type(x: Any, i: int, name: str) -> TensorType:
    if isinstance(x, DeviceArray):
        return x.type
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    return TensorType(array_dtype(arr, f"{name}: array argument #{i}"), arr.shape)


def _call_traced(fn: Callable[..., Any], args: Any, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` on tracers; numpy's own error raised while it converted a
    tracer (``h[i] = t`` into a numpy array made in ``fn``: a ``ValueError`` whose cause is
    our :class:`TracerConversionError`) becomes that accy error, naming the fix."""
    try:
        return fn(*args, **kwargs)
    except AccyError:
        raise
    except (ValueError, TypeError) as err:
        cause = conversion_cause(err)
        if cause is None:
            raise
        raise TracerConversionError(host_store_message(cause, err), feature=cause.feature,
                                    alternative="anp.zeros", array=cause.array,
                                    where=cause.where) from err


class Jitted:
    """A jitted function; call it like the original. See the module docstring.

    Attributes:
        fn: the Python function.
        backend: backend name (``"cpu"``) or ``"reference"``.
        trace_count: how many times ``fn`` has been traced (one per new signature, unless
            the jit index knew it).
        index_hits: signatures whose executable came from the jit index without a trace
            (:mod:`accy.frontend.jit_index`; ``docs/caches.md``).
    """

    def __init__(self, fn: Callable[..., Any], backend: str = "cpu",
                 static_argnums: Sequence[int] = (), name: str | None = None) -> None:
        self.fn = fn
        self.backend = backend
        self.static_argnums = frozenset(int(i) for i in static_argnums)
        self.name = name or _ir_name(fn)
        self.trace_count = 0
        self.index_hits = 0
        self._cache: dict[Any, _Entry] = {}
        # (numpy dtype, shape) of each positional array argument → entry: calls with plain
        # C-contiguous numpy arrays skip the signature's flattening (see __call__)
        self._fast: dict[tuple, _Entry] = {}
        self._last: _Entry | None = None  # the entry of the latest such call, tried first
        self._lock = threading.RLock()
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """``@accy.jit`` on a method: the instance is the first (static) argument."""
        return self if obj is None else functools.partial(self, obj)

    @property
    def cache_size(self) -> int:
        """Number of cached signatures."""
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget every traced signature (the next call traces again)."""
        self._cache.clear()
        self._fast.clear()
        self._last = None

    # ------------------------------------------------------------ signature and trace
    def _signature(self, args: tuple, kwargs: dict) -> tuple[Any, list[Any], list[TensorType]]:
        leaves: list[Any] = []
        trees = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                trees.append(flatten(_Static(a), [], f"{self.name}: static argument #{i}"))
            else:
                trees.append(flatten(a, leaves, f"{self.name}: argument #{i}"))
        kw = flatten(kwargs, leaves, f"{self.name}: keyword argument")
        types = [_leaf_type(x, i, self.name) for i, x in enumerate(leaves)]
        key = (_typed(tuple(trees)), _typed(kw), tuple((t.dtype.value, t.shape) for t in types))
        return key, leaves, types

    def _trace(self, args: tuple, kwargs: dict, types: list[TensorType]) -> _Entry:
        return self._trace_tree(flatten((_mark_static(args, self.static_argnums), kwargs), []),
                                types)

    def _alias_entry(self, args: tuple, kwargs: dict, alias: tuple) -> _Entry:
        """The entry of this signature traced with the aliased argument leaves as one
        array each (:func:`accy.frontend.arg_alias.argument_aliases`)."""
        key, _, types = self._signature(args, kwargs)
        akey = ("aliases", key, alias)
        entry = self._cache.get(akey)
        if entry is None:
            with self._lock:
                entry = self._cache.get(akey)
                if entry is None:
                    tree = flatten((_mark_static(args, self.static_argnums), kwargs), [])
                    entry = self._cache[akey] = self._trace_tree(tree, types, alias)
        return entry

    def _trace_tree(self, arg_tree: Any, types: list[TensorType], alias: tuple = ()
                    ) -> _Entry:
        self.trace_count += 1
        if self.trace_count == 1:
            _warn_host_random(self.fn, self.name)
        b = Builder()
        fb = b.begin_function(self.name, params=types)
        fb.watch = _trace_budget(self.name)
        trace = Trace(fb, self.name)
        tracers = [Tracer(fb.param(i), trace) for i in range(len(types))]
        for j, i in alias:  # the same numpy view passed twice: one array in the trace
            tracers[j] = tracers[i]
        with tracing(trace):
            targs, tkwargs = unflatten(arg_tree, tracers)
            out = _call_traced(self.fn, _unmark(targs), tkwargs)
            out_leaves: list[Any] = []
            out_tree = flatten(out, out_leaves, f"{self.name}: result")
            writes = tuple(i for i, t in enumerate(tracers) if t._version)
            fb.return_(*[value_of(trace, x) for x in out_leaves],
                       *[tracers[i].value for i in writes])
        fb.finish()
        for body in trace.functions:  # loop bodies (accy.fori_loop, ...) follow the entry
            b.add_function(body)
        return _Entry(b.finish(), out_tree, writes=writes)

    def _index_key(self, key: Any) -> str | None:
        if self.backend == REFERENCE:
            return None
        from accy.frontend import jit_index

        return jit_index.index_key(self.fn, self.name, self.backend, self.static_argnums, key)

    def _known(self, ikey: str, args: tuple, kwargs: dict,
               types: list[TensorType]) -> _Entry | None:
        """The entry of a signature the jit index knows (its executable loaded, nothing
        traced), or None."""
        from accy.frontend import jit_index
        from accy.runtime.compiler import compile_known

        known = jit_index.load(ikey)
        if known is None:
            return None
        arg_tree = flatten((_mark_static(args, self.static_argnums), kwargs), [])

        def retrace() -> Module:
            with self._lock:
                return self._trace_tree(arg_tree, types).module

        exe = compile_known(known.module, known.function, self.backend, retrace)
        if exe is None:
            return None
        self.index_hits += 1
        return _Entry(None, known.out_tree, exe, known.writes, retrace)

    def _entry(self, args: tuple, kwargs: dict) -> tuple[_Entry, list[Any]]:
        key, leaves, types = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            # one trace per signature however many threads meet it first (an RLock: a
            # traced function may call this jitted function's lower())
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    with _gc_paused():  # the index path only allocates (imports, a load)
                        ikey = self._index_key(key)
                        entry = self._known(ikey, args, kwargs, types) if ikey else None
                    if entry is None:
                        entry = self._trace(args, kwargs, types)
                        # stored once compiled, if what the trace read is as it was keyed
                        if ikey is not None and self._index_key(key) == ikey:
                            entry.index_key = ikey
                    self._cache[key] = entry
        return entry, leaves

    # ------------------------------------------------------------ public API
    def lower(self, *args: Any, **kwargs: Any) -> Module:
        """The traced tensor IR module for these arguments (``.to_text()`` prints it).

        Raises:
            VerifyError: a shape/dtype error in the traced code (names the user's line).
            TracerConversionError: Python control flow on traced data.
        """
        return self._entry(args, kwargs)[0].module

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        """The :class:`~accy.runtime.Executable` for these arguments' signature.

        It exposes ``kernel_count`` and ``stage_text(stage)`` (per-stage IR).

        Raises:
            UnsupportedError: the jit targets ``backend="reference"`` (nothing to compile).
        """
        return self._executable(self._entry(args, kwargs)[0])

    def _executable(self, entry: _Entry) -> Any:
        if self.backend == REFERENCE:
            raise UnsupportedError(
                f"{self.name}: backend 'reference' evaluates the IR with numpy and has no "
                "executable; use accy.jit(fn, backend='cpu') to compile",
                feature="compile", backend=REFERENCE, alternative="backend='cpu'")
        if entry.executable is None:
            import accy

            exe = accy.compile(entry.module, backend=self.backend)
            with self._lock:  # first one in wins: every thread runs the one kept
                if entry.executable is None:
                    entry.executable = exe
                ikey, entry.index_key = entry.index_key, None
            if ikey is not None:
                from accy.frontend import jit_index

                module = entry.module
                jit_index.store(ikey, jit_index.Known(module.fingerprint(),
                                                      module.functions[0].name,
                                                      entry.out_tree, entry.writes))
        return entry.executable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Trace (first call per signature), compile and run; see the module docstring.

        Raises:
            InputError: an argument is neither an array nor hashable, or has a dtype accy
                does not support.
            VerifyError: a shape/dtype error in the traced code (names the user's line).
            TracerConversionError: Python control flow on traced data.
        """
        last = self._last  # set only for calls of arrays and numbers, without keywords
        if last is not None and not kwargs and not getattr(_TRACE_STATE, "stack", None):
            # the executable's small-call function: checks dtypes, shapes and layouts itself,
            # None for anything else (and once the executable was closed)
            out = last.fast(args)
            if out is not None:
                return out[0] if last.single else unflatten(last.out_tree, out)
        fast_key = None
        if not kwargs and not self.static_argnums and current_trace() is None:
            keyed = call_key(args)  # plain arrays and Python numbers only
            if keyed is not None:
                fast_key = keyed[0]
                out = self._by_shapes(fast_key, args, keyed[1])
                if out is not _MISS:
                    return out
        if current_trace() is not None:  # nested jit: inline into the outer trace
            return self.fn(*args, **kwargs)
        entry, leaves = self._entry(args, kwargs)
        alias: tuple = ()
        if entry.writes:  # a written argument passed twice, or overlapping another one
            alias = argument_aliases(self.name, leaves, entry.writes)
            if alias:
                entry = self._alias_entry(args, kwargs, alias)
        results = self._run(entry, leaves)
        if fast_key is not None and not alias and entry.executable is not None:
            entry.fast = self._fast_function(entry, fast_key)
            self._fast[fast_key] = self._last = entry
        if entry.writes:
            results = write_back(self.name, entry.writes, leaves, results)
        return unflatten(entry.out_tree, results)

    def _by_shapes(self, key: tuple, args: tuple, arrays: tuple) -> Any:
        """The call run by the entry of call key ``key`` (:func:`~accy.frontend.arg_keys.
        call_key`; ``arrays``: its arrays), made the latest; ``_MISS`` when there is none or
        the call needs the ordinary path."""
        entry, out = self._fast.get(key), None
        if entry is not None and entry.writes:  # fast only: an ordinary run needs write_back
            entry.fast = self._fast_function(entry, key)  # rebuilt after a close
            out = entry.fast(args)
        elif entry is not None:
            out = entry.executable(*arrays)
            entry.fast = self._fast_function(entry, key)  # rebuilt after a close
        if out is None:
            return _MISS
        self._last = entry
        return unflatten(entry.out_tree, list(out))

    @staticmethod
    def _fast_function(entry: _Entry, key: tuple) -> Any:
        """``entry``'s small-call function for calls keyed ``key``: its executable's, with
        the copy into written arguments (:func:`~accy.frontend.written_fast.fast_written`)
        and the check of Python numbers (:func:`~accy.frontend.arg_keys.with_statics`)."""
        fast = entry.executable.fast_function()
        return with_statics(fast_written(fast, entry.writes) if entry.writes else fast, key)

    def _run(self, entry: _Entry, leaves: list[Any]) -> list[Any]:
        if self.backend == REFERENCE:
            from accy.passes.reference_eval import evaluate

            host = [np.asarray(x) for x in leaves]
            return list(evaluate(entry.module, self.name, host))
        exe = self._executable(entry)
        if any(isinstance(x, DeviceArray) for x in leaves):
            from accy.frontend.device_run import run_on_device

            dev = [asarray(x, backend=self.backend) for x in leaves]
            return list(run_on_device(exe, dev, self.backend))
        return list(exe(*[np.asarray(x) for x in leaves]))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (when enabled) for the block: a warm first call's
    imports and unpickling allocate ~10^5 objects and no cyclic garbage, and the collections
    they trigger (a full one visits every object numpy and accy made) were ~6 % of it.

    On the way out the objects the collector tracks join its oldest generation
    (``gc.freeze()`` then ``gc.unfreeze()``: list moves, no traversal), so the first
    allocation after the block does not start a young collection over all of them (~1 ms of
    a warm first call): modules, classes and the loaded program live as long as the
    process. Nothing is exempt from collection; cyclic garbage that was young is found by
    the next full collection instead of the next young one. Not done when the process has
    frozen objects of its own (``gc.freeze()`` before a fork): those stay frozen."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def jit(fn: Callable[..., Any] | None = None, *, backend: str = "cpu",
        static_argnums: int | Sequence[int] = ()) -> Any:
    """Trace-compile ``fn`` per argument signature; usable as ``@jit`` or ``@jit(...)``.

    Args:
        fn: a function of arrays written with ``accy.numpy`` and array operators.
        backend: where to compile and run (``"cpu"``, any discovered backend, or
            ``"reference"`` for the numpy IR evaluator).
        static_argnums: positions of arguments that are hashed by value instead of traced
            (Python numbers and strings are always static; a numpy array given here, such
            as an ``anp.random.key``, is hashed by its dtype, shape and bytes).

    Returns:
        a :class:`Jitted` (or a decorator making one when ``fn`` is None).
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if fn is None:
        return functools.partial(jit, backend=backend, static_argnums=nums)
    if not callable(fn):
        raise InputError(f"accy.jit expects a function, got {type(fn).__name__} {fn!r}")
    return Jitted(fn, backend=backend, static_argnums=nums)


def _trace_budget(name: str) -> Any:
    """The op-count watch of a new trace of ``name`` (:mod:`accy.frontend.trace_budget`)."""
    from accy import config
    from accy.frontend.trace_budget import TraceBudget

    return TraceBudget(name, config.trace_op_limit())


def _warn_host_random(fn: Any, name: str) -> None:
    """One :class:`~accy.errors.AccyWarning` when ``fn`` calls numpy's host random number
    generators (:mod:`accy.frontend.host_random`): their numbers are drawn once, at trace
    time, and are the same on every call."""
    from accy.frontend.host_random import host_random_uses

    uses = host_random_uses(fn)
    if uses:
        import os
        import warnings

        from accy.errors import AccyWarning

        root = os.path.dirname(os.path.dirname(__file__)) + os.sep  # the accy package
        level, frame = 1, sys._getframe(0)
        while frame is not None and frame.f_code.co_filename.startswith(root):
            frame, level = frame.f_back, level + 1  # the warning names the user's call
        code = getattr(fn, "__code__", None)
        where = f" (defined at {code.co_filename}:{code.co_firstlineno})" if code else ""
        warnings.warn(
            f"accy.jit {name}{where}: {', '.join(uses)} (numpy's host random numbers) runs once, "
            "while the function is traced: its numbers become constants of the compiled "
            "program, the same on every call (numba's njit draws new ones per call); pass "
            "random arrays in as arguments, or use accy.numpy.random with an explicit key",
            AccyWarning, stacklevel=level)
