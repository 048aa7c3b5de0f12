"""Per-matrix cache of host-built sparse layouts (ELL, SELL-C-σ) for repeated ``spmv`` calls.

Iterative solvers call ``spmv`` many times with the same matrix; rebuilding ELL / SELL on the
host costs seconds for millions of rows, so the converted arrays are kept here.

Keying (a stale layout must never be reused):

* the entry belongs to one matrix *object*: it holds a weak reference to it (the entry is
  dropped when the matrix is garbage-collected, and an ``id`` reused by another object never
  matches because the weak reference must still resolve to the same object);
* the layout parameters (format, width / C / sigma, dtype) are part of the key;
* every lookup re-checks the *content*: shape, nnz, dtypes and a hash of the CSR
  ``indptr``, ``indices`` and ``data`` bytes fed to the conversion (on the CPU backend the
  vectorized hash of :mod:`accy_kernels.layout_hash`, at memory speed; else CRC-32 +
  Adler-32, ~2.5 GB/s a core, chunks spread over a few threads). Any in-place edit
  (``A.data *= 2``, ``A.indices[...] = ...``, swapped entries, replaced arrays) changes the
  hash, so the layout is rebuilt. The check reads the CSR arrays once a call (cheaper than
  the product, which reads the padded layout); a :func:`accy_kernels.prepare_spmv` handle
  needs none.

Bounds: at most ``MAX_ENTRIES`` layouts (least recently used evicted first) and at most
``MAX_BYTES`` of cached host arrays in total; a layout larger than ``MAX_BYTES`` on its own is
not cached. The cached arrays are read-only. All operations take one lock (thread-safe);
conversions run outside it. ``clear_layout_cache()`` drops everything.
"""

from __future__ import annotations

import os
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from accy_kernels._weak_drops import WeakDrops

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "cache_info", "cached_layout", "clear_layout_cache",
           "fingerprint", "set_layout_cache_limits"]

#: at most this many cached layouts (LRU)
MAX_ENTRIES = 4
#: at most this many bytes of cached host arrays in total: 8 GiB, or the environment variable
#: ``ACCY_SPMV_LAYOUT_CACHE_BYTES`` (0 disables caching); SELL of a power-law matrix can be
#: many times its CSR size (2M rows, 47M nnz: 6.8 GB), which the call allocates anyway
MAX_BYTES = int(os.environ.get("ACCY_SPMV_LAYOUT_CACHE_BYTES", 8 << 30))

_CHUNK = 32 << 20  # bytes per checksum chunk (zlib releases the GIL on large buffers)
_lock = threading.Lock()
_entries: OrderedDict[tuple, tuple[Any, tuple, tuple, int]] = OrderedDict()
_drops = WeakDrops(_lock, _entries, lambda e: e[0])  # a dead matrix's entry goes
_stats = {"hits": 0, "misses": 0}
_pool: ThreadPoolExecutor | None = None


def _checksum(buf: memoryview) -> tuple[int, int]:
    return zlib.crc32(buf), zlib.adler32(buf)


def fingerprint(arrays: tuple[np.ndarray, ...]) -> tuple:
    """Return a content fingerprint of ``arrays``: dtype, shape and, per array, the
    memory-speed hash of :mod:`accy_kernels.layout_hash` (CPU backend), else per-chunk
    checksums (CRC-32 and Adler-32)."""
    global _pool
    from accy_kernels.layout_hash import arrays_hash

    arrays = tuple(np.ascontiguousarray(a) for a in arrays)
    meta = tuple((a.dtype.str, a.shape) for a in arrays)
    hashed = arrays_hash(arrays)
    if hashed is not None:
        return meta, hashed
    parts = []
    for a in arrays:
        raw = memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")
        parts.append([raw[i:i + _CHUNK] for i in range(0, len(raw), _CHUNK)])
    chunks = [c for p in parts for c in p]
    if len(chunks) > 1 and sum(len(c) for c in chunks) > _CHUNK:  # threads pay off
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)),
                                           thread_name_prefix="accy-layout-crc")
        sums = list(_pool.map(_checksum, chunks))
    else:
        sums = [_checksum(c) for c in chunks]
    return meta, tuple(sums)


def _nbytes(layout: tuple) -> int:
    return sum(a.nbytes for a in layout if isinstance(a, np.ndarray))


def cached_layout(A: Any, params: tuple, arrays: tuple[np.ndarray, ...],
                  build: Callable[[], tuple]) -> tuple:
    """Return ``build()`` for matrix ``A`` (whose CSR arrays are ``arrays``) and ``params``,
    reusing a cached result when ``A`` is the same object with the same content."""
    try:
        weakref.ref(A)
    except TypeError:  # not weak-referenceable: never cache
        return build()
    if MAX_BYTES <= 0 or MAX_ENTRIES <= 0:
        return build()
    key = (id(A), *params)
    fp = (tuple(A.shape), fingerprint(arrays))
    with _lock:
        _drops.purge()
        hit = _entries.get(key)
        if hit is not None and hit[0]() is A and hit[1] == fp:
            _entries.move_to_end(key)
            _stats["hits"] += 1
            return hit[2]
        _entries.pop(key, None)  # stale (mutated matrix, or a dead object's reused id)
        _stats["misses"] += 1
    layout = tuple(build())
    for a in layout:
        if isinstance(a, np.ndarray):
            a.flags.writeable = False
    size = _nbytes(layout)
    if size > MAX_BYTES:
        return layout
    entry_ref = weakref.ref(A, _drops.callback(key))
    with _lock:
        _drops.purge()
        _entries[key] = (entry_ref, fp, layout, size)
        _entries.move_to_end(key)
        total = sum(e[3] for e in _entries.values())
        while _entries and (len(_entries) > MAX_ENTRIES or total > MAX_BYTES):
            _, old = _entries.popitem(last=False)
            total -= old[3]
    return layout


def clear_layout_cache() -> None:
    """Drop every cached layout."""
    with _lock:
        _drops.purge()
        _entries.clear()


def cache_info() -> dict:
    """Return ``{"entries", "bytes", "hits", "misses"}``."""
    with _lock:
        _drops.purge()
        return {"entries": len(_entries), "bytes": sum(e[3] for e in _entries.values()),
                **_stats}


def set_layout_cache_limits(max_entries: int | None = None, max_bytes: int | None = None) -> None:
    """Change ``MAX_ENTRIES`` / ``MAX_BYTES`` (0 disables caching) and evict to fit."""
    global MAX_ENTRIES, MAX_BYTES
    with _lock:
        _drops.purge()
        if max_entries is not None:
            MAX_ENTRIES = int(max_entries)
        if max_bytes is not None:
            MAX_BYTES = int(max_bytes)
        total = sum(e[3] for e in _entries.values())
        while _entries and (len(_entries) > MAX_ENTRIES or total > MAX_BYTES):
            _, old = _entries.popitem(last=False)
            total -= old[3]
