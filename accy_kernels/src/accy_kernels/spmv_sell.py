"""``spmv.sell``: SELL-C-σ sparse matrix–vector product.

Format of Kreutzer, Hager, Wellein, Fehske & Bishop, "A Unified Sparse Matrix Data Format for
Efficient General Sparse Matrix-Vector Multiplication on Modern Processors with Wide SIMD
Units", SIAM J. Sci. Comput. 36(5), 2014: rows are sorted by descending length inside
windows of ``σ`` rows (stable; ``σ = 1`` keeps the order), cut into slices of ``C``
consecutive rows, and each slice is stored column-major padded to its longest row
(``vals[slice_ptr[s] + k * C + lane]``; padding has column -1 and is skipped without
reading ``x``). One work-item per (permuted) row writes
``y[perm[i]]``. Options: ``C`` (rows per slice, default 32) and ``sigma`` (window in rows,
default 256; rounded to a multiple of ``C`` unless 1). Under a loop budget
(``max_loop_iterations``, lavapipe) slices wider than it take several launches.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np
from accy.errors import InputError
from accy.families import Candidate, Plan
from accy.families.runner import _CAPTURE
from accy.kernel import KernelBuilder, where

from accy_kernels._common import ceil_div, groups_for, launch_windows, window
from accy_kernels._layout_cache import cached_layout
from accy_kernels.sparse_api import csr_arrays
from accy_kernels.spmv_csr_check import check_host
from accy_kernels.spmv_ell import PAD

__all__ = ["fast_sell", "run", "sell_kernel", "sell_layout", "sell_options"]


@functools.cache
def sell_kernel(dtype: str, c: int, workgroup_size: int):
    """Buffers (y readwrite, slice_ptr: i64, cols: i32, vals, perm: i32, x); scalars n_rows,
    skip, limit (i32): slice columns ``[skip, skip + limit)``, continuing ``y`` unless
    ``skip == 0``. Padding (column -1) is skipped without reading ``x``."""
    kb = KernelBuilder(f"spmv_sell_{dtype}_c{c}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    slice_ptr = kb.buffer("slice_ptr", "i64", "read")
    cols, vals = kb.buffer("cols", "i32", "read"), kb.buffer("vals", dtype, "read")
    perm, x = kb.buffer("perm", "i32", "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    i = kb.global_id()
    with kb.if_(i < n_rows):
        s = kb.let("s", i / c)
        row = kb.let("row", perm[i])
        base = kb.let("base", slice_ptr[s] + (i % c).cast("i64"))
        width = kb.let("width", (slice_ptr[s + 1] - slice_ptr[s]) / c)
        acc = kb.let("acc", where(skip == 0, kb.const(0, dtype), y[row]))
        first, last = window(kb, kb.const(0, "i64"), width, skip.cast("i64"),
                             limit.cast("i64"), "col")
        with kb.for_("k", first, last) as k:
            e = kb.let("e", base + k * c)
            col = kb.let("col", cols[e])
            with kb.if_(col >= 0):
                kb.assign(acc, acc + vals[e] * x[col])
        kb.store(y, row, acc)
    return kb.build()


def sell_layout(indptr, cols, data, n_rows: int, c: int, sigma: int):
    """Return ``(slice_ptr i64, cols i32, vals, perm i32)`` of SELL-C-σ (host arrays)."""
    lengths = np.diff(indptr).astype(np.int64)
    window = np.arange(n_rows) // max(sigma, 1)
    perm = np.lexsort((-lengths, window)) if sigma > 1 else np.arange(n_rows)
    n_slices = ceil_div(n_rows, c)
    sorted_len = np.zeros(n_slices * c, np.int64)
    sorted_len[:n_rows] = lengths[perm]
    widths = sorted_len.reshape(n_slices, c).max(axis=1) if n_slices else np.zeros(0, np.int64)
    slice_ptr = np.zeros(n_slices + 1, np.int64)
    np.cumsum(widths * c, out=slice_ptr[1:])
    total = int(slice_ptr[-1])
    out_cols = np.full(max(total, 1), PAD, np.int32)  # padding: skipped, never reads x
    out_vals = np.zeros(max(total, 1), data.dtype)
    inv = np.empty(n_rows, np.int64)
    inv[perm] = np.arange(n_rows)
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
    pos = np.arange(cols.size, dtype=np.int64) - np.repeat(indptr[:-1].astype(np.int64), lengths)
    i = inv[rows]
    dest = slice_ptr[i // c] + pos * c + i % c
    out_cols[dest] = cols
    out_vals[dest] = data
    return slice_ptr, out_cols, out_vals, perm.astype(np.int32)


def sell_options(options: dict, candidate: Any, n_rows: int) -> tuple[int, int]:
    """``(C, sigma)`` from the call's options (else the candidate's, else 32 and 256),
    clamped as :func:`run` documents.

    Raises:
        InputError: a non-integer, non-positive or unknown option.
    """
    opts = dict(options or {})
    option = candidate.option if candidate else (lambda _name, default: default)
    c = opts.pop("C", option("C", 32))
    sigma = opts.pop("sigma", option("sigma", 256))
    for what, v in (("C", c), ("sigma", sigma)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise InputError(f"spmv sell: {what} must be an integer number of rows, got {v!r}")
    c, sigma = int(c), int(sigma)
    if opts:
        raise InputError(f"spmv sell: unknown option(s) {', '.join(opts)}; known: C, sigma")
    if c < 1 or sigma < 1:
        raise InputError(f"spmv sell: C and sigma must be >= 1 rows, got C={c}, sigma={sigma}")
    # a slice taller than the matrix is padding only (C=2**40 allocated C rows on the host);
    # each row still sums its own entries in the same order, so the result is unchanged
    c = min(c, max(n_rows, 1))
    if sigma > 1:
        sigma = ceil_div(min(sigma, max(n_rows, 1)), c) * c
    return c, sigma


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None) -> np.ndarray:
    """Return ``A @ x`` through SELL-C-σ (options ``C``, ``sigma``).

    The layout is cached per matrix object and content (:mod:`accy_kernels._layout_cache`:
    a checksum of the CSR arrays every call); on the CPU the cached layout is also bound to
    its kernel once (:func:`accy_kernels.spmv_bound.bind_sell`), so a repeated call costs
    the checksum and one native call."""
    n_rows = A.shape[0]
    c, sigma = sell_options(options, candidate, n_rows)
    indptr, cols, data = csr_arrays(A, x.dtype, check=False)

    def build():
        check_host(indptr, cols, A.shape[1], min(cols.size, data.size))  # once per content
        # the last item holds the layout's bound products, and goes with the cache entry
        return (*sell_layout(indptr, cols, data, n_rows, c, sigma), {})

    # cached per matrix object + content checksum (see _layout_cache): solvers call repeatedly
    layout = cached_layout(A, ("sell", c, sigma, data.dtype.str), (indptr, cols, data), build)
    product = _bound(backend, layout, n_rows, c)
    if product is not None and type(x) is np.ndarray and x.flags.c_contiguous:
        _remember(A, options, backend, (indptr, cols, data), product, x)
        return product(x)
    slice_ptr, s_cols, s_vals, perm, _ = layout
    wg = candidate.workgroup_size
    plan = Plan("spmv.sell")
    y = plan.output(dtype, n_rows)
    slots = [plan.param(slice_ptr, "i64"), plan.param(s_cols, "i32"), plan.param(s_vals, dtype),
             plan.param(perm, "i32"), plan.param(x, dtype)]
    widest = int(np.diff(slice_ptr).max()) // c if slice_ptr.size > 1 else 0
    launch_windows(plan, backend, sell_kernel(dtype, c, wg), groups_for(n_rows, wg), [y, *slots],
                   [("i32", n_rows)], widest, 0, "spmv.sell")
    (result,) = plan.run(backend)
    return result


def _bound(backend: Any, layout: tuple, n_rows: int, c: int) -> Any:
    """The bound product of a layout on the CPU (made once per layout and backend object,
    kept in the layout's own holder), or None (another backend, a loop budget, no native
    calls, or a family sweep capturing the plan)."""
    from accy.families import backend_object, loop_budget

    from accy_kernels.spmv_bound import bind_sell, native_cpu

    if _CAPTURE.get() is not None:
        return None
    be = backend_object(backend)
    holder = layout[4]
    got = holder.get(id(be))
    if got is not None and got[0] is be:
        return got[1]
    if not native_cpu(be) or loop_budget(be) is not None:
        return None
    product = bind_sell(be, layout[:4], n_rows, c)
    holder[id(be)] = (be, product)
    return product


class _Memo:
    """A matrix's bound SELL product for :func:`fast_sell`."""

    __slots__ = ("ref", "arrays", "fp", "product", "token", "dtype", "x_shape")


