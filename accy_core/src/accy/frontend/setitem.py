"""Writes into traced arrays: ``x[idx] = v``, ``x[idx] += v`` and ``x.at[idx].set(v)``.

A traced array has no memory to write into; ``x[idx] = v`` *rebinds* ``x`` to a new IR
value equal to ``x`` with ``v`` (broadcast, cast to ``x``'s dtype) at ``idx`` — a
functional update the memory planner may perform in place. What ``idx`` may be:

- basic indices (ints, slices with any step, ``None``, ``...``) on any number of axes:
  ``v`` is placed with ``tensor.pad`` (contiguous slices) or a gather (stepped ones) and
  selected under a per-axis mask (``arith.select``);
- one integer array (host or traced, negative host indices wrap) among basic indices:
  ``tensor.scatter`` along its axis (duplicates: the last write wins);
- several integer arrays (``x[i, j] = v``, with full slices between them): one scatter on
  the indexed axes flattened (:mod:`accy.frontend.multi_index`);
- a boolean mask over the leading axes (host or traced) with ``v`` broadcast to the rest:
  ``arith.select``; a host mask also takes one value per selected element;
- ``x[m] += v`` (and ``x[m] = x[m] * 2 + 1``) under a traced mask: the read is a pending
  :class:`~accy.frontend.masked_read.MaskedRead` computed over all of ``x``, written back
  as ``select(m, full, x)``; integer arrays (``x[i] += v``) follow numpy: repeated indices
  do not accumulate, the last write wins.

Views (:mod:`accy.frontend.views`) stay consistent: a write into a view reaches its base,
and a view read after its base was written is re-derived. A jitted function that writes
into one of its array arguments writes the result back into the caller's numpy array
(:mod:`accy.frontend.jit`).

``x.at[idx].set/add/multiply/mul/min/max(v)`` is the same update returning a new array
(``x`` unchanged); ``add`` with an integer array accumulates repeated indices like
``numpy.add.at`` (``tensor.scatter_add``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.dynamic_index import expand_index
from accy.frontend.indexing import (
    _gather,
    _index_value,
    arrays_with_scalars,
    getitem_value,
    host_mask,
    traced_lists,
)
from accy.frontend.masked_read import MaskedRead, masked_refusal
from accy.frontend.multi_index import is_multi, multi_update, split_partial
from accy.frontend.numpy_api import broadcast_shape, trace_of, value_of, wrap
from accy.frontend.same_value import same_value
from accy.frontend.trace import Trace, user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType, Value

__all__ = ["AtIndexer", "setitem", "updated"]

_COMBINE = {"add": "add", "mul": "mul", "min": "min", "max": "max"}


def _refuse(what: str, fix: str) -> UnsupportedError:
    return UnsupportedError(f"{what} at {user_location()} is not supported; {fix}",
                            feature=f"setitem: {what}", alternative=fix)


def setitem(x: Tracer, index: Any, values: Any) -> None:
    """``x[index] = values``: rebind ``x`` (and the base it is a view of) to the update.

    Raises:
        VerifyError: an index out of range, or ``values`` that do not broadcast to
            ``x[index]``'s shape (names the user's line).
        UnsupportedError: several integer arrays with a partial slice, a traced mask with
            one value per selected element.
    """
    if isinstance(values, MaskedRead):  # x[m] += v, x[m] = x[m] * 2 (same traced mask)
        values = _masked_write_back(x, index, values)
        index = values.mask
    tr = trace_of(x, values, *(index if isinstance(index, tuple) else (index,)))
    assert tr is not None
    new = updated(tr, x, index, values, "set")
    x._rebind(new)
    if x._view is not None:
        x._view.store(x)


class _FullUpdate:
    """A :class:`MaskedRead` being written back: ``full`` (``x``'s shape) under ``mask``."""

    def __init__(self, mask: Tracer, full: Tracer) -> None:
        self.mask, self.full = mask, full


def _masked_write_back(x: Tracer, index: Any, values: MaskedRead) -> _FullUpdate:
    same = isinstance(index, Tracer) and (index is values.mask or same_value(
        index.value, values.mask.value))
    if not same:
        raise _refuse("writing x[traced_mask] back under another index (a mask that is not "
                      "the same computation as the one read under)",
                      "compute the mask once and index with it twice: k = m < 0.3; "
                      "x[k] = x[k] * 3 + 1")
    if values.full.shape != x.shape:
        raise masked_refusal("writing x[traced_mask] into an array of another shape")
    return _FullUpdate(values.mask, values.full)


def updated(tr: Trace, x: Tracer, index: Any, values: Any, op: str) -> Value:
    """The IR value of ``x`` with ``values`` combined by ``op`` (set/add/mul/min/max)."""
    if isinstance(values, _FullUpdate):
        mv = tr.fb.broadcast_to(tr.fb.reshape(values.mask.value, values.mask.shape + (1,) * (
            x.ndim - values.mask.ndim)), x.shape)
        return tr.fb.select(mv, value_of(tr, values.full, x.accy_dtype), x.value)
    if isinstance(values, Tracer) and values.accy_dtype != x.accy_dtype:
        values = wrap(tr, tr.fb.cast(values.value, x.accy_dtype))
    from accy.frontend.dynamic_index import at_update, has_traced_scalar

    if has_traced_scalar(index) and not arrays_with_scalars(index):  # dynamic_update_slice
        how = {"mul": "multiply"}.get(op, op)
        return at_update(x, index, values, how).value
    mask = host_mask(index)
    if mask is not None or (isinstance(index, Tracer) and index.accy_dtype == DType.BOOL):
        return _masked(tr, x, index if mask is None else mask, values, op)
    items = traced_lists(expand_index(index, x.ndim))
    if is_multi(items):  # x[i, j] = v: one scatter on the indexed axes flattened
        split = split_partial(items, x.shape)
        if split is None:
            return multi_update(tr, x, items, values, op, _target_shape, updated)
        outer, inner = split  # x[0, 1:3, i] = v: the slice x[:, 1:3, :] updated at [0, :, i]
        sub = x[tuple(outer)]
        new = multi_update(tr, sub, inner, values, op, _target_shape, updated)
        return _basic_update(tr, x, outer, new, "set")
    arrays = [k for k, i in enumerate(items) if isinstance(i, (Tracer, list, np.ndarray))]
    if arrays:
        return _scattered(tr, x, items, arrays[0], values, op)
    shape = _target_shape(x, items)
    return _basic_update(tr, x, items, _values(tr, x, values, shape), op)


# ---------------------------------------------------------------- shapes and values
def _target_shape(x: Tracer, items: list[Any]) -> tuple[int, ...]:
    """numpy's shape of ``x[items]`` (a zero-size stand-in indexed by numpy)."""
    host = [np.zeros(i.shape, np.int64) if isinstance(i, Tracer) else i for i in items]
    try:
        return np.broadcast_to(np.zeros((), np.int8), x.shape)[tuple(host)].shape
    except IndexError as err:
        loc = user_location()
        raise VerifyError(f"assignment index at {loc}: {err}", position=loc) from None


def _values(tr: Trace, x: Tracer, values: Any, shape: tuple[int, ...]) -> Value:
    v = value_of(tr, values, x.accy_dtype)
    vs = v.type.shape
    while len(vs) > len(shape) and vs[0] == 1:  # numpy drops leading 1s of the values
        vs = vs[1:]
    if vs != v.type.shape:
        v = tr.fb.reshape(v, vs)
    out = broadcast_shape("x[idx] = v", vs, shape)
    if out != shape:
        raise VerifyError(f"assignment at {user_location()}: values of shape {list(vs)} "
                          f"cannot be broadcast to the indexed shape {list(shape)}")
    return tr.fb.broadcast_to(v, shape)


def _combine(tr: Trace, op: str, old: Value, new: Value) -> Value:
    return new if op == "set" else getattr(tr.fb, _COMBINE[op])(old, new)


# ---------------------------------------------------------------- basic indices
def _rows(items: list[Any], shape: tuple[int, ...]) -> list[np.ndarray]:
    """Per axis of ``x``: the positions ``items`` select (ints as one position)."""
    rows, axis = [], 0
    for ix in items:
        if ix is None:
            continue
        n = shape[axis]
        if isinstance(ix, slice):
            rows.append(np.arange(n)[ix])
        else:
            if isinstance(ix, (bool, np.bool_)) or not isinstance(ix, (int, np.integer)):
                raise _refuse(f"an index of type {type(ix).__name__}",
                              "index with ints, slices, None, '...', one integer array or a "
                              "boolean mask")
            if not -n <= int(ix) < n:
                raise VerifyError(f"index {int(ix)} at {user_location()} is out of range for "
                                  f"an axis of extent {n}")
            rows.append(np.array([int(ix) % n]))
        axis += 1
    return rows


def _basic_update(tr: Trace, x: Tracer, items: list[Any], v: Value, op: str) -> Value:
    """``x`` with the region ``items`` (basic indices) combined with ``v`` (target shape)."""
    fb, shape = tr.fb, x.shape
    rows = _rows(items, shape)
    if any(len(r) == 0 for r in rows):
        return x.value  # an empty region: nothing is written
    v = fb.reshape(v, tuple(len(r) for r in rows))
    old = x.value
    mask = None
    for axis, (r, n) in enumerate(zip(rows, shape, strict=True)):
        if len(r) == n and (r == np.arange(n)).all():
            continue
        if (np.diff(r) == 1).all() and x.accy_dtype != DType.BOOL:
            low, high = [0] * len(shape), [0] * len(shape)
            low[axis], high[axis] = int(r[0]), n - int(r[-1]) - 1
            v = fb.pad(v, low, high)
        else:
            inv = np.zeros(n, np.int64)
            inv[r] = np.arange(len(r))
            v = _gather(tr, v, inv, axis)
        sel = np.zeros(n, np.bool_)
        sel[r] = True
        one = [1] * len(shape)
        one[axis] = n
        m = fb.broadcast_to(fb.reshape(value_of(tr, sel, DType.BOOL), one), shape)
        mask = m if mask is None else fb.and_(mask, m)
    new = _combine(tr, op, old, v)
    return new if mask is None else fb.select(mask, new, old)


# ---------------------------------------------------------------- integer arrays
def _index_array(tr: Trace, ix: Any, extent: int) -> Value:
    if isinstance(ix, Tracer):
        if ix.accy_dtype == DType.BOOL or not (ix.accy_dtype.is_int or ix.accy_dtype == DType.U32):
            raise _refuse(f"an index array of dtype {ix.accy_dtype}", "index with integers")
        return ix.value if ix.accy_dtype in (DType.I32, DType.I64) else tr.fb.cast(
            ix.value, DType.I32)
    return _index_value(tr, ix, extent)


def _scattered(tr: Trace, x: Tracer, items: list[Any], k: int, values: Any, op: str) -> Value:
    """``x`` updated at one integer-array index (``items[k]``) among basic indices."""
    if any(i is None for i in items):
        raise _refuse("None together with an integer array in an assignment",
                      "drop the None (it does not change what is written)")
    fb = tr.fb
    sub_items = list(items)
    sub_items[k] = slice(None)
    basic = all(isinstance(i, slice) and i == slice(None) for i in sub_items)
    sub = x.value if basic else getitem_value(tr, x, tuple(sub_items))
    axis = sum(1 for i in items[:k] if isinstance(i, slice))
    iv = _index_array(tr, items[k], sub.type.shape[axis])
    target = _target_shape(x, items)
    v = _values(tr, x, values, target)
    v = _natural_layout(tr, v, items, k, axis, iv.type.rank)
    if iv.type.rank == 0:  # a traced scalar index: one row
        iv = fb.reshape(iv, (1,))
        v = fb.reshape(v, sub.type.shape[:axis] + (1,) + sub.type.shape[axis + 1:])
    if op == "set":
        new_sub = fb.scatter(sub, iv, v, axis=axis)
    elif op == "add" and x.accy_dtype.is_int and x.accy_dtype.bits < 32:
        # the scatter_add family adds 32/64-bit values: add in i32, the cast back wraps
        wide = fb.scatter_add(fb.cast(sub, DType.I32), iv, fb.cast(v, DType.I32), axis=axis)
        new_sub = fb.cast(wide, x.accy_dtype)
    elif op == "add":
        new_sub = fb.scatter_add(sub, iv, v, axis=axis)
    else:
        ix = items[k]
        if isinstance(ix, Tracer) or len(np.unique(np.asarray(ix) % sub.type.shape[axis])) != (
                np.asarray(ix).size):
            raise _refuse(f".at[...].{op} with repeated or traced indices",
                          "index with a host array of unique indices, or combine with anp.where "
                          "over a mask built from the indices")
        old = fb.gather(sub, iv, axis=axis)
        new_sub = fb.scatter(sub, iv, _combine(tr, op, old, v), axis=axis)
    if basic:
        return new_sub
    return _basic_update(tr, x, sub_items, new_sub, "set")


def _natural_layout(tr: Trace, v: Value, items: list[Any], k: int, axis: int,
                    index_rank: int) -> Value:
    """``v`` (numpy's layout of ``x[items]``) with the index axes at ``axis``.

    numpy treats integers as advanced indices too: when one is separated from the array by
    a slice (``x[0, :, [0]]``), the index axes go first in ``x[items]``'s shape.
    """
    advanced = [j for j, i in enumerate(items) if j == k or not isinstance(i, slice)]
    if advanced == list(range(advanced[0], advanced[-1] + 1)) or index_rank == 0 or axis == 0:
        return v
    rank = v.type.rank
    perm = list(range(index_rank, index_rank + axis)) + list(range(index_rank)) + list(
        range(index_rank + axis, rank))
    return tr.fb.transpose(v, perm)


# ---------------------------------------------------------------- boolean masks
def _masked(tr: Trace, x: Tracer, mask: Any, values: Any, op: str) -> Value:
    fb = tr.fb
    m = mask.ndim
    if tuple(mask.shape) != x.shape[:m]:
        raise VerifyError(f"boolean index at {user_location()}: mask shape "
                          f"{list(mask.shape)} does not match the indexed axes "
                          f"{list(x.shape[:m])}")
    rest = x.shape[m:]
    vshape = values.shape if isinstance(values, Tracer) else np.shape(values)
    try:
        fits = np.broadcast_shapes(tuple(vshape), rest) == rest
    except ValueError:
        fits = False
    if not fits:
        if isinstance(mask, Tracer):
            raise _refuse("x[mask] = values with one value per selected element and a traced "
                          "mask", "the count of True elements is unknown at trace time; use "
                          "x = anp.where(mask, values_shaped_like_x, x)")
        lead = int(np.prod(x.shape[:m], dtype=np.int64))
        flat = wrap(tr, fb.reshape(x.value, (lead,) + rest))
        new = updated(tr, flat, np.flatnonzero(mask), values, op)
        return fb.reshape(new, x.shape)
    v = _values(tr, x, values, rest)
    v = fb.broadcast_to(fb.reshape(v, (1,) * m + rest), x.shape)
    mv = value_of(tr, mask, DType.BOOL)
    mv = fb.broadcast_to(fb.reshape(mv, tuple(mask.shape) + (1,) * len(rest)), x.shape)
    return fb.select(mv, _combine(tr, op, x.value, v), x.value)


# ---------------------------------------------------------------- x.at[idx]
class _AtUpdate:
    """``x.at[idx]``: functional updates returning a new array (``x`` is unchanged)."""

    def __init__(self, x: Tracer, index: Any) -> None:
        self._x, self._index = x, index

    def _apply(self, values: Any, op: str) -> Tracer:
        tr = trace_of(self._x, values)
        assert tr is not None
        return wrap(tr, updated(tr, self._x, self._index, values, op))

    def set(self, values: Any) -> Tracer:
        """``x`` with ``values`` (broadcast, cast to ``x``'s dtype) at ``idx``."""
        return self._apply(values, "set")

    def add(self, values: Any) -> Tracer:
        """``x`` with ``values`` added at ``idx`` (repeated array indices accumulate)."""
        return self._apply(values, "add")

    def multiply(self, values: Any) -> Tracer:
        """``x`` with ``x[idx] * values`` at ``idx`` (array indices must be unique)."""
        return self._apply(values, "mul")

    mul = multiply

    def min(self, values: Any) -> Tracer:  # noqa: A003 - JAX's name
        """``x`` with ``minimum(x[idx], values)`` at ``idx``."""
        return self._apply(values, "min")

    def max(self, values: Any) -> Tracer:  # noqa: A003 - JAX's name
        """``x`` with ``maximum(x[idx], values)`` at ``idx``."""
        return self._apply(values, "max")

    def get(self) -> Tracer:
        """``x[idx]``."""
        return self._x[self._index]

    def __getattr__(self, name: str) -> Any:
        raise _refuse(f".at[...].{name}", "use .at[idx].set/add/multiply/min/max(v) or .get()")


class AtIndexer:
    """``x.at``: index it (``x.at[idx]``) to get the update helper."""

    def __init__(self, x: Tracer) -> None:
        self._x = x

    def __getitem__(self, index: Any) -> _AtUpdate:
        return _AtUpdate(self._x, index)
