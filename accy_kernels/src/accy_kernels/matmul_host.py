"""Host-target helpers of the ``matmul`` kernels: SIMD lanes, thread count, the spread of
small launches over the CPU thread pool and the group-id guard that goes with it."""

from __future__ import annotations

import contextlib

from accy.families import host_like, split_items
from accy.kernel import KernelBuilder

from accy_kernels._common import ceil_div

__all__ = ["MIN_PARALLEL_WORK", "RANGES_PER_THREAD", "active", "host_parts", "host_threads",
           "simd_lanes", "spread"]

#: work (flops of a compute-bound launch; memory-bound ones count 16 per flop) under which a
#: launch is not spread over the threads: handing half of it to a pool thread (a wake-up
#: and the GIL, some 20-50 us) costs more than that half saves (2**23 flops: about 100 us
#: on one core, a 128^3 product is under it, a 256^3 one over it)
MIN_PARALLEL_WORK = 1 << 23


def simd_lanes(backend, dtype: str) -> int:
    """Vector lanes of ``dtype`` on the host (``simd512`` / ``simd256`` features; else 4)."""
    feats = backend.capabilities().features
    bits = 512 if "simd512" in feats else 256 if "simd256" in feats else 128
    return max(2, bits // (64 if dtype in ("f64", "i64") else 32))


def host_threads(backend) -> int:
    """Worker threads of a host backend (its pool's, else ``ACCY_NUM_THREADS``)."""
    n = getattr(getattr(backend, "pool", None), "num_threads", None)
    if isinstance(n, int) and n > 0:
        return n
    from accy import config

    return config.num_threads()


#: ranges per thread of a split launch where the backend does not say (a compile-time
#: target): the CPU backend pool's ``ranges_per_thread``
RANGES_PER_THREAD = 2


def host_parts(backend) -> int:
    """Ranges a host backend's pool cuts a split launch into: :func:`host_threads` times its
    pool's ``ranges_per_thread`` (:data:`RANGES_PER_THREAD` where there is no pool),
    claimed by whichever thread is free; 1 on one thread (the pool runs launches inline)."""
    threads = host_threads(backend)
    if threads <= 1:
        return 1
    per = getattr(getattr(backend, "pool", None), "ranges_per_thread", RANGES_PER_THREAD)
    return threads * (per if isinstance(per, int) and per > 0 else 1)


def spread(backend, tiles: int, workgroup_size: int, work: int | None = None) -> int:
    """Stride between the work-groups that compute tiles: on host-memory backends a launch
    of enough work-items for the thread pool to give every thread a part
    (:func:`accy.families.split_items` times :func:`host_threads`; idle groups return at
    once, as :func:`accy.families.tile_geometry` does for work-items); 1 elsewhere and on
    one thread. Each idle group still costs its guard (an integer division): the former
    fixed 65536 work-items gave a 256^2 f32 product 12 groups per tile on 2 threads, 6 now.
    ``work`` under :data:`MIN_PARALLEL_WORK`: 1 (the launch runs on the calling thread
    unless it is big in work-items anyway)."""
    if not host_like(backend) or tiles <= 0:
        return 1
    if work is not None and work < MIN_PARALLEL_WORK:
        return 1
    threads = host_threads(backend)
    if threads <= 1:
        return 1
    return max(1, ceil_div(threads * split_items(backend), tiles * workgroup_size))


def active(kb: KernelBuilder, cond, guard: bool):
    """``if cond:`` around a kernel body with barriers where ``guard`` (host targets: the
    idle work-groups of :func:`spread`), else nothing (device targets launch one group per
    panel or tile, all active). The condition is uniform over the group, so the barriers
    inside are reached by all of its work-items or none, but PoCL miscomputed a body with
    barriers inside such a branch (see :mod:`accy_kernels.matmul_gemv`): device targets do
    not get one."""
    return kb.if_(cond) if guard else contextlib.nullcontext()