#: (id(A), backend, options) -> _Memo; weak on the matrix, at most MEMO_ENTRIES (oldest out)
_MEMO: dict[tuple, _Memo] = {}
MEMO_ENTRIES = 16


def _memo_key(A: Any, options: Any, backend: Any) -> tuple | None:
    try:
        opts = tuple(sorted((options or {}).items()))
        hash(opts)
    except TypeError:
        return None
    from accy.families import backend_object

    return (id(A), id(backend_object(backend)), opts)  # a name and its live backend agree


def _remember(A: Any, options: Any, backend: Any, arrays: tuple, product: Any,
              x: np.ndarray) -> None:
    """Keep ``product`` for ``A`` when ``A``'s own arrays were bound (int32 CSR, values of
    ``x``'s dtype: nothing converted) — :func:`fast_sell` then skips the dispatch."""
    from accy_kernels.spmv_fast import _tuning_token

    if getattr(A, "format", None) != "csr" or arrays[0] is not A.indptr or \
            arrays[1] is not A.indices or arrays[2] is not A.data:
        return
    key = _memo_key(A, options, backend)
    if key is None:
        return
    m = _Memo()
    try:
        m.ref = weakref.ref(A)
    except TypeError:
        return
    # weakly: the layout cache's entry owns the product (and its layout), so an evicted
    # layout or a dead matrix is freed at once, never kept alive here
    m.arrays, m.fp, m.token = arrays, _content(arrays), _tuning_token()
    m.product = weakref.ref(product)
    m.dtype, m.x_shape = x.dtype, x.shape
    for k in [k for k, v in list(_MEMO.items()) if v.ref() is None]:
        _MEMO.pop(k, None)
    while len(_MEMO) >= MEMO_ENTRIES:
        _MEMO.pop(next(iter(_MEMO)), None)
    _MEMO[key] = m


