"""Indexing of traced arrays: ``x[...]`` and ``x.at[idx].add(v)``.

Supported inside a trace:

- ``None``/``anp.newaxis``, ``...`` and full slices ``:`` (a reshape, no data movement);
- integers, slices with static bounds and one integer-array index (host or traced,
  ``int32 | int64 | uint32``; traced ``uint32`` indices are widened to int64): each
  indexed axis becomes a ``tensor.gather`` along that axis
  (numpy's ``take``), so ``x[idx]`` with ``idx`` of shape ``(k,)`` on ``x`` of shape
  ``(n, d)`` gives ``(k, d)``; negative host indices wrap, traced indices must be in range;
- a host boolean mask over the leading axes (a gather of its ``flatnonzero``);
- several integer arrays, or one with integers (``x[i, j]``, ``x[0, :, i]``): numpy's
  advanced indexing through one gather on the indexed axes flattened
  (:mod:`accy.frontend.multi_index`).

Contiguous slices are ``tensor.slice``; stepped and negative-step slices gather. Writes
(``x[idx] = v``, ``x.at[idx].set(v)``) live in :mod:`accy.frontend.setitem`.

A traced boolean mask gives a pending :class:`~accy.frontend.masked_read.MaskedRead`
(data-dependent shape): elementwise arithmetic on it written back under the same mask
(``x[m] += v``) works, anything else is refused (use ``anp.where``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError, install_hint
from accy.frontend.dynamic_index import expand_index
from accy.frontend.join_api import stack
from accy.frontend.masked_read import MaskedRead, masked_read, masked_refusal
from accy.frontend.multi_index import host_axis_index, is_multi, multi_get
from accy.frontend.numpy_api import trace_of, value_of, wrap
from accy.frontend.trace import Trace, user_location
from accy.frontend.tracer import Tracer
from accy.frontend.views import mark_view
from accy.ir import DType, Value

__all__ = ["getitem", "getitem_value", "host_mask", "is_basic", "take"]


def _unsupported(what: str, fix: str) -> UnsupportedError:
    return UnsupportedError(f"indexing with {what} at {user_location()} is not supported; {fix}",
                            feature=f"indexing: {what}", alternative=fix)


def _needs_op(tr: Trace, name: str) -> Any:
    method = getattr(tr.fb, name, None)
    if method is None:
        raise UnsupportedError(
            f"{name} at {user_location()} needs the tensor.{name} op, which this accy "
            f"installation does not provide yet; install accy-kernels "
            f"({install_hint('accy_kernels')}) or restructure without integer-array indexing",
            feature=f"tensor.{name}")
    return method


def _is_int_array(ix: Any) -> bool:
    if isinstance(ix, (Tracer, list, np.ndarray)):
        if (ix.dtype if isinstance(ix, Tracer) else np.asarray(ix).dtype) == np.bool_:
            raise masked_refusal()
        return True
    return False




def take(x: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> Any:
    """Elements of ``x`` at ``indices`` along ``axis`` (numpy ``take``; ``tensor.gather``).

    Shapes: ``x`` (..., n, ...) with n at ``axis``, ``indices`` (k...) int32|int64|uint32 →
    ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``. ``axis=None`` (numpy's
    default) indexes the flattened ``x``; ``mode`` is ``"raise"``, ``"clip"`` or ``"wrap"``.
    """
    tr = trace_of(x, indices)
    if tr is None:
        return np.take(x, indices, axis=axis, mode=mode)
    if mode not in ("raise", "clip", "wrap"):
        raise VerifyError(f"take at {user_location()}: mode must be one of raise, clip, wrap, "
                          f"got {mode!r}")
    v = value_of(tr, x)
    if axis is None:  # numpy flattens (the default used to index axis 0 instead)
        v = tr.fb.reshape(v, (int(np.prod(v.type.shape, dtype=np.int64)),))
        axis = 0
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise VerifyError(f"take at {user_location()}: axis must be an integer or None, got "
                          f"{axis!r}")
    rank = v.type.rank
    if not -rank <= axis < rank:
        raise VerifyError(f"take at {user_location()}: axis {axis} is out of range for rank "
                          f"{rank}")
    axis = int(axis) % rank
    if mode == "raise":
        return wrap(tr, _gather(tr, v, indices, axis))
    extent = v.type.shape[axis]
    if isinstance(indices, Tracer):
        return wrap(tr, _needs_op(tr, "gather")(v, _traced_indices(tr, indices), axis=axis,
                                                mode=mode))
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iu":
        raise _unsupported(f"a {arr.dtype} array", "indices must be integers")
    if extent == 0 and arr.size:
        raise VerifyError(f"take at {user_location()}: cannot take from an empty axis")
    if arr.size:  # host indices: apply clip/wrap here, as numpy does
        arr = np.clip(arr, 0, extent - 1) if mode == "clip" else np.mod(arr, extent)
    return wrap(tr, _gather(tr, v, arr, axis))


def _traced_indices(tr: Trace, ix: Tracer) -> Value:
    """A traced index array as the IR's index dtypes take it: int32/int64 as they are,
    uint32 widened to int64 (every value kept); anything else is refused here."""
    if not ix.accy_dtype.is_int:
        raise _unsupported(f"a {ix.accy_dtype} array", "indices must be int32 or int64 "
                           "(uint32 is widened to int64); cast with .astype(anp.int32)")
    if ix.accy_dtype not in (DType.I32, DType.I64):
        return tr.fb.cast(ix.value, DType.I64)
    return ix.value


def _index_value(tr: Trace, ix: Any, extent: int) -> Value:
    if isinstance(ix, Tracer):
        return _traced_indices(tr, ix)
    return value_of(tr, host_axis_index(ix, extent).astype(np.int32), DType.I32)


def _gather(tr: Trace, v: Value, indices: Any, axis: int) -> Value:
    gather = _needs_op(tr, "gather")
    return gather(v, _index_value(tr, indices, v.type.shape[axis]), axis=axis)


def _strided(tr: Trace, v: Value, first: int, step: int, count: int, axis: int) -> Value:
    """Elements ``first, first + step, ...`` (``count`` of them) along ``axis`` without a
    gather: the contiguous run ``[first, first + step * count)`` (padded at the end where it
    passes the extent) reshaped to ``(count, step)`` and its column 0 taken, so the read
    fuses with the elementwise code around it (``x[0::2]``, ``x[1::2]`` of an FFT)."""
    shape = list(v.type.shape)
    end = first + step * count
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = first, min(end, shape[axis])
    run = tr.fb.slice(v, start, limit)
    if end > shape[axis]:
        high = [0] * len(shape)
        high[axis] = end - shape[axis]
        run = tr.fb.pad(run, [0] * len(shape), high)
    split = shape[:axis] + [count, step] + shape[axis + 1:]
    cols = tr.fb.reshape(run, split)
    start, limit = [0] * len(split), list(split)
    limit[axis + 1] = 1
    picked = tr.fb.slice(cols, start, limit)
    return tr.fb.reshape(picked, shape[:axis] + [count] + shape[axis + 1:])


def _basic(tr: Trace, v: Value, ix: Any, axis: int) -> tuple[Value, int]:
    """Apply an int or slice ``ix`` on ``axis``; return the value and the next axis."""
    extent = v.type.shape[axis]
    if isinstance(ix, slice):
        rows = np.arange(extent)[ix]
        if len(rows) == extent and (extent == 0 or (rows == np.arange(extent)).all()):
            return v, axis + 1
        if len(rows) and (len(rows) == 1 or ix.step in (None, 1)):
            start = [0] * v.type.rank
            limit = list(v.type.shape)
            start[axis], limit[axis] = int(rows[0]), int(rows[-1]) + 1
            return tr.fb.slice(v, start, limit), axis + 1
        if len(rows) > 1 and rows[1] > rows[0]:
            return _strided(tr, v, int(rows[0]), int(rows[1] - rows[0]), len(rows), axis), \
                axis + 1
        return _gather(tr, v, rows, axis), axis + 1
    if isinstance(ix, (bool, np.bool_)) or not isinstance(ix, (int, np.integer)):
        # int() used to accept x[1.0] (numpy raises IndexError)
        raise _unsupported(f"{type(ix).__name__} {ix!r}", "indices must be integers, slices, "
                           "None, '...' or one integer array")
    i = int(ix)
    if not -extent <= i < extent:
        raise VerifyError(f"index {i} at {user_location()} is out of range for an axis of "
                          f"extent {extent}; use an index in [{-extent}, {extent - 1}]")
    start, limit = [0] * v.type.rank, list(v.type.shape)
    start[axis], limit[axis] = i % extent, i % extent + 1
    g = tr.fb.slice(v, start, limit)
    shape = g.type.shape[:axis] + g.type.shape[axis + 1:]
    return tr.fb.reshape(g, shape), axis


def traced_lists(items: list[Any]) -> list[Any]:
    """``items`` with each list that holds traced values (``x[[k, p]]`` with a traced
    ``p``) stacked into one traced index array, and each 1-D host boolean mask among other
    indices (``x[keep, 1]``) replaced by its positions, as numpy does."""
    out = []
    for i in items:
        if isinstance(i, list) and any(isinstance(e, Tracer) for e in i):
            i = stack(i)
        elif isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype == np.bool_ and \
                np.ndim(i) == 1 and len(items) > 1:
            i = np.flatnonzero(i)
        out.append(i)
    return out


def arrays_with_scalars(index: Any) -> bool:
    """Whether ``index`` holds an integer array besides traced scalars (``x[k, idx]`` with
    ``k = argmax(...)``): numpy's advanced indexing, not a dynamic slice; slices with
    traced bounds keep the dynamic path."""
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, slice) and any(isinstance(b, Tracer) for b in (i.start, i.stop,
                                                                         i.step))
           for i in items):
        return False
    return any((isinstance(i, Tracer) and i.ndim > 0) or isinstance(i, (list, np.ndarray))
               for i in items)


def is_basic(index: Any) -> bool:
    """Whether ``index`` is numpy *basic* indexing (ints, slices, None, ...): a view."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer))
               for i in items)


