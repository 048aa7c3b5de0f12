"""A content hash of host arrays at memory speed, for the layout cache's per-call check.

The ELL/SELL layout cache (:mod:`accy_kernels._layout_cache`) must see every change of a
matrix's CSR arrays between calls; CRC-32 + Adler-32 read them at ~2.5 GB/s, slower than the
product itself (a SELL product of a small matrix took a fifth of the time of its checksum).
This hash is a kernel on the CPU backend, vectorized by LLVM (8 lanes of 32-bit words with
AVX2): work-item ``t`` of ``LANES`` takes the tiles ``t, t + LANES, ...`` of ``TILE`` words,
and each of two independent sums adds, per 32-bit word ``w`` at position ``j``, a mixed value
of ``(w, j)`` — ``m = (w ^ (j * K1 + K2)) * K3; m ^= m >> 15; m *= K4`` (MurmurHash3's
finalizer, Appleby 2011, on the word and its position) — so changing, swapping or moving
any words changes a sum except with probability about ``2**-32`` per sum (two sums of
different constants per work-item: 8 words of hash per array).

It runs as one native call (:mod:`accy_backend_cpu.native_call`) on the calling thread
(the GIL released from ``RELEASE_WORDS``); :func:`array_hash` returns None where that is
unavailable (the caller keeps its checksum).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np
from accy.kernel import KernelBuilder

__all__ = ["LANES", "RELEASE_WORDS", "TILE", "array_hash", "arrays_hash", "hash_kernel"]

#: work-items (each keeps two sums)
LANES = 4
#: 32-bit words per tile
TILE = 4096
_MAX_WORDS = 2**31 - 1 - TILE * LANES
_KEYS = ((0x9E3779B9, 0x7F4A7C15, 0x85EBCA6B, 0xC2B2AE35),
         (0x27D4EB2F, 0x165667B1, 0xCC9E2D51, 0x1B873593))
#: words from which the GIL is released around the hash (below, releasing costs more)
RELEASE_WORDS = 1 << 18
_lock = threading.Lock()
_bound: dict[int, Any] = {}  # array count -> (keeping the GIL, releasing it) or None


@functools.cache
def hash_kernel():
    """Buffers (out u32 write, words u32, meta i32: word counts); scalars slot (which count
    of ``meta``), base (where in ``out`` this array's ``2 * LANES`` words go); one
    work-group of LANES work-items."""
    kb = KernelBuilder(f"layout_hash_wg{LANES}", LANES)
    out = kb.buffer("out", "u32", "write")
    words, meta = kb.buffer("words", "u32", "read"), kb.buffer("meta", "i32", "read")
    slot, base = kb.scalar("slot", "i32"), kb.scalar("base", "i32")
    t = kb.global_id()
    n = kb.let("n", meta[slot])
    sums = []
    for k, (k1, k2, k3, k4) in enumerate(_KEYS):
        sums.append((kb.let(f"h{k}", kb.const(0, "u32")), k1, k2, k3, k4))
    with kb.for_("tile", t * TILE, n, LANES * TILE) as first:
        with kb.for_("j", first, _min(first + TILE, n)) as j:
            w = kb.let("w", words[j])
            ju = kb.let("ju", j.cast("u32"))
            for h, k1, k2, k3, k4 in sums:
                m = kb.let(kb.fresh("m"), (w ^ (ju * _u32(kb, k1) + _u32(kb, k2))) *
                           _u32(kb, k3))
                m2 = kb.let(kb.fresh("m"), (m ^ (m >> 15)) * _u32(kb, k4))
                kb.assign(h, h + m2)
    for k, (h, *_) in enumerate(sums):
        kb.store(out, base + t * 2 + k, h)
    return kb.build()


def _u32(kb: KernelBuilder, v: int) -> Any:
    return kb.const(v, "u32")


def _min(a: Any, b: Any) -> Any:
    from accy.kernel import call

    return call("min", a, b)


def _calls(count: int) -> tuple[Any, Any] | None:
    """The bound native calls ``f(out, words_0, ..., words_{count-1}, meta, fail)``
    (keeping the GIL, releasing it) hashing ``count`` arrays, or None (no native calls)."""
    got = _bound.get(count)
    if got is not None or count in _bound:
        return got
    with _lock:
        if count not in _bound:
            _bound[count] = _bind(count)
    return _bound[count]


def _bind(count: int) -> tuple[Any, Any] | None:
    try:
        from accy.families import backend_object
        from accy.families.runner import _load

        from accy_kernels.spmv_bound import native_cpu

        be = backend_object("cpu")
        if not native_cpu(be):
            return None
        from accy_backend_cpu.native_call import bind_native_call

        kernel = _load(be, hash_kernel())
        launches = [(kernel, 1, [("i32", i), ("i32", 2 * LANES * i)],
                     [("arg", 0), ("arg", 1 + i), ("arg", 1 + count)]) for i in range(count)]
        return bind_native_call(be, launches, False), bind_native_call(be, launches, True)
    except Exception:  # no CPU backend here: the caller's checksum stays
        return None


_U32 = np.dtype(np.uint32)


def arrays_hash(arrays: tuple[np.ndarray, ...]) -> bytes | None:
    """The hash of each array's bytes (C-contiguous, whole 32-bit words), in one native
    call, as one bytes object; None where native calls are unavailable, an array does not
    fit, or there are more than 8 arrays."""
    count = len(arrays)
    if not 0 < count <= 8:
        return None
    words, sizes = [], []
    for a in arrays:
        nbytes = a.nbytes
        if nbytes % 4 or nbytes // 4 > _MAX_WORDS or not a.flags.c_contiguous:
            return None
        words.append(a.reshape(-1).view(_U32) if nbytes else _ONE)
        sizes.append(nbytes // 4)
    calls = _calls(count)
    if calls is None:
        return None
    out = np.empty(2 * LANES * count, _U32)
    calls[sum(sizes) >= RELEASE_WORDS](out, *words, np.array(sizes, np.int32), None)
    return out.tobytes()


def array_hash(a: np.ndarray) -> bytes | None:
    """:func:`arrays_hash` of one array."""
    return arrays_hash((a,))


_ONE = np.zeros(1, np.uint32)  # what an empty array's words point at (never read)