def fast_sell(A: Any, x: Any, backend: Any, options: dict) -> np.ndarray | None:
    """``A @ x`` through the bound product a previous SELL call left for ``A``, or None
    (the ordinary path). The rule: ``A`` is the same object holding the same array objects,
    and their content hash (:func:`accy_kernels._layout_cache.fingerprint`) equals the one
    taken when the product was bound, so an in-place edit is never missed; the tuning cache
    is unchanged; ``x`` is a contiguous ndarray of the bound dtype and shape. SELL sums
    every row left to right whatever ``C``, ``sigma`` or the work-group size, so the result
    is the ordinary call's, bit for bit."""
    from accy_kernels import _layout_cache
    from accy_kernels._dispatch import _LAST
    from accy_kernels.spmv_fast import _tuning_token

    if type(x) is not np.ndarray or _LAST.capture is not None or _CAPTURE.get() is not None:
        return None
    key = _memo_key(A, options, backend)
    m = _MEMO.get(key) if key is not None else None
    if m is None or m.ref() is not A or x.dtype != m.dtype or x.shape != m.x_shape \
            or not x.flags.c_contiguous:
        return None
    arrays, product = m.arrays, m.product()
    if product is None or A.indptr is not arrays[0] or A.indices is not arrays[1] \
            or A.data is not arrays[2] or _tuning_token() != m.token \
            or _content(arrays) != m.fp:
        _MEMO.pop(key, None)
        return None
    _layout_cache._stats["hits"] += 1  # the cached layout served this call
    return product(x)


def _content(arrays: tuple) -> Any:
    """The content hash :func:`fast_sell` compares (the layout cache's, fewer steps: the
    arrays are A's own C-contiguous ones)."""
    from accy_kernels._layout_cache import fingerprint
    from accy_kernels.layout_hash import arrays_hash

    return arrays_hash(arrays) or fingerprint(arrays)
