"""``random.*`` variants: counter-based streams turned into uniform, normal and integer values.

A stream is keyed by ``(seed, offset)``. Element ``i`` of a request is a pure function of
``i``, the seed and the offset, never of the launch geometry, so every backend and every
work-group size produce the same numbers. With ``W`` words per block (Philox4x32: 4,
Threefry2x32: 2, Threefry4x32: 4, Squares: 1), block ``b = offset + u`` (64-bit) encrypts
counter ``(lo32(b), hi32(b), 0, 0)`` under key ``(lo32(seed), hi32(seed), 0, 0)``; Squares
uses counter ``b`` and the key :func:`squares.derive_key` ``(seed)``. Each work-item makes the
blocks for a fixed number of output *units* (a unit uses 1 word for f32/u32/integers,
2 words for f64, twice that for a Box–Muller pair) and consumes the words in order; on
host-memory backends a launched work-item runs :data:`HOST_ITEMS` such stream items in a
loop the CPU target vectorizes (:func:`host_items`), with the same values.

Conversions: f32 ``(w >> 8) * 2**-24`` in [0, 1); f64 ``((a >> 5) * 2**26 + (b >> 6)) *
2**-53`` in [0, 1) (53 bits, as numpy); normal: Box–Muller (Box & Muller, Ann. Math. Statist.
29, 1958) ``sqrt(-2 ln(1 - u1)) * (cos, sin)(2 pi u2)``.

Integers in ``[low, high)``, ``s = high - low <= 2**32``: Lemire's nearly-divisionless
rejection (D. Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 29(1),
2019): with the 64-bit product ``w * s = hi * 2**32 + l``, the value is ``low + hi`` unless
``l < t = (2**32 - s) mod s`` (``t`` is computed on the host), in which case the word is
redrawn, so every value has probability exactly ``1/s``. ``s = 2**32`` takes ``w`` as is.
The ``a``-th redraw (``a = 1, 2, ...``) of the unit using word ``j`` of block ``b`` is word
``j`` of the block at counter ``2**63 | ((b + a * G) mod 2**63)`` (``G`` = 0x9E3779B97F4A7C15,
the 64-bit golden ratio), a counter the main stream never uses (its blocks stay below
``2**63``), so redraws are a pure function of ``(seed, offset, element)`` as well and the
stream stays bit-identical on every backend. A unit gives up after
:data:`MAX_DRAWS` draws (probability below ``2**-64``; it then keeps ``low + hi``).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from accy.families import Plan
from accy.kernel import E, KernelBuilder, call, where

from accy_kernels._common import ceil_div, groups_for
from accy_kernels.random import philox, squares, threefry_nx32

__all__ = ["ALGORITHMS", "HOST_ITEMS", "bijection_kernel", "host_items", "run_distribution",
           "stream_kernel", "stream_position"]

#: draws per integer (the first plus redraws) before the rejection loop gives up
MAX_DRAWS = 64
#: odd 64-bit constant spreading the redraw counters, as a signed i64
_GOLDEN = 0x9E3779B97F4A7C15 - (1 << 64)

ALGORITHMS = {
    "philox4x32-10": ("philox", 4, 10), "philox4x32-7": ("philox", 4, 7),
    "threefry2x32-20": ("threefry", 2, 20), "threefry2x32-13": ("threefry", 2, 13),
    "threefry4x32-20": ("threefry", 4, 20), "threefry4x32-13": ("threefry", 4, 13),
    "squares": ("squares", 1, 4),
}


def _block(kb: KernelBuilder, algorithm: str, b: E, seed_lo: E, seed_hi: E, sq_key: E):
    kind, width, rounds = ALGORITHMS[algorithm]
    if kind == "squares":
        return [squares.emit(kb, b, sq_key)]
    lo = kb.let(kb.fresh("blo"), (b & 0xFFFFFFFF).cast("u32"))
    hi = kb.let(kb.fresh("bhi"), ((b >> 32) & 0xFFFFFFFF).cast("u32"))
    zero = kb.const(0, "u32")
    ctr = [lo, hi, zero, zero][:width]
    if kind == "philox":
        return philox.emit(kb, ctr, [seed_lo, seed_hi], rounds)
    return threefry_nx32.emit(kb, ctr, [seed_lo, seed_hi, zero, zero][:width], rounds)


def _unit_words(dist: str, dtype: str) -> tuple[int, int]:
    """(words per unit, outputs per unit)."""
    wpv = 2 if dtype == "f64" else 1
    return (2 * wpv, 2) if dist == "normal" else (wpv, 1)


def _uniform(words: list[E], dtype: str) -> E:
    if dtype == "f32":
        return (words[0] >> 8).cast("f32") * (2.0**-24)
    a = (words[0] >> 5).cast("f64")
    b = (words[1] >> 6).cast("f64")
    return (a * 67108864.0 + b) * (2.0**-53)


def _values(kb: KernelBuilder, dist: str, dtype: str, words: list[E], p: list[E]) -> list[E]:
    """Outputs of one unit; ``p`` are the scalar parameters (low, scale or range)."""
    if dist == "uniform":
        return [_uniform(words, dtype) * p[1] + p[0]]
    if dist == "normal":
        half = len(words) // 2
        u1, u2 = _uniform(words[:half], dtype), _uniform(words[half:], dtype)
        rad = kb.let(kb.fresh("r"), call("sqrt", call("log", 1.0 - u1) * -2.0))
        ang = kb.let(kb.fresh("a"), u2 * (2.0 * math.pi))
        return [rad * call("cos", ang) * p[1] + p[0], rad * call("sin", ang) * p[1] + p[0]]
    if dist == "integers":
        off = where_full(p[1], words[0])
        return [p[0] + off.cast(dtype)] if dtype != "u32" else [p[0] + off]
    return [words[0]]  # bits


def _lemire(kb: KernelBuilder, algorithm: str, words: list[E], b: E, span: E, thresh: E,
            keys: tuple[E, E, E]) -> list[E]:
    """The accepted words of a work-item's integer units, unit ``j`` using word ``j`` of
    block ``b`` (see the module docstring): each redrawn while ``lo32(word * span) <
    thresh``, at most :data:`MAX_DRAWS` draws in all. A redraw block serves every rejected
    unit of the work-item at once (unit ``j`` takes its word ``j``)."""
    ws = [kb.let(kb.fresh("w"), w) for w in words]
    lows = [kb.let(kb.fresh("l"), w * span) for w in ws]

    def rejected() -> E:
        out = lows[0] < thresh
        for low in lows[1:]:
            out = out | (low < thresh)
        return out

    def redraw(a: E) -> None:
        with kb.if_(rejected()):
            spread = (b + a.cast("i64") * _GOLDEN) & ((1 << 63) - 1)
            r = kb.let(kb.fresh("rb"), spread | (-(1 << 63)))
            fresh = _block(kb, algorithm, r, *keys)
            for j, (w, low) in enumerate(zip(ws, lows, strict=True)):
                with kb.if_(low < thresh):
                    kb.assign(w, fresh[j % len(fresh)])
                    kb.assign(low, w * span)

    redraw(kb.const(1, "i32"))  # the first redraw inline: the loop only runs when it fails
    more = where(rejected(), kb.const(MAX_DRAWS, "i32"), kb.const(2, "i32"))
    with kb.for_(kb.fresh("draw"), 2, more) as a:
        redraw(a)
    return ws


def where_full(span: E, word: E) -> E:
    """``mulhi(word, span)``, or ``word`` itself when ``span`` is 0 (meaning 2**32)."""
    return where(span == 0, word, call("mulhi", word, span))


#: stream work-items each host-memory work-item runs in a loop (:func:`host_items`)
HOST_ITEMS = 16


def host_items(backend, dist: str) -> int:
    """Stream work-items per launched work-item: :data:`HOST_ITEMS` for ``uniform`` and
    ``bits`` on a host-memory backend (an unguarded inner loop over consecutive blocks,
    which the loop vectorizer runs across SIMD lanes: 16M Philox f32 uniforms took 0.3x the
    CPU time of one block per work-item), else 1 (``integers``: a data-dependent rejection
    loop; ``normal``: its libm calls would not vectorize, and the tail's scalar path must
    give the same bits)."""
    from accy.families import host_like

    return HOST_ITEMS if dist in ("uniform", "bits") and host_like(backend) else 1


@functools.cache
def stream_kernel(algorithm: str, dist: str, dtype: str, workgroup_size: int = 256,
                  items: int = 1):
    """Buffers (out: dtype); scalars offset, sq_key (i64, first: 8-byte aligned), n (i32),
    seed_lo, seed_hi (u32), then p0, p1 (dtype, or low: dtype, span: u32 and the rejection
    threshold ``(2**32 - span) mod span``: u32 for integers).

    ``items > 1``: work-item ``g`` runs stream items ``g * items ... g * items + items - 1``
    (the blocks and outputs ``items`` one-item work-items would make) in a loop; when all of
    them are in range the loop has no guards, so LLVM vectorizes it across blocks (the
    32x32->64-bit multiplies as ``vpmuludq``, the conversions and the interleaved stores of
    the 4 words per block). The values are the same for every ``items``.
    """
    _, width, _ = ALGORITHMS[algorithm]
    wpu, opu = _unit_words(dist, dtype)
    units = max(1, width // wpu)
    blocks = ceil_div(wpu * units, width)
    kb = KernelBuilder(f"random_{algorithm.replace('-', '_')}_{dist}_{dtype}_wg{workgroup_size}"
                       + (f"_x{items}" if items > 1 else ""), workgroup_size)
    out = kb.buffer("out", dtype, "write")
    offset, sq_key = kb.scalar("offset", "i64"), kb.scalar("sq_key", "i64")
    n = kb.scalar("n", "i32")
    seed_lo, seed_hi = kb.scalar("seed_lo", "u32"), kb.scalar("seed_hi", "u32")
    p = [kb.scalar("p0", dtype), kb.scalar("p1", "u32" if dist == "integers" else dtype)]
    thresh = kb.scalar("thresh", "u32") if dist == "integers" else None
    per_item = units * opu

    def item(gi: E, guarded: bool) -> None:
        first = kb.let(kb.fresh("first"), gi * per_item)
        words: list[E] = []
        block_of: list[E] = []
        for k in range(blocks):
            b = kb.let(kb.fresh("b"), offset + (gi.cast("i64") * blocks + k))
            fresh = _block(kb, algorithm, b, seed_lo, seed_hi, sq_key)
            words += fresh
            block_of += [b] * len(fresh)
        if thresh is not None:  # one word per unit, one block: redraw rejected (Lemire)
            words = _lemire(kb, algorithm, words[:units], block_of[0], p[1], thresh,
                            (seed_lo, seed_hi, sq_key))
        for u in range(units):
            vals = _values(kb, dist, dtype, words[u * wpu:(u + 1) * wpu], p)
            for v, val in enumerate(vals):
                idx = first + (u * opu + v)
                if not guarded:
                    kb.store(out, idx, val)
                    continue
                with kb.if_(idx < n):
                    kb.store(out, idx, val)

    g = kb.global_id()
    if items == 1:
        with kb.if_(g * per_item < n):
            item(g, True)
        return kb.build()
    start = kb.let("start", g.cast("i64") * (items * per_item))
    n64 = n.cast("i64")
    with kb.if_(start + items * per_item <= n64):
        with kb.for_("j", 0, items) as j:
            item(kb.let("gi", g * items + j), False)
    with kb.else_():
        with kb.if_(start < n64):
            with kb.for_("j", 0, items) as j:
                gi = kb.let("gi", g * items + j)
                with kb.if_(gi * per_item < n):
                    item(gi, True)
    return kb.build()


def rejection_threshold(span: int) -> int:
    """Lemire's ``t = (2**32 - s) mod s`` for span ``s`` (0 encodes 2**32: no rejection)."""
    return 0 if span == 0 else ((1 << 32) - span) % span


