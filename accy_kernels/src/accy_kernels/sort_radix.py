"""``sort.radix``: stable LSD radix sort for sort, argsort and sort_pairs.

Algorithm: least-significant-digit radix sort, after Merrill & Grimshaw, "High Performance
and Scalable Radix Sorting" (Parallel Processing Letters 21(2), 2011), in the tile
formulation usable on any backend. Digits are 8 bits (4 passes for 32-bit keys, 8 for 64-bit)
on device backends and 11 bits on host-memory backends (3 and 6 passes; a 2048-counter tile
row stays in L1), or the candidate option ``radix_bits``. Each pass over ``P`` tiles of
``chunk`` consecutive elements runs

1. *histogram*: one work-item per tile counts the digits of its tile (a private row of
   ``2**bits`` counters of a scratch buffer) and writes them digit-major, ``hist[d * P + t]``;
2. *prefix sum*: ``scan.reduce_then_scan`` (exclusive) over the ``2**bits * P`` counts gives
   each (digit, tile) its first output position;
3. *scatter*: each work-item walks its tile in order and writes every key (and value) to the
   next position of its digit — stable because tiles and elements are visited in order.

Host-memory backends (candidate option ``fuse_hist``, default on there) use few tiles
(``2 * cpu_count``, 4..64, of a power-of-two length) and fuse step 1 of pass ``k + 1`` into
the scatter of pass ``k``: the scatter also counts each key's next digit by the output tile
it lands in (private ``P * 2**bits`` counters per work-item) and :func:`fold_kernel` sums
them, so only the first pass reads the keys for a histogram. The outputs double as ping-pong
buffers, and on host-memory backends the remaining temporaries come from a small pool kept
between calls (first-touch page faults of fresh 64 MiB buffers cost as much as a pass).

Order-preserving key transform (applied when a digit is extracted; the stored keys keep
their original bits, so NaN payloads and zero signs survive): unsigned as is; signed: flip
the sign bit; floats: negative → flip all bits, positive → flip the sign bit, every NaN →
all ones (last, in input order), -0.0 → the key of +0.0 (equal, stable, as numpy's stable
sort). Descending inverts the key of non-NaN values, so NaN stays last.

Devices that end work-items after ``max_loop_iterations`` loop iterations (lavapipe: 65535)
get tiles short enough that a work-item's loops (``2 * 2**bits`` counter steps plus its
tile) fit (:func:`choose_chunk`); tile ends never overflow 32 bits.

argsort generates the identity permutation in the first pass and carries i32 positions,
widened to int64 by the last pass.
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np
from accy.families import (
    Candidate,
    Plan,
    clamp_tile,
    host_like,
    loop_budget,
    tile_geometry,
)
from accy.kernel import E, KernelBuilder, where

from accy_kernels._common import MAX_ELEMS, ceil_div
from accy_kernels.scan_reduce_then_scan import add_scan

__all__ = ["histogram_kernel", "order_key", "run", "scatter_kernel"]

RADIX_BITS = 8
RADIX = 1 << RADIX_BITS
WORKGROUP = 64
MAX_FUSED_TILES = 64
_SIGN = {"u32": 0x80000000, "i64": -(1 << 63)}
_ABS_MASK = {"u32": 0x7FFFFFFF, "i64": (1 << 63) - 1}
_INF_BITS = {"u32": 0x7F800000, "i64": 0x7FF0000000000000}


def key_storage(dtype: str) -> str:
    """Kernel dtype the keys travel in: ``u32`` for 32-bit, ``i64`` for 64-bit dtypes."""
    return "i64" if dtype in ("f64", "i64") else "u32"


def order_key(kb: KernelBuilder, k: E, dtype: str, descending: bool) -> E:
    """Return the unsigned-order key of stored key bits ``k`` (see the module docstring)."""
    st = key_storage(dtype)
    all_ones = kb.const(-1 if st == "i64" else 0xFFFFFFFF, st)
    sign = kb.const(_SIGN[st], st)
    if dtype in ("f32", "f64"):
        mag = kb.let(kb.fresh("mag"), k & _ABS_MASK[st])
        negative = (k & sign) != 0
        base = where(mag == 0, sign, where(negative, k ^ all_ones, k ^ sign))
        if descending:
            base = base ^ all_ones
        return where(mag > _INF_BITS[st], all_ones, base)
    if dtype == "u32":
        base = k
    else:
        base = k ^ sign
    return base ^ all_ones if descending else base


def _digit(kb: KernelBuilder, k: E, dtype: str, descending: bool, shift: E, bits: int) -> E:
    okey = kb.let(kb.fresh("ok"), order_key(kb, k, dtype, descending))
    return kb.let(kb.fresh("d"), ((okey >> shift) & ((1 << bits) - 1)).cast("i32"))


def _tile(kb: KernelBuilder):
    n, chunk = kb.scalar("n", "i32"), kb.scalar("chunk", "i32")
    stride, tiles = kb.scalar("lane_stride", "i32"), kb.scalar("tiles", "i32")
    shift = kb.scalar("shift", "i32")
    lane = kb.global_id()
    t = kb.let("t", lane / stride)
    active = (lane % stride == 0) & (t < tiles)
    begin = kb.let("begin", t * chunk)
    # not ``begin + chunk < n``: that wraps past 2**31 - 1 for the last tile of a huge input
    end = kb.let("end", where(chunk < n - begin, begin + chunk, n))
    return n, tiles, shift, t, active, begin, end


@functools.cache
def histogram_kernel(dtype: str, descending: bool, bits: int = RADIX_BITS):
    """Buffers (hist: i32 write, counts: i32 scratch, keys); scalars n, chunk, lane_stride,
    tiles, shift (i32). ``bits``: digit width (``2**bits`` counters per tile)."""
    st = key_storage(dtype)
    radix = 1 << bits
    kb = KernelBuilder(f"radix_hist_{dtype}_{'desc' if descending else 'asc'}"
                       + ("" if bits == RADIX_BITS else f"_r{bits}"), WORKGROUP)
    hist = kb.buffer("hist", "i32", "write")
    counts = kb.buffer("counts", "i32", "readwrite")
    keys = kb.buffer("keys", st, "read")
    _, tiles, shift, t, active, begin, end = _tile(kb)
    with kb.if_(active):
        row = kb.let("row", t * radix)
        with kb.for_("z", 0, radix) as z:
            kb.store(counts, row + z, 0)
        with kb.for_("e", begin, end) as e:
            shift_k = shift.cast(st)
            d = _digit(kb, keys[e], dtype, descending, shift_k, bits)
            kb.store(counts, row + d, counts[row + d] + 1)
        with kb.for_("d2", 0, radix) as d2:
            kb.store(hist, d2 * tiles + t, counts[row + d2])
    return kb.build()


@functools.cache
def scatter_kernel(dtype: str, descending: bool, values: str, value_dtype: str, out_dtype: str,
                   write_keys: bool, bits: int = RADIX_BITS, fuse_next: bool = False):
    """One scatter pass.

    ``values``: ``"none"``, ``"iota"`` (write positions) or ``"carry"`` (move a value buffer).
    Buffers: (keys_out if write_keys, values_out unless none, counts: i32 scratch, next: i32
    scratch if fuse_next, keys_in, values_in if carry, offsets: i32); scalars as
    :func:`histogram_kernel`, then ``tile_shift`` (i32) if fuse_next.

    ``fuse_next`` (few tiles of ``chunk = 2**tile_shift`` elements, host-memory backends):
    the work-item also counts the next pass's digit of every key it writes, by the output
    tile the key lands in, into its private ``tiles * 2**bits`` counters
    ``next[(t * tiles + out_tile) * 2**bits + digit]``; :func:`fold_kernel` sums them over
    ``t`` into the next pass's per-tile histogram, which replaces a histogram pass (a read
    of every key) by one more counter increment per key.
    """
    st = key_storage(dtype)
    name = (f"radix_scatter_{dtype}_{'desc' if descending else 'asc'}_{values}_{value_dtype}"
            f"_{out_dtype}_{int(write_keys)}" + ("" if bits == RADIX_BITS else f"_r{bits}")
            + ("_fused" if fuse_next else ""))
    radix = 1 << bits
    kb = KernelBuilder(name, WORKGROUP)
    keys_out = kb.buffer("keys_out", st, "write") if write_keys else None
    vals_out = kb.buffer("vals_out", out_dtype, "write") if values != "none" else None
    counts = kb.buffer("counts", "i32", "readwrite")
    nxt = kb.buffer("next", "i32", "readwrite") if fuse_next else None
    keys = kb.buffer("keys", st, "read")
    vals = kb.buffer("vals", value_dtype, "read") if values == "carry" else None
    offsets = kb.buffer("offsets", "i32", "read")
    _, tiles, shift, t, active, begin, end = _tile(kb)
    tile_shift = kb.scalar("tile_shift", "i32") if fuse_next else None
    with kb.if_(active):
        row = kb.let("row", t * radix)
        with kb.for_("d0", 0, radix) as d0:
            kb.store(counts, row + d0, offsets[d0 * tiles + t])
        if nxt is not None:
            nrow = kb.let("nrow", t * tiles * radix)
            with kb.for_("z", 0, tiles * radix) as z:
                kb.store(nxt, nrow + z, 0)
        with kb.for_("e", begin, end) as e:
            k = kb.let("k", keys[e])
            okey = kb.let("okey", order_key(kb, k, dtype, descending))
            d = kb.let("d", ((okey >> shift.cast(st)) & (radix - 1)).cast("i32"))
            p = kb.let("p", counts[row + d])
            kb.store(counts, row + d, p + 1)
            if keys_out is not None:
                kb.store(keys_out, p, k)
            if vals_out is not None:
                v = e if values == "iota" else vals[e]  # type: ignore[index]
                kb.store(vals_out, p, E(v.expr if isinstance(v, E) else v).cast(out_dtype))
            if nxt is not None:
                nd = ((okey >> (shift + bits).cast(st)) & (radix - 1)).cast("i32")
                slot = kb.let("slot", nrow + (p >> tile_shift) * radix + nd)
                kb.store(nxt, slot, nxt[slot] + 1)
    return kb.build()


@functools.cache
def fold_kernel():
    """``hist[d * tiles + o] = sum_t next[(t * tiles + o) * radix + d]`` for the
    ``tiles * radix`` work-items. Buffers (hist: i32 write, next: i32); scalars tiles,
    radix (i32)."""
    kb = KernelBuilder("radix_fold_next", WORKGROUP)
    hist = kb.buffer("hist", "i32", "write")
    nxt = kb.buffer("next", "i32", "read")
    tiles, radix = kb.scalar("tiles", "i32"), kb.scalar("radix", "i32")
    i = kb.global_id()
    with kb.if_(i < tiles * radix):
        d = kb.let("d", i / tiles)
        o = kb.let("o", i - d * tiles)
        acc = kb.let("acc", kb.const(0, "i32"))
        with kb.for_("t", 0, tiles) as t:
            kb.assign(acc, acc + nxt[(t * tiles + o) * radix + d])
        kb.store(hist, i, acc)
    return kb.build()


def choose_chunk(n: int, candidate: Candidate, backend=None, bits: int = RADIX_BITS) -> int:
    """Tile length: the candidate's ``items_per_thread``, else about 256 tiles (>= 4096);
    with a ``backend`` that limits loop iterations, at most ``max_loop_iterations`` minus
    the two ``2**bits``-counter loops of the histogram and scatter kernels."""
    chunk = candidate.items_per_thread if candidate.items_per_thread > 1 \
        else max(4096, ceil_div(n, 256))
    # the tiles x 2**bits counters (and their i32 row offsets) must stay below 2**31
    chunk = max(chunk, ceil_div(n, MAX_ELEMS >> bits))
    if backend is None:
        return chunk
    return clamp_tile(chunk, backend, 2 << bits, "sort.radix tile", loops=3)


def _value_storage(values: np.ndarray | None) -> str:
    if values is None:
        return "i32"
    return "i64" if values.dtype.itemsize == 8 else "u32"


# Host-memory backends: ping-pong buffers are kept between calls (first-touch page faults of
# fresh 64 MiB temporaries cost about as much as a scatter pass). A call takes arrays out of
# the pool (so concurrent calls never share one) and puts them back; at most
# SCRATCH_POOL_BYTES stay cached, only arrays of at least SCRATCH_MIN_BYTES.
SCRATCH_POOL_BYTES = 256 << 20
SCRATCH_MIN_BYTES = 1 << 20
_POOL: dict[tuple[str, int], list[np.ndarray]] = {}
_POOL_LOCK = threading.Lock()
_NP = {"u32": np.uint32, "i32": np.int32, "i64": np.int64}


def _take(dtype: str, n: int) -> np.ndarray:
    with _POOL_LOCK:
        free = _POOL.get((dtype, n))
        if free:
            return free.pop()
    return np.empty(n, _NP[dtype])


def _give(arrays: list[np.ndarray]) -> None:
    with _POOL_LOCK:
        for a in arrays:
            key = (_KIND[a.dtype.type], a.size)
            if a.nbytes < SCRATCH_MIN_BYTES:
                continue
            if _pool_bytes() + a.nbytes > SCRATCH_POOL_BYTES:
                for other in [k for k in _POOL if k != key]:  # keep the latest size only
                    del _POOL[other]
                if _pool_bytes() + a.nbytes > SCRATCH_POOL_BYTES:
                    continue
            _POOL.setdefault(key, []).append(a)


def _pool_bytes() -> int:
    return sum(b.nbytes for free in _POOL.values() for b in free)


_KIND = {np.uint32: "u32", np.int32: "i32", np.int64: "i64"}


def radix_bits(backend, candidate: Candidate) -> int:
    """Digit width: the candidate's ``radix_bits`` option, else 11 on host-memory backends
    (3 passes for 32-bit keys; a 2048-counter tile row still fits in L1) and 8 elsewhere;
    fewer where the two ``2**bits``-counter loops would take over half the loop budget."""
    bits = candidate.option("radix_bits")
    if bits:
        return int(bits)
    bits = 11 if host_like(backend) else RADIX_BITS
    budget = loop_budget(backend)
    while budget is not None and bits > 1 and 4 << bits > budget:
        bits -= 1  # the two counter loops take at most half of a (tiny) loop budget
    return bits


def _fused_fits(backend, n: int, chunk: int, radix: int) -> None:
    """Refuse the fused layout (power-of-two tiles, ``tiles * radix`` next-pass counters per
    work-item) where its loops exceed the backend's loop budget."""
    from accy.families.limits import require

    tiles = max(1, ceil_div(n, chunk))
    require(radix + tiles * radix + chunk + 3, backend, "sort.radix (fuse_hist)",
            "leave the candidate option fuse_hist unset on this backend")


