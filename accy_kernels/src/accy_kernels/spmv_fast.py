"""The per-matrix fast path of ``spmv(A, x)`` (CSR scalar) on host-memory backends.

A small matrix's product takes a microsecond or two; the ordinary call spent 0.3-0.6 ms in
Python (argument checks, the tuning-cache lookup, the launch plan and its executable, kernel
fingerprints, argument packing). Iterative solvers call ``spmv`` with the same matrix many
times, so what depends only on the matrix is prepared once here: the loaded
``spmv.csr_scalar`` CPU rows kernel (:mod:`accy_kernels.spmv_csr_rows`: the same sums in
the same order as every other CSR path, its straight-line width chosen from the matrix's
row lengths, the structure check of :mod:`accy_kernels.spmv_csr_check` fused in, block by
block), bound with the addresses of ``A``'s ``indptr``, ``indices`` and ``data``. A call
then only checks ``x``, allocates ``y`` and makes one native call
(:func:`accy_backend_cpu.native_call.bind_native_call`: no ctypes; the GIL is released
around kernels of ``RELEASE_ENTRIES`` stored entries or more). Matrices of
``SPLIT_ENTRIES`` rows + entries or more are split over the pool's native workers from that
native call (``works=``; while another launch holds the pool a call runs whole on its own
thread). Interpreters without native calls use the backend's ``bind_launch`` instead, one
thread at a time per matrix (another thread takes the ordinary path).

The rule that keeps this from ever using stale data: **the prepared launch reads the
matrix's own arrays in place**; nothing is converted or copied. It is prepared only when
``A`` is a scipy CSR matrix whose ``indptr`` and ``indices`` are C-contiguous int32 and
whose ``data`` is C-contiguous of ``x``'s dtype (float32 or float64), and every call checks
that ``A`` is the same object holding the very same array objects and shape (``A.indptr is
...``). An in-place edit of the values or the structure (``A.data *= 2``) is therefore read
by the next call as it is, and a replaced array (``A.data = ...``, ``A.sort_indices()`` on a
copy, ``A.astype``) or a shape change falls back to the ordinary path, which prepares the
matrix again. No checksum is needed, since no derived copy exists. Every call checks the
structure in the kernel before the product of each block of rows (row pointers
non-decreasing within the stored entries, columns within ``x``), so an in-place edit that
breaks it raises :class:`~accy.errors.InputError` naming the position, never reads outside
the arrays. (Editing ``A``'s arrays from another thread *during* a call is a data race, as
for any numpy function.)

Everything else takes the ordinary path, unchanged: another format, variant, candidate or
option; a matrix needing conversion (COO, int64 indices, another dtype than ``x``); an
``x`` that is not a contiguous 1-D array of the matrix's dtype and length; a tuning-cache
winner other than the default ``csr_scalar``; backends with device memory or a loop
budget; calls inside ``capture_calls``/``capture_plans`` (family sweeps). The tuning cache
is consulted again whenever its file changes (its environment variables, mtime or size).

Entries hold a weak reference to the matrix (dropped with it; a reused ``id`` never
matches) and at most ``MAX_ENTRIES`` are kept (least recently used first out).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np
from accy.families.runner import _CAPTURE

from accy_kernels import spmv_bound
from accy_kernels._dispatch import _LAST, _OPEN
from accy_kernels._weak_drops import WeakDrops
from accy_kernels.spmv_bound import RELEASE_ENTRIES, native_cpu, split_work

__all__ = ["MAX_ENTRIES", "clear_prepared", "fast_spmv", "prepared_count"]

#: prepared matrices kept (least recently used evicted first)
MAX_ENTRIES = 16
_FLOATS = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
_I32 = np.dtype(np.int32)
_lock = threading.Lock()
_entries: OrderedDict[tuple, _Prepared] = OrderedDict()
_empty = np.empty
_ndarray = np.ndarray


#: the latest prepared entry used (any thread): a solver's repeated calls with one matrix
#: find it without building the cache key (still checked against the matrix every call;
#: threads alternating matrices only miss it and look the key up). Cleared when its matrix
#: is collected (the entry's weak-reference callback), forgotten or cleared, so it never
#: keeps a dropped matrix's arrays alive. (A module global: a ``threading.local``
#: attribute cost ~0.1 us a call.)
_recent: Any = None
_drops = WeakDrops(_lock, _entries, lambda e: e.ref)


#: seconds a tuning-cache token is trusted before the file is looked at again
TOKEN_SECONDS = 0.02
_paths: dict[tuple, str] = {}
_environ = os.environ
_stat = os.stat
_clock = time.monotonic
_until = -1.0  # the clock's time until which _tok is trusted
_tok: tuple | None = None


def _tuning_token() -> tuple:
    """What identifies the tuning cache's present content: its environment variables and the
    file's (mtime, size), looked at again at most every ``TOKEN_SECONDS`` (a ``stat`` costs
    about as much as the whole product of a small matrix) — a change sends the next call
    through the dispatcher again. Only the variant choice depends on it, never the result."""
    if _clock() >= _until:
        _refresh()
    return _tok


def _refresh() -> None:
    """Read the tuning-cache token again; an unchanged one keeps its identity (the fast
    path compares tokens with ``is`` first)."""
    global _tok, _until
    token = _read_token()
    if token != _tok:
        _tok = token
    _until = _clock() + TOKEN_SECONDS


def _read_token() -> tuple:
    env = (_environ.get("ACCY_TUNING_CACHE"), _environ.get("ACCY_CACHE_DIR"))
    path = _paths.get(env)
    if path is None:
        from accy import config

        path = _paths[env] = config.tuning_cache_path_str()
    try:
        st = _stat(path)
        return env, st.st_mtime_ns, st.st_size
    except OSError:
        return env, 0, 0


class _Prepared:
    """One matrix's bound launches (see the module docstring)."""

    __slots__ = ("ref", "indptr", "indices", "data", "shape", "dtype", "n_rows", "pointers",
                 "launch", "err", "call", "starts", "split", "lock", "token", "choice", "backend",
                 "free", "n_cols", "x_strides", "note", "acquire", "release", "__weakref__")

    def __init__(self, A: Any, backend: Any, be: Any, token: tuple, choice: tuple,
                 key: tuple) -> None:
        from accy.families.runner import _load
        from accy.runtime.fast_call import array_address

        from accy_kernels.spmv_csr_check import check_host
        from accy_kernels.spmv_csr_rows import block_starts, rows_kernel_for, rows_scalars

        self.indptr, self.indices, self.data = A.indptr, A.indices, A.data
        self.shape = A.shape
        self.n_rows, n_cols = A.shape
        self.dtype = A.data.dtype
        self.backend = backend
        self.token, self.choice = token, choice
        self.note = choice[3]  # what _dispatch.note_choice records
        self.lock = threading.Lock()
        self.acquire, self.release = self.lock.acquire, self.lock.release
        self.free = key[2]
        # what a call's x must have: n_cols elements, 1-D and contiguous (strides of one
        # element: 1-D; None: any strides for at most one element, checked by ndim)
        self.n_cols = n_cols
        self.x_strides = (self.dtype.itemsize,) if n_cols > 1 else None
        size = min(A.indices.size, A.data.size)
        check_host(A.indptr, A.indices, n_cols, size)  # as the ordinary path would raise
        n_rows = self.n_rows
        # the CPU rows kernel, its structure check fused in (checked every call)
        rows = _load(be, rows_kernel_for(_FLOATS[self.dtype], A.indptr))
        stored = int(A.indptr[-1])
        # the blocks of rows, balanced by nonzeros (ours, read-only: any partition of the
        # rows is correct, so an in-place edit of A.indptr later only unbalances them)
        self.starts = starts = block_starts(A.indptr)
        starts.flags.writeable = False
        blocks = starts.size - 1
        arrays = [array_address(a) if a.size else 0
                  for a in (starts, A.indptr, A.indices, A.data)]
        scalars = rows_scalars(n_rows, n_cols, size)
        self.call = self.launch = self.pointers = self.err = self.split = None
        work = split_work(n_rows, stored) if n_rows + stored >= spmv_bound.SPLIT_ENTRIES \
            else None
        if native_cpu(be):  # reentrant: any thread, any time; split over the pool's native
            from accy_backend_cpu.native_call import bind_native_call  # workers from ``work``

            self.call = bind_native_call(be, [
                (rows, blocks, scalars, ["err", ("arg", 0), *arrays, ("arg", 1)]),
            ], release_gil=stored >= RELEASE_ENTRIES, works=[work])
        else:  # the backend's bound launch, one call at a time (the lock)
            self.err = ctypes.c_int32(-1)
            self.pointers, self.launch = be.bind_launch(
                rows, _geometry(blocks, 1), scalars, work=work)
            self.pointers[0] = ctypes.addressof(self.err)
            self.pointers[2:6] = arrays
            self.split = _split(self, array_address)
        drop = _drops.callback(key)

        def collected(ref: Any) -> None:  # A died: drop the entry, and the recent one
            global _recent
            if _recent is not None and _recent.ref is ref:
                _recent = None
            drop(ref)

        self.ref = weakref.ref(A, collected)

    def bad_structure(self) -> None:
        """Raise the InputError naming what the check kernel flagged in ``A``'s arrays."""
        from accy.errors import InternalError

        from accy_kernels.spmv_csr_check import check_host

        check_host(self.indptr, self.indices, self.shape[1],
                   min(self.indices.size, self.data.size))
        raise InternalError("spmv: the structure check flagged a tile that the host finds "
                            "well-formed")


