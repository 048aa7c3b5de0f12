"""``sort.radix``: stable LSD radix sort for sort, argsort and sort_pairs.

Algorithm: least-significant-digit radix sort with 8-bit digits (4 passes for 32-bit keys,
8 for 64-bit), after Merrill & Grimshaw, "High Performance and Scalable Radix Sorting"
(Parallel Processing Letters 21(2), 2011), in the tile formulation usable on any backend.
Each pass over ``P`` tiles of ``chunk`` consecutive elements runs

1. *histogram*: one work-item per tile counts the digits of its tile (a private 256-entry
   row of a scratch buffer) and writes them digit-major, ``hist[d * P + t]``;
2. *prefix sum*: ``scan.reduce_then_scan`` (exclusive) over the ``256 * P`` counts gives
   each (digit, tile) its first output position;
3. *scatter*: each work-item walks its tile in order and writes every key (and value) to the
   next position of its digit — stable because tiles and elements are visited in order.

Order-preserving key transform (applied when a digit is extracted; the stored keys keep
their original bits, so NaN payloads and zero signs survive): unsigned as is; signed: flip
the sign bit; floats: negative → flip all bits, positive → flip the sign bit, every NaN →
all ones (last, in input order), -0.0 → the key of +0.0 (equal, stable, as numpy's stable
sort). Descending inverts the key of non-NaN values, so NaN stays last.

argsort generates the identity permutation in the first pass and carries i32 positions,
widened to int64 by the last pass.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.kernel import E, KernelBuilder, where
from accy.kernels import Candidate, Plan, tile_geometry

from accy_kernels._common import ceil_div
from accy_kernels.scan_reduce_then_scan import add_scan

__all__ = ["histogram_kernel", "order_key", "run", "scatter_kernel"]

RADIX_BITS = 8
RADIX = 1 << RADIX_BITS
WORKGROUP = 64
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


def _digit(kb: KernelBuilder, k: E, dtype: str, descending: bool, shift: E) -> E:
    okey = kb.let(kb.fresh("ok"), order_key(kb, k, dtype, descending))
    return kb.let(kb.fresh("d"), ((okey >> shift) & (RADIX - 1)).cast("i32"))


def _tile(kb: KernelBuilder):
    n, chunk = kb.scalar("n", "i32"), kb.scalar("chunk", "i32")
    stride, tiles = kb.scalar("lane_stride", "i32"), kb.scalar("tiles", "i32")
    shift = kb.scalar("shift", "i32")
    lane = kb.global_id()
    t = kb.let("t", lane / stride)
    active = (lane % stride == 0) & (t < tiles)
    begin = kb.let("begin", t * chunk)
    end = kb.let("end", where(begin + chunk < n, begin + chunk, n))
    return n, tiles, shift, t, active, begin, end


@functools.cache
def histogram_kernel(dtype: str, descending: bool):
    """Buffers (hist: i32 write, counts: i32 scratch, keys); scalars n, chunk, lane_stride,
    tiles, shift (i32)."""
    st = key_storage(dtype)
    kb = KernelBuilder(f"radix_hist_{dtype}_{'desc' if descending else 'asc'}", WORKGROUP)
    hist = kb.buffer("hist", "i32", "write")
    counts = kb.buffer("counts", "i32", "readwrite")
    keys = kb.buffer("keys", st, "read")
    _, tiles, shift, t, active, begin, end = _tile(kb)
    with kb.if_(active):
        row = kb.let("row", t * RADIX)
        with kb.for_("z", 0, RADIX) as z:
            kb.store(counts, row + z, 0)
        with kb.for_("e", begin, end) as e:
            shift_k = shift.cast(st)
            d = _digit(kb, keys[e], dtype, descending, shift_k)
            kb.store(counts, row + d, counts[row + d] + 1)
        with kb.for_("d2", 0, RADIX) as d2:
            kb.store(hist, d2 * tiles + t, counts[row + d2])
    return kb.build()


@functools.cache
def scatter_kernel(dtype: str, descending: bool, values: str, value_dtype: str, out_dtype: str,
                   write_keys: bool):
    """One scatter pass.

    ``values``: ``"none"``, ``"iota"`` (write positions) or ``"carry"`` (move a value buffer).
    Buffers: (keys_out if write_keys, values_out unless none, counts: i32 scratch, keys_in,
    values_in if carry, offsets: i32); scalars as :func:`histogram_kernel`.
    """
    st = key_storage(dtype)
    name = (f"radix_scatter_{dtype}_{'desc' if descending else 'asc'}_{values}_{value_dtype}"
            f"_{out_dtype}_{int(write_keys)}")
    kb = KernelBuilder(name, WORKGROUP)
    keys_out = kb.buffer("keys_out", st, "write") if write_keys else None
    vals_out = kb.buffer("vals_out", out_dtype, "write") if values != "none" else None
    counts = kb.buffer("counts", "i32", "readwrite")
    keys = kb.buffer("keys", st, "read")
    vals = kb.buffer("vals", value_dtype, "read") if values == "carry" else None
    offsets = kb.buffer("offsets", "i32", "read")
    _, tiles, shift, t, active, begin, end = _tile(kb)
    with kb.if_(active):
        row = kb.let("row", t * RADIX)
        with kb.for_("d0", 0, RADIX) as d0:
            kb.store(counts, row + d0, offsets[d0 * tiles + t])
        with kb.for_("e", begin, end) as e:
            k = kb.let("k", keys[e])
            d = _digit(kb, k, dtype, descending, shift.cast(st))
            p = kb.let("p", counts[row + d])
            kb.store(counts, row + d, p + 1)
            if keys_out is not None:
                kb.store(keys_out, p, k)
            if vals_out is not None:
                v = e if values == "iota" else vals[e]  # type: ignore[index]
                kb.store(vals_out, p, E(v.expr if isinstance(v, E) else v).cast(out_dtype))
    return kb.build()


def choose_chunk(n: int, candidate: Candidate) -> int:
    """Tile length: the candidate's ``items_per_thread``, else about 256 tiles (>= 4096)."""
    if candidate.items_per_thread > 1:
        return candidate.items_per_thread
    return max(4096, ceil_div(n, 256))


