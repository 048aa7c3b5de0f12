"""``scatter_add.sorted``: ``numpy.add.at`` without atomics, deterministic on every backend.

The indices (normalized to ``[0, n)`` on the host) are sorted stably on the device with the
radix ``sort_pairs`` family, carrying their positions along. Then one work-item per output
element ``(o, t, k)`` finds the run of sorted keys equal to ``t`` by two binary searches
(lower bounds of ``t`` and ``t + 1``) and adds ``values[o, position, k]`` for the positions of
that run in increasing order, starting from ``dst[o, t, k]`` (or 0).

On a device that ends work-items after ``max_loop_iterations`` loop iterations (lavapipe)
a run longer than the budget is summed over several launches, each continuing from the
partial sum the previous one stored (same order, same result).

Summation order: exactly ``numpy.add.at``'s, i.e. ``((dst + v[p0]) + v[p1]) + ...`` over the
positions ``p0 < p1 < ...`` holding ``t``, so float results are bitwise reproducible and equal
to the sequential reference. Needs no atomics at all, so it serves backends without float
(or 64-bit) atomics; the default variant is chosen by capability (see ``_dispatch``).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan, check_indices
from accy.kernel import E, KernelBuilder, where

from accy_kernels._common import groups_for, launch_windows, window

__all__ = ["launch_sorted_add", "lower_bound", "run", "sorted_add_kernel", "sorted_keys"]


def lower_bound(kb: KernelBuilder, keys: E, count: E, steps: E, value: E, name: str) -> E:
    """Return (as a new variable) the first position ``p < count`` with ``keys[p] >= value``
    (``count`` when none) in ascending ``keys`` (i32); ``steps >= bit_length(count) + 1``.

    The search is a fixed-trip loop of selects (no data-dependent exit), and it only reads
    ``keys[mid]`` for ``lo <= mid < hi <= count``; inactive steps read ``keys[0]``, so the
    buffer must hold at least one element.
    """
    lo = kb.let(f"{name}_lo", kb.const(0, "i32"))
    hi = kb.let(f"{name}_hi", count)
    with kb.for_(f"{name}_step", 0, steps):
        active = lo < hi
        # lo + (hi - lo) / 2, not (lo + hi) / 2: that wraps for counts above 2**30
        mid = kb.let(f"{name}_mid", where(active, lo + (hi - lo) / 2, kb.const(0, "i32")))
        less = kb.let(f"{name}_less", keys[mid] < value)
        kb.assign(lo, where(active & less, mid + 1, lo))
        kb.assign(hi, where(active & ~less, mid, hi))
    return lo


@functools.cache
def sorted_add_kernel(dtype: str, has_dst: bool, workgroup_size: int):
    """Buffers (out readwrite, [dst read,] values read, skeys i32, order i32); scalars total,
    n, inner, m, steps, skip, limit (i32).

    One launch adds the run positions ``[lo + skip, min(hi, lo + skip + limit))``; the
    launch with ``skip == 0`` starts from ``dst`` (or 0), later ones from ``out``, so a long
    run split over launches (a loop budget, :func:`launch_sorted_add`) keeps numpy's order.
    """
    kb = KernelBuilder(f"scatter_add_sorted_{dtype}_{int(has_dst)}_wg{workgroup_size}",
                       workgroup_size)
    out = kb.buffer("out", dtype, "readwrite")
    dst = kb.buffer("dst", dtype, "read") if has_dst else None
    values = kb.buffer("values", dtype, "read")
    skeys, order = kb.buffer("skeys", "i32", "read"), kb.buffer("order", "i32", "read")
    total, n, inner = kb.scalar("total", "i32"), kb.scalar("n", "i32"), kb.scalar("inner", "i32")
    m, steps = kb.scalar("m", "i32"), kb.scalar("steps", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    g = kb.global_id()
    with kb.if_(g < total):
        ni = n * inner
        o = kb.let("o", g / ni)
        r = kb.let("r", g % ni)
        t = kb.let("t", r / inner)
        k = kb.let("k", r % inner)
        lo = lower_bound(kb, skeys, m, steps, t, "lo")
        hi = lower_bound(kb, skeys, m, steps, t + 1, "hi")
        start = dst[g] if dst is not None else kb.const(0, dtype)
        acc = kb.let("acc", where(skip == 0, start, out[g]))
        first, last = window(kb, lo, hi, skip, limit, "run")
        base = kb.let("base", o * m)
        with kb.for_("p", first, last) as p:
            kb.assign(acc, acc + values[(base + order[p]) * inner + k])
        kb.store(out, g, acc)
    return kb.build()


def launch_sorted_add(plan, backend, slots: list, has_dst: bool, dtype: str, size: int, n: int,
                      inner: int, m: int, longest: int, workgroup_size: int) -> None:
    """Append the launches of :func:`sorted_add_kernel` for runs of up to ``longest``
    positions: one launch, or several of at most the backend's loop budget (less the two
    binary searches) each."""
    steps = m.bit_length() + 1
    launch_windows(plan, backend, sorted_add_kernel(dtype, has_dst, workgroup_size),
                   groups_for(size, workgroup_size), slots,
                   [("i32", size), ("i32", n), ("i32", inner), ("i32", m), ("i32", steps)],
                   longest, 2 * steps, "scatter_add.sorted", loops=3)


def sorted_keys(backend, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(keys sorted stably, their positions)`` (both int32) via ``sort_pairs``."""
    from accy_kernels._families import _SORT_VARIANT
    from accy_kernels.sort_radix import run as radix_run

    positions = np.arange(keys.size, dtype=np.int32)
    skeys, order = radix_run(backend, _SORT_VARIANT.candidates[0], keys.astype(np.int32),
                             positions, "i32", False, "pairs")
    return skeys.astype(np.int32, copy=False), order.astype(np.int32, copy=False)


def _longest_run(sorted_keys: np.ndarray) -> int:
    """The most positions holding one key (``sorted_keys`` ascending, not empty)."""
    change = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    bounds = np.concatenate(([0], change, [sorted_keys.size]))
    return int(np.diff(bounds).max())


def run(backend, candidate: Candidate, dst: np.ndarray | None, indices: np.ndarray,
        values: np.ndarray, axis: int, dtype: str, index_dtype: str,
        shape: tuple[int, ...] | None = None, mode: str = "raise",
        range_checked: bool = False) -> np.ndarray:
    """Return ``dst`` (or zeros of ``shape`` when ``dst`` is None) plus the scattered sums.

    Indices are range-checked on the host here unless the caller did (``range_checked``).

    Raises:
        IndexOutOfRangeError: an index is outside ``[-n, n)``.
    """
    shape = dst.shape if dst is not None else tuple(shape or ())
    if not range_checked:
        check_indices(indices, shape[axis], "scatter_add", "raise")
    size = int(np.prod(shape, dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    n, m = shape[axis], indices.size
    np_dtype = values.dtype
    if size == 0 or m == 0:
        return dst.copy() if dst is not None else np.zeros(shape, np_dtype)
    idx = indices.reshape(-1).astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)  # range-checked above or by the caller
    skeys, order = sorted_keys(backend, idx)
    wg = candidate.workgroup_size
    plan = Plan("scatter_add.sorted")
    out = plan.output(dtype, size)
    slots = [out]
    if dst is not None:
        slots.append(plan.param(dst, dtype))
    slots += [plan.param(values, dtype), plan.param(skeys, "i32"), plan.param(order, "i32")]
    launch_sorted_add(plan, backend, slots, dst is not None, dtype, size, n, inner, m,
                      _longest_run(skeys), wg)
    (result,) = plan.run(backend)
    return result.reshape(shape)
