"""``sort.radix`` on host-memory backends: one MSD pass, then every bucket sorted in cache.

The LSD radix sort (:mod:`accy_kernels.sort_radix`) moves every 32-bit key through three
2048-way scatters over the whole array (7 passes over memory with the histogram). Here,
for ``sort`` and ``argsort`` of 32-bit keys (f32, i32, u32) on a host-memory backend:

1. *MSD split*: one histogram of the top 11 bits of the order key per tile, an exclusive
   scan and a stable scatter (the LSD sort's own kernels, digit shift 21) put the keys into
   2048 buckets of the output, in digit order;
2. *in-cache LSD*: one work-item per run of consecutive buckets sorts each bucket with two
   stable counting passes over the low 21 bits (11 then 10 bits), from the output into a
   scratch buffer and back. A bucket of uniformly spread keys (16M keys: ~8K, 32 KiB) and
   its scratch copy stay in L1/L2, so these passes cost cache, not memory, bandwidth; the
   work-items spread over the CPU pool's threads.

``argsort`` carries each key's i32 position through both steps (the MSD scatter writes
the positions it generates beside the keys; the buckets' last pass writes only the
positions, widened to int64, into the output): 16M uniform i32 keys, CPU time at load ~10:
292 ms against the LSD argsort's 506 (f32 ``random()``: 441 against 528).

Passes over memory: 3 (the histogram read, the MSD scatter's read and write, the buckets'
read and final write) plus the scratch's write-back; minimum 3 (argsort: the same, the
scatter and the buckets moving the positions too). Stability and the order
(NaN last, -0.0 == +0.0 in input order, descending) are the LSD sort's: the same order-key
transform and stable passes.

Used from :data:`MIN_KEYS` keys unless a strided sample of 4096 keys puts more than
:data:`MAX_SAMPLE_BUCKET` into one top-11-bit bucket (keys of a narrow range, many equal
keys: their bucket would be one work-item's long out-of-cache sort; they keep the LSD
sort). Floats in few binades (``random()`` in [0, 1): 12.5 % of the keys per bucket of the
top binade) still gain: the big buckets sort partly in L2/L3, the small ones in L1, and
the work-items share the keys, not the buckets (16M f32 keys, CPU time at load ~11:
253-269 ms against the LSD sort's 366-424; uniform i32: 157-187 against 332-386; numpy
160-200 on one thread). The candidate option ``msd`` (0/1) forces the choice.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan, host_like, loop_budget, split_lanes, tile_geometry
from accy.kernel import KernelBuilder, call, where

from accy_kernels._common import ceil_div
from accy_kernels.scan_reduce_then_scan import add_scan
from accy_kernels.sort_radix import (
    WORKGROUP,
    _digit,
    _give,
    _take,
    choose_chunk,
    histogram_kernel,
    key_storage,
    scatter_kernel,
)
from accy_kernels.sort_radix import run as lsd_run

__all__ = ["MAX_SAMPLE_BUCKET", "MIN_KEYS", "bucket_kernel", "run", "use_msd"]

MSD_BITS = 11
MSD_SHIFT = 32 - MSD_BITS
#: keys from which the MSD split is considered (below, the LSD passes already fit in cache)
MIN_KEYS = 1 << 20
SAMPLE = 4096
#: most of the sampled keys in one top-digit bucket (a sixth; uniform keys' fullest
#: bucket holds ~9 of 4096, ``random()`` floats' ~512)
MAX_SAMPLE_BUCKET = SAMPLE // 6
#: work-items of the bucket kernel (each takes consecutive buckets holding ~n / ITEMS keys)
ITEMS = 64
_LOW = ((0, 11), (11, 10))  # (shift, bits) of the in-cache passes


def _sample_keys(keys: np.ndarray, dtype: str, descending: bool) -> np.ndarray:
    """The order keys (uint32) of a strided sample, as :func:`sort_radix.order_key` (NaN
    handling does not matter for the decision)."""
    s = np.ascontiguousarray(keys[:: max(1, keys.size // SAMPLE)][:SAMPLE])
    bits = s.view(np.uint32)
    if dtype == "f32":
        key = np.where(bits >> 31 != 0, ~bits, bits ^ np.uint32(0x80000000))
    elif dtype == "i32":
        key = bits ^ np.uint32(0x80000000)
    else:
        key = bits
    return ~key if descending else key


def use_msd(backend, candidate: Candidate, keys: np.ndarray, dtype: str, descending: bool,
            mode: str) -> bool:
    """Whether ``sort`` takes the MSD split (see the module docstring)."""
    forced = candidate.option("msd", None)
    if mode not in ("sort", "argsort") or key_storage(dtype) != "u32" or not host_like(backend) \
            or loop_budget(backend) is not None or candidate.option("radix_bits", None) \
            or keys.size < 2:
        return False
    if forced is not None:
        return bool(forced)
    if keys.size < MIN_KEYS:
        return False
    top = _sample_keys(keys, dtype, descending) >> MSD_SHIFT
    return int(np.bincount(top, minlength=1 << MSD_BITS).max()) <= MAX_SAMPLE_BUCKET


@functools.cache
def bucket_kernel(dtype: str, descending: bool, positions: bool = False):
    """Sort each MSD bucket in place by the low 21 bits of its order keys.

    Buffers (keys: u32 readwrite — the MSD scatter's output, sorted in place; tmp: u32
    scratch; [``positions``: pos (i32 readwrite, the MSD scatter's positions), ptmp (i32
    scratch), out (i64 write, the final positions);] counts: i32 scratch, 2048 per
    work-item; offsets: i32, the MSD scan, read); scalars n, tiles (the MSD pass's),
    lane_stride, items (i32). Bucket ``d`` is ``[offsets[d * tiles], offsets[(d + 1) *
    tiles])`` (the last ends at n); work-item ``w * lane_stride`` takes the buckets that
    start in ``[w * n / items, (w + 1) * n / items)``, so the work-items (and the pool's
    threads) share the keys evenly however they fall into buckets (but for one bucket
    larger than a share). ``positions`` (argsort): each key's position travels with it,
    and the second pass writes the positions (as i64) to ``out`` instead of the keys.
    """
    radix = 1 << MSD_BITS
    kb = KernelBuilder(f"radix_msd_buckets_{dtype}_{'desc' if descending else 'asc'}"
                       + ("_pos" if positions else ""), WORKGROUP)
    keys = kb.buffer("keys", "u32", "readwrite")
    tmp = kb.buffer("tmp", "u32", "readwrite")
    pos = kb.buffer("pos", "i32", "readwrite") if positions else None
    ptmp = kb.buffer("ptmp", "i32", "readwrite") if positions else None
    out = kb.buffer("out", "i64", "write") if positions else None
    counts = kb.buffer("counts", "i32", "readwrite")
    offsets = kb.buffer("offsets", "i32", "read")
    n, tiles = kb.scalar("n", "i32"), kb.scalar("tiles", "i32")
    stride, items = kb.scalar("lane_stride", "i32"), kb.scalar("items", "i32")
    lane = kb.global_id()
    w = kb.let("w", lane / stride)
    with kb.if_((lane % stride == 0) & (w < items)):
        row = kb.let("row", w * radix)
        n64, items64 = n.cast("i64"), items.cast("i64")
        lo = kb.let("lo", (w.cast("i64") * n64 / items64).cast("i32"))
        hi = kb.let("hi", ((w.cast("i64") + 1) * n64 / items64).cast("i32"))
        first = kb.let("first", kb.const(0, "i32"))
        last = kb.let("last", kb.const(0, "i32"))
        with kb.for_("d0", 0, radix) as d0:  # bucket starts are non-decreasing
            s0 = kb.let("s0", offsets[d0 * tiles])
            kb.assign(first, first + where(s0 < lo, 1, 0))
            kb.assign(last, last + where(s0 < hi, 1, 0))
        with kb.for_("d", first, last) as d:
            start = kb.let("start", offsets[d * tiles])
            nxt = kb.let("nxt", call("min", (d + 1) * tiles, radix * tiles - 1))
            end = kb.let("end", where(d + 1 < radix, offsets[nxt], n))
            if out is not None:  # a bucket of one key is sorted: its position goes out
                with kb.if_(end - start == 1):
                    kb.store(out, start, pos[start].cast("i64"))  # type: ignore[index]
            with kb.if_(end - start > 1):
                passes = zip(_LOW, ((keys, tmp), (tmp, keys)), ((pos, ptmp), (ptmp, out)),
                             strict=True)
                for k_pass, ((shift, bits), (src, dst), (vsrc, vdst)) in enumerate(passes):
                    sh = kb.const(shift, "u32")
                    with kb.for_(kb.fresh("z"), 0, 1 << bits) as z:
                        kb.store(counts, row + z, 0)
                    with kb.for_(kb.fresh("e"), start, end) as e:
                        dg = _digit(kb, src[e], dtype, descending, sh, bits)
                        kb.store(counts, row + dg, counts[row + dg] + 1)
                    acc = kb.let(kb.fresh("acc"), start)
                    with kb.for_(kb.fresh("z"), 0, 1 << bits) as z:
                        c = kb.let(kb.fresh("c"), counts[row + z])
                        kb.store(counts, row + z, acc)
                        kb.assign(acc, acc + c)
                    with kb.for_(kb.fresh("e"), start, end) as e:
                        k = kb.let(kb.fresh("k"), src[e])
                        dg = _digit(kb, k, dtype, descending, sh, bits)
                        p = kb.let(kb.fresh("p"), counts[row + dg])
                        kb.store(counts, row + dg, p + 1)
                        if vsrc is None or k_pass == 0:  # argsort: no keys out at last
                            kb.store(dst, p, k)
                        if vsrc is not None:
                            v = vsrc[e]
                            kb.store(vdst, p, v.cast("i64") if vdst is out else v)
    return kb.build()


def run(backend, candidate: Candidate, keys: np.ndarray, values: np.ndarray | None,
        dtype: str, descending: bool, mode: str):
    """The ``sort.radix`` variant: the MSD split where :func:`use_msd` says so, else the
    LSD sort (:func:`accy_kernels.sort_radix.run`)."""
    if not use_msd(backend, candidate, keys, dtype, descending, mode):
        return lsd_run(backend, candidate, keys, values, dtype, descending, mode)
    n = keys.size
    radix = 1 << MSD_BITS
    argsort = mode == "argsort"
    chunk = choose_chunk(n, candidate, backend, MSD_BITS)
    tiles = max(1, ceil_div(n, chunk))
    groups, stride = tile_geometry(backend, tiles, WORKGROUP)
    plan = Plan(f"{mode}.radix_msd")
    src = plan.param(keys, "u32")
    pooled = [_take("u32", n)] + ([_take("u32", n), _take("i32", n), _take("i32", n)]
                                  if argsort else [])
    slots = [plan.param(a, "i32" if a.dtype == np.int32 else "u32") for a in pooled]
    # sort: the output holds the MSD keys and is sorted in place (tmp the scratch);
    # argsort: the MSD keys, their scratch, the positions and theirs, then the i64 output
    out = plan.output("i64" if argsort else "u32", n)
    msd_keys, tmp = (slots[1], slots[0]) if argsort else (out, slots[0])
    counts = plan.temp("i32", max(tiles, ITEMS) * radix)
    hist = plan.temp("i32", tiles * radix)
    offsets = plan.temp("i32", tiles * radix)
    scalars = [("i32", n), ("i32", chunk), ("i32", stride), ("i32", tiles), ("i32", MSD_SHIFT)]
    plan.launch(histogram_kernel(dtype, descending, MSD_BITS), groups, [hist, counts, src],
                scalars)
    add_scan(plan, backend, hist, offsets, tiles * radix, "i32", inclusive=False)
    if argsort:
        plan.launch(scatter_kernel(dtype, descending, "iota", "i32", "i32", True, MSD_BITS),
                    groups, [msd_keys, slots[2], counts, src, offsets], scalars)
        bucket_slots = [msd_keys, tmp, slots[2], slots[3], out]
    else:
        plan.launch(scatter_kernel(dtype, descending, "none", "i32", "i32", True, MSD_BITS),
                    groups, [msd_keys, counts, src, offsets], scalars)
        bucket_slots = [msd_keys, tmp]
    lanes = ceil_div(split_lanes(backend), ITEMS)  # every pool thread gets its work-items
    plan.launch(bucket_kernel(dtype, descending, argsort), ceil_div(ITEMS * lanes, WORKGROUP),
                bucket_slots + [counts, offsets],
                [("i32", n), ("i32", tiles), ("i32", lanes), ("i32", ITEMS)])
    try:
        (result,) = plan.run(backend)
    finally:
        _give(pooled)
    return result if argsort else result.view(keys.dtype)