def _geometry(groups: int, wg: int) -> Any:
    from accy.backend import Geometry

    return Geometry(groups, wg)


def _backend_key(backend: Any) -> Any:
    return backend if isinstance(backend, str) else id(backend)


def _preparable(A: Any, be: Any) -> bool:
    """Whether ``A`` can be bound in place on ``be`` (see the module docstring)."""
    from accy.families import host_like, loop_budget

    if getattr(A, "format", None) != "csr" or not hasattr(be, "bind_launch"):
        return False
    if not host_like(be) or loop_budget(be) is not None:
        return False
    arrays = (A.indptr, A.indices, A.data)
    if not all(isinstance(a, np.ndarray) and a.ndim == 1 and a.flags.c_contiguous
               for a in arrays):
        return False
    if A.indptr.dtype != _I32 or A.indices.dtype != _I32 or A.data.dtype not in _FLOATS:
        return False
    return A.indptr.size == A.shape[0] + 1 and A.indices.size >= A.indptr[-1] >= 0 \
        and A.data.size >= A.indptr[-1] and max(A.shape) < 2**31 - 1


def _prepare(A: Any, x: np.ndarray, backend: Any, free: bool, key: tuple) -> _Prepared | None:
    """Resolve the dispatch as the ordinary path would and bind the launch, or None where
    the fast path does not apply to this matrix."""
    from accy.families import backend_object

    from accy_kernels._dispatch import tuned
    from accy_kernels._families import FAMILIES

    be = backend_object(backend)
    if not _preparable(A, be):
        return None
    _refresh()
    token = _tok
    kwargs = {"A": A, "x": x, "dtype": _FLOATS[A.data.dtype], "options": {}}
    var, lookup = tuned("spmv", be, kwargs, None if free else ("csr_scalar", "csr_vector"))
    if var is not None and var.name != "csr_scalar":
        return None  # the tuning cache picked another variant: the ordinary path runs it
    fam = next(f for f in FAMILIES if f.name == "spmv")
    scalar = fam.variant("csr_scalar")
    cand = lookup(scalar)
    src = "cache" if cand is not None else "default"
    cand = cand or scalar.candidates[0]
    choice = ("spmv.csr_scalar", cand.label(), "default", src)  # as _dispatch.note_choice
    return _Prepared(A, backend, be, token, (cand, cand.workgroup_size, src, choice), key)