def host_mask(index: Any) -> np.ndarray | None:
    """``index`` as a host bool mask when it is one (a lone bool array), else None."""
    if isinstance(index, (list, np.ndarray)) and not isinstance(index, Tracer):
        if isinstance(index, list) and any(isinstance(e, Tracer) for e in index):
            return None  # x[[k, p]] with a traced p: an index array (traced_lists)
        arr = np.asarray(index)
        if arr.dtype == np.bool_ and arr.ndim:
            return arr
    return None


def _masked_get(tr: Trace, x: Tracer, mask: np.ndarray) -> Value:
    lead = x.shape[:mask.ndim]
    if mask.shape != lead:
        raise VerifyError(f"boolean index at {user_location()}: mask shape {list(mask.shape)} "
                          f"does not match the indexed axes {list(lead)}")
    flat = tr.fb.reshape(x.value, (int(np.prod(lead, dtype=np.int64)),) + x.shape[mask.ndim:])
    return _gather(tr, flat, np.flatnonzero(mask), 0)


def getitem_value(tr: Trace, x: Tracer, index: Any) -> Value:
    """The IR value of ``x[index]`` (see :func:`getitem`)."""
    from accy.frontend.dynamic_index import dynamic_getitem, has_traced_scalar

    if has_traced_scalar(index) and not arrays_with_scalars(index):  # x[i], a loop's i
        return dynamic_getitem(x, index).value
    mask = host_mask(index)
    if mask is not None:
        return _masked_get(tr, x, mask)
    items = traced_lists(expand_index(index, x.ndim))
    if is_multi(items):  # x[i, j], x[0, :, i]: numpy's rules for several advanced indices
        return multi_get(tr, x, items, _basic, _needs_op(tr, "gather"))
    v, axis, new_axes = x.value, 0, []
    for ix in items:
        if ix is None:  # its place in the result: the axes so far plus the new ones before
            new_axes.append(axis + len(new_axes))
            continue
        if _is_int_array(ix):
            v = _gather(tr, v, ix, axis)
            axis += len(np.shape(ix)) if not isinstance(ix, Tracer) else ix.ndim
        else:
            v, axis = _basic(tr, v, ix, axis)
    if new_axes:
        shape = list(v.type.shape)
        for pos in new_axes:
            shape.insert(pos, 1)
        v = tr.fb.reshape(v, tuple(shape))
    return v


def getitem(x: Tracer, index: Any) -> Tracer | MaskedRead:
    """``x[index]`` for a traced ``x`` (see the module docstring for what is supported).

    Basic indexing (ints, slices, None, ``...``) gives a view (:mod:`accy.frontend.views`):
    it follows later writes to ``x`` and writes into it reach ``x``.

    Raises:
        UnsupportedError: ``None`` among several array indices, a missing gather op.
        VerifyError: an index out of range or too many indices (names the user's line).
    """
    tr = trace_of(x, *(index if isinstance(index, tuple) else (index,)))
    assert tr is not None  # x is a Tracer
    if isinstance(index, Tracer) and index.accy_dtype == DType.BOOL:
        if tuple(index.shape) != x.shape[:index.ndim]:
            raise VerifyError(f"boolean index at {user_location()}: mask shape "
                              f"{list(index.shape)} does not match the indexed axes "
                              f"{list(x.shape[:index.ndim])}")
        return masked_read(x, index)  # pending: only x[mask] op= v can use it
    out = wrap(tr, getitem_value(tr, x, index))
    if not is_basic(index):
        return out
    return mark_view(out, x, lambda b: getitem_value(tr, b, index),
                     lambda b, view: b.__setitem__(index, view))
