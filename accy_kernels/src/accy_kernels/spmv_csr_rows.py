"""``spmv.csr_scalar`` on the CPU: blocks of rows per work-item, short rows without branches,
the structure check fused in.

The generic whole-rows kernel (:func:`accy_kernels.spmv_csr_scalar.csr_scalar_kernel`, one
work-item per row) spent most of a small matrix's time outside the products: a separate
check pass over ``indptr`` and ``indices``, two row-pointer loads per row, and a loop per
row whose exit mispredicts whenever row lengths vary (a few cycles of work, ~15 of
mispredict). This kernel, for the CPU backend only, computes the same sums in the same order
(the order of :mod:`accy_kernels.spmv_csr_scalar`, so the same bits) with:

* **work-item = a block of rows of about ``BLOCK_WORK`` rows + entries**
  (:func:`block_starts`: rows ``[starts[t], starts[t + 1])``, balanced by nonzeros as
  merge-path balances, Merrill & Garland, SC'16, but never splitting a row), so the pool's
  even split of work-groups is an even split of work whatever the row lengths; each row's
  first entry is the previous row's end (one row-pointer load per row). ``starts`` is made
  from ``indptr`` once and owned by the caller: any non-decreasing partition of the rows is
  correct, so an in-place edit of ``indptr`` later only unbalances it;
* **the check fused in** (``checked=True``): before reading through them, work-item ``t``
  checks its block's row pointers (every value in ``[0, size]``, non-decreasing) and column
  indices (in ``[0, n_cols)``) in two loops that LLVM vectorizes, from data that the product
  then finds in L1, and stores ``t`` into ``err[0]`` (computing nothing) when one is out of
  range; the rules are those of :mod:`accy_kernels.spmv_csr_check`, checked over the union
  of the blocks (so the separate pass over the indices is gone);
* **short rows straight-line** (``1 <= L <= slots``): ``slots`` products of the entries
  ``first, first + 1, ...`` (those past the row, within the block's entries, read but
  discarded by a floating-point mask — an ``and`` with a compare, so no branch), added left
  to right from +0.0; a masked slot adds +0.0, which leaves a sum started at +0.0
  unchanged (it is never -0.0), so the result is scipy's bit for bit. The compare is made
  in floating point on purpose: an integer-conditioned select of a double becomes a branch
  in x86 code generation, which is what this avoids;
* **other rows** as the generic kernel: fewer than ``SHORT_ROW`` entries left to right, longer
  ones in ``CHAINS`` = 4 interleaved partial sums then the tail.

``slots`` (and ``exact``: an unmasked arm for rows of exactly that width) is chosen per
matrix from its row lengths (:func:`choose_slots`). Measured on the 2-core AMD EPYC (Zen 3,
f64, in cache, one thread, CPU time under load 5-6; the generic kernel plus its check pass
-> this one): 494_bus 2.0 -> 1.6 us, cryg2500 (rows of 3-5) 11.4 -> 7.4 us, rajat01 40 ->
33 us, pushpull 111 -> 107 us, power-law 2M rows ~305 -> ~316 ms (memory-bound: within
noise). The rows are bound by instruction throughput, ~1.3-1.6 cycles a nonzero (index
load, value load, multiply by ``x`` from memory, add; compare and mask for masked slots);
the fused check costs 10-15 % of that in cache (the indices streamed into L1 ahead of the
product; unchecked, as for ``prepare_spmv``'s own copies, 6.7 us on cryg2500), and saves a
pass over the indices out of cache. Sources: Bell & Garland (SC'09) for CSR scalar; the
masked fixed-width row is the per-row form of SELL-C-σ's padding (Kreutzer et al., SIAM J.
Sci. Comput. 2014) without a stored layout.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.errors import InputError
from accy.kernel import E, KernelBuilder, call, where

from accy_kernels.spmv_csr_scalar import SHORT_ROW, sum_row

__all__ = ["BLOCK_WORK", "EXACT_SHARE", "MAX_SLOTS", "SAMPLE_ROWS", "block_starts",
           "choose_slots", "csr_rows_kernel", "rows_kernel_for", "rows_scalars",
           "sampled_slots"]

#: rows + entries per work-item (a block's indices and values stay in L1 from its check to
#: its product)
BLOCK_WORK = 1024
#: the most straight-line slots (rows of SHORT_ROW or more entries are summed in chains)
MAX_SLOTS = SHORT_ROW - 1


def block_starts(indptr: np.ndarray, work: int | None = None) -> np.ndarray:
    """``(blocks + 1,)`` int32 first rows of the blocks of :func:`csr_rows_kernel` (the
    launch has ``blocks`` work-groups of one work-item): block ``t`` is rows
    ``[starts[t], starts[t + 1])``, about ``work`` rows + entries each (a row longer than
    that is a block of its own; ``work`` None: ``BLOCK_WORK``). ``indptr`` must be
    non-decreasing (checked before)."""
    work = work or BLOCK_WORK
    n = indptr.size - 1
    if n <= 0:
        return np.zeros(1, np.int32)
    w = indptr.astype(np.int64) + np.arange(n + 1)  # work before each row: increasing
    blocks = max(1, -(-int(w[-1] - w[0]) // work))
    cuts = np.searchsorted(w, w[0] + np.arange(1, blocks, dtype=np.int64) * work)
    return np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int32)


def rows_scalars(n_rows: int, n_cols: int, size: int) -> list[tuple[str, int]]:
    """The kernel's scalars: rows, columns, stored entries (``min(indices.size,
    data.size)``)."""
    return [("i32", n_rows), ("i32", n_cols), ("i32", size)]


def choose_slots(indptr: np.ndarray) -> tuple[int, bool]:
    """``(slots, exact)`` for a matrix's row lengths (``np.diff(indptr)``): the
    straight-line width in ``1..MAX_SLOTS`` of least estimated cost (0: no straight-line
    rows, when most rows are long), and whether rows of exactly that width get their own
    unmasked arm (when at least ``EXACT_SHARE`` of the rows have it: the arm's branch then
    seldom mispredicts). Cost model, in the time of one slot (fit to the Zen 3 runs of the
    module docstring): a straight-line row costs its ``slots`` slots; any other row of fewer
    than ``SHORT_ROW`` entries a mispredicted loop exit (``MISS`` slots) plus a slot an
    entry; longer rows cost the same whatever the width."""
    return _choose(np.diff(np.asarray(indptr, dtype=np.int64)))


#: a mispredicted loop exit, in slots (see choose_slots)
MISS = 4.0
#: the share of rows of exactly the width from which they get an unmasked arm: on
#: cryg2500 (94 % of rows of 5 entries) 12 % faster; on rajat01 (mixed lengths) the arm's
#: mispredicts made it 9 % slower
EXACT_SHARE = 0.85
#: rows whose lengths :func:`sampled_slots` looks at
SAMPLE_ROWS = 4096


def _choose(lengths: np.ndarray) -> tuple[int, bool]:
    if lengths.size == 0:
        return 0, False
    counts = np.bincount(np.clip(lengths, 0, SHORT_ROW), minlength=SHORT_ROW + 1)
    looped = np.arange(SHORT_ROW + 1, dtype=np.float64) + MISS
    looped[SHORT_ROW] = MISS  # long rows: the same whatever the width
    best, best_cost = 0, float(counts @ looped)
    for s in range(1, MAX_SLOTS + 1):
        cost = counts[1:s + 1].sum() * s + counts[s + 1:] @ looped[s + 1:] + counts[0] * MISS
        if cost < best_cost - 1e-9:
            best, best_cost = s, cost
    return best, bool(best and counts[best] >= EXACT_SHARE * lengths.size)


def sampled_slots(indptr: np.ndarray) -> tuple[int, bool]:
    """:func:`choose_slots` from at most ``SAMPLE_ROWS`` rows spread evenly over the matrix
    (a call costs microseconds whatever its size; the choice changes only the speed, never
    the result)."""
    n = indptr.size - 1
    if n <= SAMPLE_ROWS:
        return choose_slots(indptr)
    rows = np.linspace(0, n - 1, SAMPLE_ROWS).astype(np.int64)
    return _choose(indptr[rows + 1].astype(np.int64) - indptr[rows])


def rows_kernel_for(dtype: str, indptr: np.ndarray, checked: bool = True):
    """:func:`csr_rows_kernel` of the shape :func:`sampled_slots` picks for ``indptr``."""
    slots, exact = sampled_slots(indptr)
    return csr_rows_kernel(dtype, slots, checked, exact)


@functools.cache
def csr_rows_kernel(dtype: str, slots: int, checked: bool = True, exact: bool = False):
    """Buffers (err i32 readwrite — only when ``checked`` —, y readwrite, starts i32,
    indptr i32, indices i32, data, x); scalars n_rows, n_cols, size (i32,
    :func:`rows_scalars`); one work-item per block of rows (``starts``:
    :func:`block_starts`), in work-groups of one.

    ``checked``: check the block's structure first and store the work-item's index into
    ``err[0]`` instead of computing when it is bad (see the module docstring); unchecked,
    the arrays must be well-formed (checked on the host, or ``prepare_spmv``'s own copies).
    ``slots`` in ``0..MAX_SLOTS``: rows of ``1..slots`` entries straight-line; ``exact``:
    rows of exactly ``slots`` entries in an arm of their own, without masks.

    Raises:
        InputError: ``slots`` out of range.
    """
    if not 0 <= slots <= MAX_SLOTS:
        raise InputError(f"spmv rows kernel: slots must be in 0..{MAX_SLOTS}, got {slots}")
    name = f"spmv_csr_rows_{dtype}_s{slots}{'_exact' if exact else ''}"
    kb = KernelBuilder(name + ("_checked" if checked else ""), 1)
    err = kb.buffer("err", "i32", "readwrite") if checked else None
    y = kb.buffer("y", dtype, "readwrite")
    starts = kb.buffer("starts", "i32", "read")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    kb.scalar("n_rows", "i32")
    n_cols, size = kb.scalar("n_cols", "i32"), kb.scalar("size", "i32")
    t = kb.global_id()
    r0, r1 = kb.let("r0", starts[t]), kb.let("r1", starts[t + 1])
    with kb.if_(r0 < r1):
        if checked:
            # row pointers in [0, size] (unsigned max), each <= the next (min step)
            top = kb.let("top", indptr[r1].cast("u32"))
            step = kb.let("step", kb.const(0, "i32"))
            with kb.for_("i", r0, r1) as i:
                kb.assign(top, call("max", top, indptr[i].cast("u32")))
                kb.assign(step, call("min", step, indptr[i + 1] - indptr[i]))
            with kb.if_((top > size.cast("u32")) | (step < 0)):
                kb.store(err, 0, t)
            with kb.else_():
                e0, e1 = kb.let("e0", indptr[r0]), kb.let("e1", indptr[r1])
                col = kb.let("col", kb.const(0, "u32"))
                with kb.for_("j", e0, e1) as j:
                    kb.assign(col, call("max", col, indices[j].cast("u32")))
                with kb.if_((col >= n_cols.cast("u32")) & (e0 < e1)):
                    kb.store(err, 0, t)
                with kb.else_():
                    _rows(kb, dtype, slots, exact, y, indptr, indices, data, x, r0, r1, e0, e1)
        else:
            e0, e1 = kb.let("e0", indptr[r0]), kb.let("e1", indptr[r1])
            _rows(kb, dtype, slots, exact, y, indptr, indices, data, x, r0, r1, e0, e1)
    return kb.build()


def _rows(kb: KernelBuilder, dtype: str, slots: int, exact: bool, y, indptr, indices,
          data, x, r0: E, r1: E, e0: E, e1: E) -> None:
    """Rows ``[r0, r1)`` whose entries are ``[e0, e1)`` (checked, or trusted)."""
    zero = kb.const(0, dtype)
    first = kb.let("first", e0)
    with kb.for_("r", r0, r1) as r:
        last = kb.let("last", indptr[r + 1])
        n = kb.let("n", last - first)
        acc = kb.let("acc", zero)
        if not slots:
            _looped(kb, dtype, indices, data, x, first, last, acc)
        else:
            # the slots' reads within the block's (checked) entries
            fits = kb.let("fits", first + slots <= e1)
            if exact:  # rows of exactly ``slots`` entries, without masks
                with kb.if_((n == slots) & fits):
                    _straight(kb, dtype, indices, data, x, first, n, acc, slots, False)
                with kb.else_():
                    _masked_or_looped(kb, dtype, indices, data, x, first, last, n, acc,
                                      slots, fits)
            else:
                _masked_or_looped(kb, dtype, indices, data, x, first, last, n, acc, slots,
                                  fits)
        kb.store(y, r, acc)
        kb.assign(first, last)


def _masked_or_looped(kb: KernelBuilder, dtype: str, indices, data, x, first: E, last: E,
                      n: E, acc: E, slots: int, fits: E) -> None:
    with kb.if_(((n - 1).cast("u32") < slots) & fits):  # 1 <= n <= slots
        _straight(kb, dtype, indices, data, x, first, n, acc, slots, True)
    with kb.else_():
        _looped(kb, dtype, indices, data, x, first, last, acc)


def _straight(kb: KernelBuilder, dtype: str, indices, data, x, first: E, n: E, acc: E,
              slots: int, masked: bool) -> None:
    """``acc`` (+0.0) += the ``slots`` entries from ``first``, left to right; ``masked``:
    those at ``n`` or past it add +0.0 (``n - 0.5 > k`` in floating point: and-masks, not
    branches, see the module docstring)."""
    f = kb.let("f", first.cast("i64"))
    zero = kb.const(0, dtype)
    half = kb.let("half", n.cast(dtype) - 0.5) if masked else None
    kb.assign(acc, acc + data[f] * x[indices[f]])  # +0.0 + p: never -0.0
    for k in range(1, slots):
        p = data[f + k] * x[indices[f + k]]
        kb.assign(acc, acc + (where(half > float(k), p, zero) if masked else p))


def _looped(kb: KernelBuilder, dtype: str, indices, data, x, first: E, last: E,
            acc: E) -> None:
    """``acc`` (+0.0) += the row ``[first, last)`` in the order of ``spmv_csr_scalar``."""
    sum_row(kb, dtype, indices, data, x, first, last, acc)