def fast_spmv(A: Any, x: Any, backend: Any, free: bool) -> np.ndarray | None:
    """Return ``A @ x`` through the prepared launch, or None when the call must take the
    ordinary path (see the module docstring). ``free``: the format was left unset, so a
    tuning-cache winner of another format takes precedence.

    Raises:
        InputError: ``A``'s row pointers or column indices are out of range (the position
            named).
    """
    if type(x) is not _ndarray or _CAPTURE.get() is not None \
            or _OPEN[0] and _LAST.capture is not None:
        return None
    e = _recent
    if e is None or e.ref() is not A or e.backend is not backend and e.backend != backend \
            or e.free is not free:
        e = _entry(A, x, backend, free)
        if e is None:
            return None
    if A.indptr is not e.indptr or A.indices is not e.indices or A.data is not e.data \
            or A.shape != e.shape:
        _forget(e)  # replaced arrays or a new shape: prepare again next time
        return None
    if x.dtype is not e.dtype and x.dtype != e.dtype or x.size != e.n_cols \
            or (x.strides != e.x_strides if e.x_strides is not None else x.ndim != 1):
        return None
    if _clock() >= _until:
        _refresh()
    if _tok is not e.token and _tok != e.token:
        _forget(e)
        return None
    y = _empty(e.n_rows, e.dtype)
    call = e.call
    if call is not None:
        if call(y, x, _FAIL) is not y:
            e.bad_structure()
    else:  # no native calls: the bound launch
        done = e.split(y, x)
        if done is None:  # another thread holds it: the ordinary path
            return None
        if not done:
            e.bad_structure()
    _LAST.choice = e.note
    return y