def items_per_request(algorithm: str, dist: str, dtype: str) -> int:
    """Outputs one work-item writes (the stream position advances by blocks per item)."""
    _, width, _ = ALGORITHMS[algorithm]
    wpu, opu = _unit_words(dist, dtype)
    return max(1, width // wpu) * opu


def stream_position(algorithm: str, dist: str, dtype: str, start: int) -> tuple[int, int]:
    """Where element ``start`` of a request lies in the stream: ``(blocks, skip)``.

    A request at ``offset + blocks`` whose first ``skip`` outputs are dropped continues a
    request at ``offset`` from its element ``start`` bit for bit (requests split into parts,
    e.g. Dask chunks, give the single request's numbers).
    """
    _, width, _ = ALGORITHMS[algorithm]
    wpu, _ = _unit_words(dist, dtype)
    blocks = ceil_div(wpu * max(1, width // wpu), width)
    per_item = items_per_request(algorithm, dist, dtype)
    return (start // per_item) * blocks, start % per_item


def run_distribution(backend, algorithm: str, dist: str, dtype: str, size: int, seed: int,
                     offset: int, p0, p1, workgroup_size: int = 256) -> np.ndarray:
    """Return ``size`` values of ``dist`` from the stream ``(seed, offset)``."""
    per_item = items_per_request(algorithm, dist, dtype)
    items = host_items(backend, dist)
    plan = Plan(f"random.{algorithm}")
    out = plan.output(dtype, size)
    kernel = stream_kernel(algorithm, dist, dtype, workgroup_size, items)
    seed &= (1 << 64) - 1
    p1_dtype = "u32" if dist == "integers" else dtype
    extra = [("u32", rejection_threshold(p1))] if dist == "integers" else []
    work_items = ceil_div(ceil_div(size, per_item), items)
    plan.launch(kernel, groups_for(work_items, workgroup_size), [out], [
        ("i64", offset), ("i64", squares.signed_key(squares.derive_key(seed))), ("i32", size),
        ("u32", seed & 0xFFFFFFFF), ("u32", seed >> 32), (dtype, p0), (p1_dtype, p1), *extra])
    (result,) = plan.run(backend)
    return result


@functools.cache
def bijection_kernel(algorithm: str, workgroup_size: int = 256):
    """The raw bijection: buffers (out: u32 (N*W), ctr: u32 (N*W), key: u32 (N*K)); scalar N."""
    kind, width, rounds = ALGORITHMS[algorithm]
    kw = 2 if kind == "philox" else width
    kb = KernelBuilder(f"bijection_{algorithm.replace('-', '_')}_wg{workgroup_size}",
                       workgroup_size)
    out = kb.buffer("out", "u32", "write")
    ctr, key = kb.buffer("ctr", "u32", "read"), kb.buffer("key", "u32", "read")
    n = kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < n):
        c = [kb.let(f"c{i}", ctr[g * width + i]) for i in range(width)]
        k = [kb.let(f"k{i}", key[g * kw + i]) for i in range(kw)]
        emit = philox.emit if kind == "philox" else threefry_nx32.emit
        for i, w in enumerate(emit(kb, c, k, rounds)):
            kb.store(out, g * width + i, w)
    return kb.build()


def run_bijection(backend, algorithm: str, counter: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Apply the raw bijection to rows of ``counter`` (N, W) with ``key`` rows (N, K)."""
    n, width = counter.shape
    plan = Plan(f"random.{algorithm}.bijection")
    out = plan.output("u32", n * width)
    c, k = plan.param(counter, "u32"), plan.param(key, "u32")
    plan.launch(bijection_kernel(algorithm), groups_for(n, 256), [out, c, k], [("i32", n)])
    (result,) = plan.run(backend)
    return result.reshape(n, width)
