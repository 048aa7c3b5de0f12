"""The dense families' Python API: gather, scatter, scatter_add, segment_sum, scan, filter,
sort, argsort, sort_pairs (numpy in, numpy out; checks on the host before any launch)."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from accy.errors import InputError, UnsupportedError
from accy.families import (
    Candidate,
    IndexOutOfRangeError,
    as_array,
    check_dtype,
    check_indices,
    check_mode,
    normalize_axis,
)

from accy_kernels._common import MAX_ELEMS, VALUE_DTYPES
from accy_kernels._dispatch import call, pick_accumulate, require_atomic_add

__all__ = ["argsort", "filter", "gather", "scan", "scatter", "scatter_add", "segment_sum",
           "sort", "sort_pairs"]

ADDABLE = ("f32", "f64", "i32", "i64")
Backend = Any


def _check_size(n: int, family: str) -> None:
    if n > MAX_ELEMS:
        raise UnsupportedError(f"{family}: {n} elements exceed the limit of {MAX_ELEMS} "
                               f"(32-bit work-item ids); split the input", feature="size")


def _axis_array(arr: np.ndarray, axis: int, family: str) -> tuple[np.ndarray, int]:
    if arr.ndim == 0:
        raise InputError(f"{family}: expected an array with at least 1 dimension, got a scalar")
    return arr, normalize_axis(axis, arr.ndim, family)


def _atomic_variant(family: str, variant: str | None, dtype: str, backend: Backend,
                    size: int = 0, total: int = 0) -> str:
    """The variant to run: when unset, ``privatized`` where per-thread histograms of ``size``
    outputs for ``total`` values pay off (host-memory backends), else by capability
    (``atomic`` where the backend has atomic add on ``dtype``, else ``sorted``); an explicit
    ``atomic`` is refused before launch when the backend lacks it."""
    name = variant or pick_accumulate(backend, dtype, size, total)
    if name.split(".")[-1] == "atomic":
        require_atomic_add(family, "atomic", dtype, backend)
    return name


def gather(src: Any, indices: Any, axis: int = 0, mode: str = "raise", *,
           backend: Backend = "cpu", variant: str | None = None,
           candidate: Candidate | None = None) -> np.ndarray:
    """Take elements of ``src`` at ``indices`` along ``axis`` (like ``numpy.take``).

    Args:
        src: array ``(*pre, n, *post)`` of f32 | f64 | i32 | i64 | u32 (host).
        indices: integer array ``(*idx,)`` (int32 | int64); negative counts from the end.
        axis: the axis of ``src`` indexed.
        mode: ``"raise"`` (range-checked inside the gather kernel), ``"clip"`` (clamp to
            ``[0, n-1]``, negative → 0) or ``"wrap"`` (modulo ``n``).

    Returns:
        array ``(*pre, *idx, *post)`` of ``src``'s dtype.

    Passes over memory: 1 (minimum 1): the indices and the gathered elements read, the
    output written, once.

    Raises:
        IndexOutOfRangeError: (an ``IndexError``) ``mode="raise"`` and an index is outside
            ``[-n, n)``; names the first bad position.
        UnsupportedError: unsupported dtype (complex, bool, float16, ...).
        InputError: bad axis or mode.
    """
    src, axis = _axis_array(as_array(src, "gather src"), axis, "gather")
    indices = as_array(indices, "gather indices")
    dtype = check_dtype(src, "src", VALUE_DTYPES, "gather")
    mode = check_mode(mode, "gather")
    out_size = math.prod(src.shape[:axis]) * indices.size * math.prod(src.shape[axis + 1:])
    _check_size(max(out_size, src.size, indices.size), "gather")  # before reading indices
    idt = check_indices(indices, src.shape[axis], "gather", mode, check_range=False)
    return call("gather", variant, backend, candidate, src=src, indices=indices, axis=axis,
                mode=mode, dtype=dtype, index_dtype=idt)


def _scattered_size(dst: np.ndarray, indices: np.ndarray, axis: int) -> int:
    """Elements the kernels index for a scatter: ``dst``, the indices and the values
    (``dst.shape[:axis] + indices.shape + dst.shape[axis+1:]``), from the shapes alone."""
    values = math.prod(dst.shape[:axis]) * indices.size * math.prod(dst.shape[axis + 1:])
    return max(dst.size, indices.size, values)


def _broadcast_values(values: Any, dst: np.ndarray, indices: np.ndarray, axis: int,
                      dtype_name: str, family: str) -> np.ndarray:
    values = as_array(values, f"{family} values")
    target = dst.shape[:axis] + indices.shape + dst.shape[axis + 1:]
    try:
        b = np.broadcast_to(values, target)
    except ValueError:
        raise InputError(f"{family}: values of shape {list(values.shape)} do not broadcast to "
                         f"{list(target)} (dst.shape[:axis] + indices.shape + "
                         f"dst.shape[axis+1:])") from None
    if values.dtype != dst.dtype:
        if values.dtype.kind == "c" or not np.can_cast(values.dtype, dst.dtype, "same_kind"):
            raise UnsupportedError(f"{family}: values dtype {values.dtype} cannot be cast to "
                                   f"dst dtype {dst.dtype} ({dtype_name}); convert them first",
                                   feature=f"dtype {values.dtype}")
    return np.ascontiguousarray(b, dtype=dst.dtype)


def scatter(dst: Any, indices: Any, values: Any, axis: int = 0, mode: str = "raise", *,
            backend: Backend = "cpu", variant: str | None = None,
            candidate: Candidate | None = None) -> np.ndarray:
    """Return a copy of ``dst`` with ``values`` written at ``indices`` along ``axis``.

    Duplicate indices: the value from the **last** position in ``indices`` (row-major) wins,
    on every backend and launch geometry (as sequential ``out[indices] = values``).

    Args:
        dst: array ``(*pre, n, *post)`` of f32 | f64 | i32 | i64 | u32.
        indices: int32 | int64 array ``(*idx,)``; negative counts from the end.
        values: broadcastable to ``(*pre, *idx, *post)``, castable to ``dst.dtype``.
        mode: ``"raise"`` | ``"clip"`` | ``"wrap"`` as :func:`gather`.

    Raises:
        IndexOutOfRangeError: out-of-range index with ``mode="raise"`` (before launch).
        UnsupportedError: unsupported dtype. InputError: shapes do not broadcast.

    Passes over memory: 4 with ``mode="raise"`` (the host range check over the indices, the
    copy of ``dst``, the winner pass over the indices, the write pass over indices and
    values), 3 otherwise; minimum 3 (the range check inside the winner pass).
    """
    dst, axis = _axis_array(as_array(dst, "scatter dst"), axis, "scatter")
    indices = as_array(indices, "scatter indices")
    dtype = check_dtype(dst, "dst", VALUE_DTYPES, "scatter")
    mode = check_mode(mode, "scatter")
    _check_size(_scattered_size(dst, indices, axis), "scatter")  # before reading or copying
    idt = check_indices(indices, dst.shape[axis], "scatter", mode)
    vals = _broadcast_values(values, dst, indices, axis, dtype, "scatter")
    return call("scatter", variant, backend, candidate, dst=dst, indices=indices, values=vals,
                axis=axis, mode=mode, dtype=dtype, index_dtype=idt)


def scatter_add(dst: Any, indices: Any, values: Any, axis: int = 0, *,
                backend: Backend = "cpu", variant: str | None = None,
                candidate: Candidate | None = None) -> np.ndarray:
    """Return ``dst`` plus ``values`` accumulated at ``indices`` (``numpy.add.at`` on a copy).

    Args:
        dst: array ``(*pre, n, *post)`` of f32 | f64 | i32 | i64.
        indices: int32 | int64 ``(*idx,)``, in ``[-n, n)`` (checked inside the atomic and
            privatized kernels, on the host for ``sorted``); duplicates accumulate.
        values: broadcastable to ``(*pre, *idx, *post)``.

    Raises:
        IndexOutOfRangeError: an index is out of range. UnsupportedError: unsupported dtype.
        CapabilityError: ``variant="atomic"`` on a backend without atomic add on the dtype
            (``float_atomics`` for f32, ``float64_atomics``, ``int64_atomics``). With the
            variant unset, such a backend runs ``privatized`` on a lane device (lavapipe:
            few CPU threads; one private histogram per thread, when tiles x output <=
            values: ~6x faster than sorted at 65,536 f64 values; PoCL runs it even with
            atomics), else ``sorted`` (no
            atomics, deterministic: each target sums its values in index-position order, as
            ``numpy.add.at``).
            ``variant="privatized"`` on a backend with ``max_loop_iterations`` (lavapipe)
            when the private histograms cannot be sized under it.

    Passes over memory: atomic 2 (minimum 1: values and indices read once, plus the output
    copied from ``dst``), privatized 2 (values and indices once, then the per-tile
    histograms once; minimum 1 plus the histograms), sorted 5+ (host normalization, the
    radix sort of the indices, the sorted adds; minimum 1).

    Every variant keeps each work-item's loops under the backend's ``max_loop_iterations``
    (lavapipe: 65535): ``sorted`` sums a long run of one index over several launches in the
    same order, ``privatized`` uses more, shorter tiles.
    """
    dst, axis = _axis_array(as_array(dst, "scatter_add dst"), axis, "scatter_add")
    indices = as_array(indices, "scatter_add indices")
    dtype = check_dtype(dst, "dst", ADDABLE, "scatter_add")
    _check_size(_scattered_size(dst, indices, axis), "scatter_add")  # before any copy
    idt = check_indices(indices, dst.shape[axis], "scatter_add", "raise", check_range=False)
    vals = _broadcast_values(values, dst, indices, axis, dtype, "scatter_add")
    heuristic = _atomic_variant("scatter_add", variant, dtype, backend, dst.size, vals.size)
    return call("scatter_add", variant, backend, candidate, default_variant=heuristic,
                dst=dst, indices=indices,
                values=vals, axis=axis, dtype=dtype, index_dtype=idt)


def segment_sum(values: Any, segment_ids: Any, num_segments: int, *,
                backend: Backend = "cpu", variant: str | None = None,
                candidate: Candidate | None = None) -> np.ndarray:
    """Sum ``values`` rows by segment: ``out[s] = sum(values[i] where segment_ids[i] == s)``.

    Args:
        values: ``(n, *inner)`` of f32 | f64 | i32 | i64.
        segment_ids: int32 | int64 ``(n,)`` in ``[0, num_segments)`` (any order).
        num_segments: number of output rows (elements >= 0).

    Returns:
        ``(num_segments, *inner)``; empty segments are 0.

    Raises:
        IndexOutOfRangeError: an id is negative or ``>= num_segments`` (before launch).
        InputError: shapes disagree. UnsupportedError: unsupported dtype.
        CapabilityError: ``variant="atomic"`` on a backend without atomic add on the dtype
            (the unset variant then runs ``privatized`` or ``sorted``, as
            :func:`scatter_add`), or
            ``privatized`` under a loop limit it cannot meet (as :func:`scatter_add`).

    Passes over memory: 2 host passes over the ids (range, then negativity) plus the
    :func:`scatter_add` variant's own with its range check off (atomic: 1); minimum 1.
    """
    values = as_array(values, "segment_sum values")
    ids = as_array(segment_ids, "segment_sum segment_ids")
    if values.ndim == 0 or ids.shape != values.shape[:1]:
        raise InputError(f"segment_sum: segment_ids must have shape (n,) = values.shape[:1], "
                         f"got {list(ids.shape)} for values {list(values.shape)}")
    dtype = check_dtype(values, "values", ADDABLE, "segment_sum")
    if isinstance(num_segments, (bool, np.bool_)):
        raise InputError(f"segment_sum: num_segments must be an integer, got {num_segments!r}")
    try:
        num_segments = operator.index(num_segments)
    except TypeError:
        raise InputError(f"segment_sum: num_segments must be an integer, got "
                         f"{type(num_segments).__name__} {num_segments!r}") from None
    if num_segments < 0:
        raise InputError(f"segment_sum: num_segments must be >= 0, got {num_segments}")
    _check_size(max(num_segments * math.prod(values.shape[1:]), values.size), "segment_sum")
    idt = check_indices(ids, num_segments, "segment_sum", "raise")
    if ids.size and int(ids.min()) < 0:
        pos = int(np.argmax(ids < 0))
        raise IndexOutOfRangeError(
            f"segment_sum: segment id {int(ids[pos])} at position {pos} is negative; ids must "
            f"be in [0, {num_segments})", pos, int(ids[pos]), num_segments)
    heuristic = _atomic_variant("segment_sum", variant, dtype, backend,
                                num_segments * (values.size // max(1, len(values))),
                                values.size)
    return call("segment_sum", variant, backend, candidate, default_variant=heuristic,
                values=values, segment_ids=ids,
                num_segments=num_segments, dtype=dtype, index_dtype=idt)


def scan(x: Any, inclusive: bool = True, *, backend: Backend = "cpu",
         variant: str | None = None, candidate: Candidate | None = None) -> np.ndarray:
    """Prefix sum of the flattened ``x``: ``cumsum`` (inclusive) or shifted (exclusive, from 0).

    Args:
        x: f32 | f64 | i32 | i64 array (flattened); integer sums wrap like numpy's.

    Returns:
        1-D array of ``x.size`` elements, ``x``'s dtype. Float sums are associated per tile,
        so they can differ from ``numpy.cumsum`` by rounding.

    Raises:
        UnsupportedError: unsupported dtype.

    Passes over memory: 2 (tile sums read ``x``; the tile scans read it again and write the
    output); minimum 1 with a single-pass decoupled look-back scan (Merrill & Garland 2016).
    """
    x = as_array(x, "scan x")
    dtype = check_dtype(x, "x", ADDABLE, "scan")
    _check_size(x.size, "scan")
    return call("scan", variant, backend, candidate, x=x.reshape(-1), inclusive=bool(inclusive),
                dtype=dtype)


def filter(x: Any, mask: Any, *, backend: Backend = "cpu", variant: str | None = None,
           candidate: Candidate | None = None) -> np.ndarray:
    """Stream compaction: the elements of flattened ``x`` where ``mask`` is true, in order.

    Args:
        x: f32 | f64 | i32 | i64 | u32 array.
        mask: bool array of ``x``'s shape.

    Raises:
        InputError: ``mask`` shape differs or is not bool. UnsupportedError: bad dtype.

    Passes over memory: 3 (the mask scanned in two passes into positions, then ``x``, the
    mask and the positions read and the output written); minimum 1.
    """
    x = as_array(x, "filter x")
    mask = as_array(mask, "filter mask")
    dtype = check_dtype(x, "x", VALUE_DTYPES, "filter")
    if mask.dtype != np.bool_ or mask.shape != x.shape:
        raise InputError(f"filter: mask must be bool with x's shape {list(x.shape)}, got "
                         f"{mask.dtype} {list(mask.shape)}; use mask.astype(bool)")
    _check_size(x.size, "filter")
    return call("filter", variant, backend, candidate, x=x.reshape(-1), mask=mask.reshape(-1),
                dtype=dtype)


def _sort_input(x: Any, family: str, what: str = "x") -> tuple[np.ndarray, str]:
    x = as_array(x, f"{family} {what}")
    if x.ndim != 1:
        raise InputError(f"{family}: {what} must be 1-D, got shape {list(x.shape)}; "
                         f"flatten it or sort rows one by one")
    dtype = check_dtype(x, what, VALUE_DTYPES, family)
    _check_size(x.size, family)
    return x, dtype


def sort(x: Any, descending: bool = False, *, backend: Backend = "cpu",
         variant: str | None = None, candidate: Candidate | None = None) -> np.ndarray:
    """Sort 1-D ``x`` in ``numpy.sort`` order with an LSD radix sort.

    NaN sorts last (also when descending); -0.0 and +0.0 are equal and keep their input
    order; ±inf at the ends; NaN payloads and zero signs are preserved.

    Args:
        x: 1-D f32 | f64 | i32 | i64 | u32.
        descending: largest first (equal keys still in input order, NaN still last).

    Raises:
        UnsupportedError: unsupported dtype. InputError: not 1-D.

    Passes over memory (host backends, 11-bit digits): 7 for 32-bit keys (one histogram
    read, then 3 scatters each reading and writing the keys; 64-bit keys: 13); minimum 3,
    which 32-bit keys take on host backends from 2**20 keys unless a sample finds them
    crowded into a narrow range: one MSD split into 2048 buckets, each sorted in cache
    (:mod:`accy_kernels.sort_msd`).
    """
    x, dtype = _sort_input(x, "sort")
    return call("sort", variant, backend, candidate, keys=x, values=None, dtype=dtype,
                descending=bool(descending), mode="sort")


def argsort(x: Any, descending: bool = False, *, backend: Backend = "cpu",
            variant: str | None = None, candidate: Candidate | None = None) -> np.ndarray:
    """Return the stable sorting permutation of 1-D ``x`` (``numpy.argsort(kind="stable")``).

    Returns:
        int64 array ``(n,)``.

    Raises:
        UnsupportedError: unsupported dtype. InputError: not 1-D.

    Passes over memory: as :func:`sort` (7 for 32-bit keys, 13 for 64-bit; 3 with the MSD
    split, which 32-bit keys take as ``sort`` does), each scatter also moving the i32
    positions (widened to int64 by the last); minimum 3.
    """
    x, dtype = _sort_input(x, "argsort")
    return call("argsort", variant, backend, candidate, keys=x, values=None, dtype=dtype,
                descending=bool(descending), mode="argsort")


def sort_pairs(keys: Any, values: Any, descending: bool = False, *, backend: Backend = "cpu",
               variant: str | None = None,
               candidate: Candidate | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sort ``keys`` stably and permute ``values`` alongside.

    Args:
        keys: 1-D f32 | f64 | i32 | i64 | u32 ``(n,)``.
        values: 1-D ``(n,)`` of any of those dtypes.

    Returns:
        ``(sorted_keys, values_in_key_order)``.

    Raises:
        InputError: lengths differ. UnsupportedError: unsupported dtype.
    """
    keys, dtype = _sort_input(keys, "sort_pairs", "keys")
    values, _ = _sort_input(values, "sort_pairs", "values")
    if values.shape != keys.shape:
        raise InputError(f"sort_pairs: values must have the keys' shape {list(keys.shape)}, "
                         f"got {list(values.shape)}")
    return call("sort_pairs", variant, backend, candidate, keys=keys, values=values,
                dtype=dtype, descending=bool(descending), mode="pairs")