_FAIL = object()  # what a native call returns when the structure check failed


def _entry(A: Any, x: np.ndarray, backend: Any, free: bool) -> _Prepared | None:
    """The prepared entry of ``A`` (prepared now if needed), made this thread's recent one;
    None where the fast path does not apply."""
    key = (id(A), _backend_key(backend), free)
    e = _entries.get(key)
    if e is None or e.ref() is not A or e.backend != backend:
        e = _prepare(A, x, backend, free, key)
        if e is None:  # not bound in place (a conversion is needed): nothing is kept
            return None
        with _lock:
            _drops.purge()
            _entries[key] = e
            _entries.move_to_end(key)
            while len(_entries) > MAX_ENTRIES:
                _entries.popitem(last=False)
    global _recent
    _recent = e
    return e


def _split(e: _Prepared, address: Any) -> Any:
    """``split(y, x)``: ``e``'s bound launch (the checked product, split over the pool's
    threads, for interpreters without native calls) into ``y``: True, False when the
    structure check failed, None when another thread holds it (the ordinary path then
    runs)."""
    acquire, release = e.acquire, e.release
    err, pointers, launch = e.err, e.pointers, e.launch

    def split(y: np.ndarray, x: np.ndarray) -> bool | None:
        if not acquire(False):
            return None
        try:
            err.value = -1
            pointers[1], pointers[6] = address(y), address(x)
            launch()
            return err.value == -1
        finally:
            release()

    return split


def _forget(e: _Prepared) -> None:
    """Drop prepared entry ``e`` (its matrix changed, or the tuning cache did)."""
    global _recent
    _recent = None
    with _lock:
        for key, value in list(_entries.items()):
            if value is e:
                del _entries[key]


def clear_prepared() -> None:
    """Drop every prepared matrix."""
    global _recent
    _recent = None
    with _lock:
        _drops.purge()
        _entries.clear()


def prepared_count() -> int:
    """How many matrices hold a prepared launch (tests, diagnostics)."""
    with _lock:
        _drops.purge()
        return len(_entries)