def run(backend, candidate: Candidate, keys: np.ndarray, values: np.ndarray | None, dtype: str,
        descending: bool, mode: str):
    """Sort (``mode`` ``"sort"``), argsort (``"argsort"``) or sort pairs (``"pairs"``)."""
    n = keys.size
    st = key_storage(dtype)
    bits = radix_bits(backend, candidate)
    radix = 1 << bits
    passes = ceil_div(64 if st == "i64" else 32, bits)
    fuse = bool(candidate.option("fuse_hist", host_like(backend)))
    if fuse:
        # power-of-two tiles (the output tile of a position is a shift), few of them
        threads = os.cpu_count() or 1
        target = int(candidate.option("tiles", min(MAX_FUSED_TILES, max(4, 2 * threads))))
        chunk = candidate.items_per_thread if candidate.items_per_thread > 1 \
            else max(4096, ceil_div(n, target))
        chunk = max(chunk, ceil_div(n, MAX_FUSED_TILES))  # next: tiles**2 * radix counters
        tile_shift = max(0, (chunk - 1).bit_length())
        chunk = 1 << tile_shift
        _fused_fits(backend, n, chunk, radix)
    else:
        chunk = choose_chunk(n, candidate, backend, bits)
    tiles = max(1, ceil_div(n, chunk))
    # few heavy work-items: tile_geometry spaces them over enough idle lanes (split_lanes)
    # that the CPU pool gives every thread a tile
    groups, stride = tile_geometry(backend, tiles, WORKGROUP)
    plan = Plan(f"{mode}.radix")
    vst = "i32" if mode == "argsort" else _value_storage(values)
    final_vdt = "i64" if mode == "argsort" else vst
    keys_final = plan.output(st, n) if mode != "argsort" else None
    vals_final = plan.output(final_vdt, n) if mode != "sort" else None
    src_k = plan.param(keys, st)
    src_v = plan.param(values, vst) if mode == "pairs" else None
    pooled: list[np.ndarray] = []
    host = host_like(backend) and n * 4 >= SCRATCH_MIN_BYTES

    def scratch(dtype: str):
        if not host:
            return plan.temp(dtype, n)
        pooled.append(_take(dtype, n))
        return plan.param(pooled[-1], dtype)

    counts = plan.temp("i32", tiles * radix)
    hist = plan.temp("i32", tiles * radix)
    nxt = plan.temp("i32", tiles * tiles * radix) if fuse and passes > 1 else None
    offsets = plan.temp("i32", tiles * radix)
    # Destinations of each pass, last first: the final outputs double as ping-pong buffers
    # (pass P-1 writes the output, P-2 a temporary, P-3 the output again, ...), so sort and
    # sort_pairs need one temporary per array; argsort (no key output, i64 positions) two.
    if mode == "argsort":
        kbuf = [scratch(st), scratch(st)] if passes > 1 else []
        vbuf = [scratch(vst), scratch(vst)] if passes > 1 else []
        dst_keys = [kbuf[p % 2] if p < passes - 1 else None for p in range(passes)]
        dst_vals = [vbuf[p % 2] if p < passes - 1 else vals_final for p in range(passes)]
    else:
        tk = scratch(st) if passes > 1 else None
        tv = scratch(vst) if passes > 1 and mode == "pairs" else None
        dst_keys = [keys_final if (passes - 1 - p) % 2 == 0 else tk for p in range(passes)]
        dst_vals = [vals_final if (passes - 1 - p) % 2 == 0 else tv for p in range(passes)]
    hist_k = histogram_kernel(dtype, descending, bits)
    for p in range(passes):
        last = p == passes - 1
        scalars = [("i32", n), ("i32", chunk), ("i32", stride), ("i32", tiles),
                   ("i32", p * bits)]
        if p == 0 or not fuse:
            plan.launch(hist_k, groups, [hist, counts, src_k], scalars)
        else:
            plan.launch(fold_kernel(), ceil_div(tiles * radix, WORKGROUP), [hist, nxt],
                        [("i32", tiles), ("i32", radix)])
        add_scan(plan, backend, hist, offsets, tiles * radix, "i32", inclusive=False)
        dst_k, dst_v = dst_keys[p], dst_vals[p]
        vmode = "none" if mode == "sort" else ("iota" if p == 0 and mode == "argsort"
                                               else "carry")
        out_dt = final_vdt if last else vst
        fused = fuse and not last
        kernel = scatter_kernel(dtype, descending, vmode, vst, out_dt, dst_k is not None, bits,
                                fused)
        slots = [s for s in (dst_k, dst_v if vmode != "none" else None) if s is not None]
        slots += [counts] + ([nxt] if fused else []) + [src_k]
        slots += ([src_v] if vmode == "carry" else []) + [offsets]
        plan.launch(kernel, groups, slots, scalars + ([("i32", tile_shift)] if fused else []))
        src_k, src_v = dst_k, dst_v
    try:
        results = plan.run(backend)
    finally:
        _give(pooled)
    np_dtype = keys.dtype
    if mode == "sort":
        return results[0].view(np_dtype)
    if mode == "argsort":
        return results[0]
    return results[0].view(np_dtype), results[1].view(values.dtype)  # type: ignore[union-attr]
