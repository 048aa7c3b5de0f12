"""numpy's advanced indexing with several index arrays: ``x[i, j]``, ``x[rows, 0]``, writes.

``logp[np.arange(n), y]``, ``img[y0, x0]`` and ``grid[ys, xs] = 1`` index several axes with
integer arrays (and integers, which numpy then treats as advanced indices too). accy
computes one linear index over the indexed axes (row-major, the index arrays broadcast
together, negative indices wrapped) and does a single ``tensor.gather`` / ``scatter`` on
those axes flattened into one. The result layout is numpy's: the broadcast index shape
replaces the indexed axes where they are adjacent, and goes first where a slice separates
them (``x[0, :, i]`` has shape ``i.shape + (x.shape[1],)``).

A traced index out of range on its axis (``j = 5`` on 4 columns) would land on another
element of the flattened axes; it is sent past the end instead, so the gather's range check
refuses it at run time (:class:`~accy.families.validate.IndexOutOfRangeError`) rather than
reading a wrong element. Host indices are checked at trace time (``VerifyError``).

Writes take full slices besides the index arrays (``x[i, :, j] = v``); other slices, and
``None`` among several index arrays, are refused with a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend import numpy_api as npa
from accy.frontend.trace import Trace, user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType, Value

__all__ = ["is_multi", "multi_get", "multi_update", "split_partial"]


def _is_array(ix: Any) -> bool:
    return isinstance(ix, (Tracer, list, np.ndarray))


def _is_int(ix: Any) -> bool:
    return isinstance(ix, (int, np.integer)) and not isinstance(ix, (bool, np.bool_))


def is_multi(items: list[Any]) -> bool:
    """Whether expanded ``items`` need numpy's rules for several advanced indices: two or
    more integer arrays, or one array with an integer (``x[0, :, i]``)."""
    arrays = sum(1 for i in items if _is_array(i))
    return arrays > 1 or (arrays == 1 and any(_is_int(i) for i in items))


def _full_slice(ix: Any, extent: int) -> bool:
    """Whether ``ix`` is a slice that selects a whole axis of ``extent`` (``:``, ``::1``,
    ``0:n``, ...)."""
    return isinstance(ix, slice) and ix.indices(extent) == (0, extent, 1)


def split_partial(items: list[Any], shape: tuple[int, ...]) -> tuple[list[Any], list[Any]] | None:
    """For an assignment at ``items`` (expanded, several advanced indices by :func:`is_multi`)
    with a partial slice on an axis without an advanced index (``x[0, 1:3, i] = v``): the basic
    slice to update (``outer``: the slices, ``:`` on the advanced axes) and the advanced
    indices within it (``inner``: ``:`` on the sliced axes). Basic slicing commutes with
    numpy's advanced indexing (``x[0, 1:3, i]`` is ``x[:, 1:3, :][0, :, i]``, result axes
    included), so the update is ``outer``'s slice updated at ``inner``. None when every such
    slice is a whole axis."""
    if any(i is None for i in items):
        return None  # refused by multi_update, by name
    adv = {k for k, i in enumerate(items) if _is_array(i) or _is_int(i)}
    if not any(not _full_slice(items[k], shape[k]) for k in range(len(items)) if k not in adv):
        return None
    outer = [slice(None) if k in adv else i for k, i in enumerate(items)]
    inner = [i if k in adv else slice(None) for k, i in enumerate(items)]
    return outer, inner


def _refuse(what: str, fix: str) -> UnsupportedError:
    return UnsupportedError(f"{what} at {user_location()} is not supported; {fix}",
                            feature=f"indexing: {what}", alternative=fix)


def _layout(items: list[Any]) -> tuple[list[int], list[int], bool]:
    """Axes of ``x`` with an advanced index, the other axes, and whether the advanced ones
    are adjacent in ``items`` (numpy then keeps the result axes in place)."""
    if any(i is None for i in items):
        raise _refuse("None among several integer-array indices",
                      "index first, then add the axis: x[i, j][:, None]")
    adv = [k for k, i in enumerate(items) if _is_array(i) or _is_int(i)]
    rest = [k for k in range(len(items)) if k not in adv]
    return adv, rest, adv == list(range(adv[0], adv[-1] + 1))


def host_axis_index(ix: Any, extent: int) -> np.ndarray:
    """A host index array for an axis of ``extent`` elements, checked and normalised:
    negative indices count from the end. Returns int64 (the caller narrows it).

    Raises:
        UnsupportedError: ``ix`` is not an integer array.
        VerifyError: an index lies outside ``[-extent, extent)``; the message gives the
            user's line and the span of the indices.
    """
    arr = np.asarray(ix)
    if arr.dtype.kind not in "iu":
        raise _refuse(f"an index array of dtype {arr.dtype}", "index with integers")
    if arr.size and (arr.min() < -extent or arr.max() >= extent):
        raise VerifyError(f"index out of range at {user_location()}: indices span "
                          f"[{arr.min()}, {arr.max()}] for an axis of extent {extent}")
    return np.where(arr < 0, arr + extent, arr).astype(np.int64)


def _linear(items: list[Any], adv: list[int], shape: tuple[int, ...]) -> tuple[Any, int]:
    """The row-major linear index over axes ``adv`` (a host int array or a traced one),
    and the number of elements of those axes; traced indices out of range on their axis
    map past the end."""
    extents = [shape[k] for k in adv]
    total = int(np.prod(extents, dtype=np.int64))
    strides = [int(np.prod(extents[n + 1:], dtype=np.int64)) for n in range(len(adv))]
    wide = total >= 2**31
    lin: Any = None
    bad: Any = None
    host = 0
    for k, n, s in zip(adv, extents, strides, strict=True):
        ix = items[k]
        if not isinstance(ix, Tracer):
            host = host + host_axis_index(ix, n) * s
            continue
        if ix.accy_dtype == DType.BOOL or not ix.accy_dtype.is_int:
            raise _refuse(f"an index array of dtype {ix.accy_dtype}",
                          "index with integers (cast with .astype(anp.int32))")
        unsigned = np.dtype(ix.dtype).kind == "u"
        i = npa.astype(ix, DType.I64 if wide or ix.accy_dtype.bits > 32 or unsigned
                       else DType.I32)
        if not unsigned:  # negative indices count from the end (a uint64 above 2**63 stays
            i = npa.where(npa.less(i, 0), npa.add(i, n), i)  # negative here: refused)
        out = npa.logical_or(npa.less(i, 0), npa.greater_equal(i, n))
        bad = out if bad is None else npa.logical_or(bad, out)
        term = npa.multiply(i, s) if s != 1 else i
        lin = term if lin is None else npa.add(lin, term)
    if lin is None:
        return np.asarray(host, np.int64), total
    if np.ndim(host) or int(np.asarray(host)) != 0:
        lin = npa.add(lin, np.asarray(host).astype(lin.dtype))
    return npa.where(bad, total, lin), total


def _flatten_axes(tr: Trace, v: Value, adv: list[int], rest: list[int],
                  total: int) -> Value:
    """``v`` with the ``adv`` axes moved first and merged into one of ``total`` elements."""
    perm = adv + rest
    if perm != list(range(len(perm))):
        v = tr.fb.transpose(v, perm)
    return tr.fb.reshape(v, (total,) + tuple(v.type.shape[len(adv):]))


def _place(tr: Trace, v: Value, nb: int, before: int) -> Value:
    """Move the first ``nb`` axes (the index shape) of ``v`` after the next ``before``."""
    if not nb or not before:
        return v
    rank = v.type.rank
    perm = list(range(nb, nb + before)) + list(range(nb)) + list(range(nb + before, rank))
    return tr.fb.transpose(v, perm)


def _index_value(tr: Trace, lin: Any, total: int) -> Value:
    if isinstance(lin, Tracer):
        return lin.value
    return npa.value_of(tr, lin.astype(np.int64 if total >= 2**31 else np.int32),
                        DType.I64 if total >= 2**31 else DType.I32)


def multi_get(tr: Trace, x: Tracer, items: list[Any],
              basic: Callable[[Trace, Value, Any, int], tuple[Value, int]],
              gather: Callable[..., Value]) -> Value:
    """``x[items]`` (expanded, see :func:`is_multi`) as an IR value.

    ``basic(tr, v, slice, axis)`` applies a slice on one axis and ``gather(v, idx, axis)``
    is the gather op (both from :mod:`accy.frontend.indexing`).
    """
    adv, rest, adjacent = _layout(items)
    v = x.value
    for axis, ix in enumerate(items):  # slices keep their axis: apply them first
        if isinstance(ix, slice):
            v, _ = basic(tr, v, ix, axis)
    lin, total = _linear(items, adv, x.shape)
    flat = _flatten_axes(tr, v, adv, rest, total)
    out = gather(flat, _index_value(tr, lin, total), axis=0)
    before = adv[0] if adjacent else 0
    return _place(tr, out, len(np.shape(lin)) if not isinstance(lin, Tracer) else lin.ndim,
                  before)


def multi_update(tr: Trace, x: Tracer, items: list[Any], values: Any, op: str,
                 target_shape: Callable[[Tracer, list[Any]], tuple[int, ...]],
                 update: Callable[..., Value]) -> Value:
    """``x`` with ``values`` combined by ``op`` at ``items`` (several advanced indices).

    ``target_shape`` gives numpy's shape of ``x[items]`` and ``update(tr, x, index, values,
    op)`` is the one-array update of :mod:`accy.frontend.setitem`, applied to ``x`` with the
    indexed axes flattened.

    Raises:
        UnsupportedError: a slice other than ``:`` among the indices, or ``None``.
    """
    adv, rest, adjacent = _layout(items)
    if any(not _full_slice(items[k], x.shape[k]) for k in rest):
        raise _refuse("an assignment with several integer arrays and a partial slice",
                      "assign into the slice first: sub = x[a:b]; sub[i, j] = v")
    shape = target_shape(x, items)
    lin, total = _linear(items, adv, x.shape)
    nb = len(np.shape(lin)) if not isinstance(lin, Tracer) else lin.ndim
    flat = npa.wrap(tr, _flatten_axes(tr, x.value, adv, rest, total))
    vals = npa.value_of(tr, values, x.accy_dtype)
    vs = vals.type.shape
    while len(vs) > len(shape) and vs[0] == 1:  # numpy drops leading 1s of the values
        vs = vs[1:]
    vals = tr.fb.reshape(vals, vs)
    if npa.broadcast_shape("x[idx] = v", vs, shape) != tuple(shape):
        raise VerifyError(f"assignment at {user_location()}: values of shape {list(vs)} "
                          f"cannot be broadcast to the indexed shape {list(shape)}")
    vals = tr.fb.broadcast_to(vals, shape)
    before = adv[0] if adjacent else 0
    if nb and before:  # numpy's layout → index axes first
        rank = len(shape)
        perm = list(range(before, before + nb)) + list(range(before)) + list(
            range(before + nb, rank))
        vals = tr.fb.transpose(vals, perm)
    if isinstance(lin, Tracer):
        b_shape = tuple(vals.type.shape[:nb])
        lin_v = tr.fb.broadcast_to(lin.value, b_shape) if lin.shape != b_shape else lin.value
        lin_1 = npa.wrap(tr, tr.fb.reshape(lin_v, (int(np.prod(b_shape, dtype=np.int64)),)))
    else:
        lin_1 = np.broadcast_to(lin, tuple(vals.type.shape[:nb])).reshape(-1)
    vals = tr.fb.reshape(vals, (int(np.prod(vals.type.shape[:nb], dtype=np.int64)),)
                         + tuple(vals.type.shape[nb:]))
    new = update(tr, flat, lin_1, npa.wrap(tr, vals), op)
    moved = tuple(x.shape[k] for k in adv) + tuple(x.shape[k] for k in rest)
    new = tr.fb.reshape(new, moved)
    perm = adv + rest
    if perm != list(range(len(perm))):
        new = tr.fb.transpose(new, [perm.index(d) for d in range(len(perm))])
    return new