def _value_storage(values: np.ndarray | None) -> str:
    if values is None:
        return "i32"
    return "i64" if values.dtype.itemsize == 8 else "u32"


def run(backend, candidate: Candidate, keys: np.ndarray, values: np.ndarray | None, dtype: str,
        descending: bool, mode: str):
    """Sort (``mode`` ``"sort"``), argsort (``"argsort"``) or sort pairs (``"pairs"``)."""
    n = keys.size
    st = key_storage(dtype)
    passes = (64 if st == "i64" else 32) // RADIX_BITS
    chunk = choose_chunk(n, candidate)
    tiles = max(1, ceil_div(n, chunk))
    groups, stride = tile_geometry(backend, tiles, WORKGROUP)
    plan = Plan(f"{mode}.radix")
    vst = "i32" if mode == "argsort" else _value_storage(values)
    final_vdt = "i64" if mode == "argsort" else vst
    keys_final = plan.output(st, n) if mode != "argsort" else None
    vals_final = plan.output(final_vdt, n) if mode != "sort" else None
    src_k = plan.param(keys, st)
    src_v = plan.param(values, vst) if mode == "pairs" else None
    counts = plan.temp("i32", tiles * RADIX)
    hist = plan.temp("i32", tiles * RADIX)
    offsets = plan.temp("i32", tiles * RADIX)
    ping = [plan.temp(st, n), plan.temp(st, n)]
    vping = [plan.temp(vst, n), plan.temp(vst, n)] if mode != "sort" else [None, None]
    for p in range(passes):
        last = p == passes - 1
        scalars = [("i32", n), ("i32", chunk), ("i32", stride), ("i32", tiles),
                   ("i32", p * RADIX_BITS)]
        plan.launch(histogram_kernel(dtype, descending), groups, [hist, counts, src_k], scalars)
        add_scan(plan, backend, hist, offsets, tiles * RADIX, "i32", inclusive=False)
        dst_k = keys_final if last else ping[p % 2]
        dst_v = vals_final if last else vping[p % 2]
        vmode = "none" if mode == "sort" else ("iota" if p == 0 and mode == "argsort"
                                               else "carry")
        out_dt = final_vdt if last else vst
        kernel = scatter_kernel(dtype, descending, vmode, vst, out_dt, dst_k is not None)
        slots = [s for s in (dst_k, dst_v if vmode != "none" else None) if s is not None]
        slots += [counts, src_k] + ([src_v] if vmode == "carry" else []) + [offsets]
        plan.launch(kernel, groups, slots, scalars)
        src_k, src_v = (dst_k if dst_k is not None else ping[p % 2]), dst_v
    results = plan.run(backend)
    np_dtype = keys.dtype
    if mode == "sort":
        return results[0].view(np_dtype)
    if mode == "argsort":
        return results[0]
    return results[0].view(np_dtype), results[1].view(values.dtype)  # type: ignore[union-attr]
