"""Indexing with traced scalars (a loop's induction variable): ``x[i]``, ``x[i, :]``,
``x[i:i + 3]``, ``x.at[i].set(v)`` and JAX's ``dynamic_slice`` / ``dynamic_update_slice``.

Each becomes ``tensor.dynamic_slice`` / ``tensor.dynamic_update_slice`` with one ``i32[]``
offset per axis, so the window moves on the device without a recompile. A negative traced
index counts from the end (``x[i]`` with ``i = -1`` is the last row); as in JAX, an offset
that would put the window outside the array is clamped to the nearest valid window. The
window's *size* must be static: ``x[i, :i]`` has a shape that depends on ``i`` and raises
:class:`~accy.errors.UnsupportedError` suggesting a mask or a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.numpy_api import trace_of, value_of, wrap
from accy.frontend.trace import Trace, user_location
from accy.frontend.tracer import Tracer
from accy.ir import DType, TensorType, Value


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, Tracer) else np.shape(x)


def _ndim(x: Any) -> int:
    return len(_shape(x))


__all__ = ["at_update", "dynamic_getitem", "dynamic_slice", "dynamic_update_slice",
           "has_traced_scalar"]

_I32 = TensorType(DType.I32, ())


def _is_traced_scalar(ix: Any) -> bool:
    return isinstance(ix, Tracer) and ix.ndim == 0


def has_traced_scalar(index: Any) -> bool:
    """Whether ``index`` holds a 0-d traced integer or a slice with traced bounds."""
    items = index if isinstance(index, tuple) else (index,)
    return any(_is_traced_scalar(i) or (isinstance(i, slice) and any(
        isinstance(b, Tracer) for b in (i.start, i.stop, i.step))) for i in items)


def _offset(tr: Trace, ix: Any, extent: int, normalize: bool = True) -> Value:
    """``ix`` as an ``i32[]`` offset; a negative traced index counts from the end."""
    fb = tr.fb
    if isinstance(ix, Tracer):
        if not ix.accy_dtype.is_int:
            raise UnsupportedError(
                f"index of dtype {ix.accy_dtype} at {user_location()}; indices must be "
                "integers: cast with .astype(anp.int32)", feature="float index")
        v = ix.value
        if v.type.rank:
            v = fb.reshape(v, ())
        if v.type.dtype != DType.I32:
            v = fb.cast(v, DType.I32)
        if normalize:
            v = fb.select(fb.lt(v, 0), fb.add(v, extent), v)
        return v
    return value_of(tr, np.int32(int(ix)), DType.I32)


def expand_index(index: Any, rank: int) -> list[Any]:
    """Index items with ``...`` and missing trailing axes as full slices (``None`` items
    kept where they are).

    Raises:
        UnsupportedError: more than one ``...``.
        VerifyError: more indices than ``rank`` axes.
    """
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise UnsupportedError(f"indexing with more than one '...' at {user_location()} is "
                               "not supported; use at most one ellipsis",
                               feature="indexing: more than one '...'",
                               alternative="use at most one ellipsis")
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > rank:
        raise VerifyError(f"too many indices at {user_location()}: {used} for an array of "
                          f"rank {rank}; index at most {rank} axes")
    fill = [slice(None)] * (rank - used)
    dots = [k for k, i in enumerate(items) if i is Ellipsis]
    if dots:
        return items[:dots[0]] + fill + items[dots[0] + 1:]
    return items + fill


def _through(v: Value) -> Value:
    op = v.defining_op
    while op is not None and op.name in ("tensor.broadcast_to", "arith.cast", "tensor.reshape"):
        v = op.operands[0]
        op = v.defining_op
    return v


def _width(start: Any, stop: Any) -> int | None:
    """Static ``stop - start`` when ``stop`` was traced as ``start + k``."""
    if isinstance(start, Tracer) and isinstance(stop, Tracer):
        op = _through(stop.value).defining_op
        if op is not None and op.name == "arith.add":
            a, b = (_through(x) for x in op.operands)
            s = _through(start.value)
            for x, y in ((a, b), (b, a)):
                c = y.defining_op
                if x is s and c is not None and c.name == "tensor.constant" \
                        and c.attrs["value"].size == 1:
                    return int(c.attrs["value"].reshape(-1)[0])
    return None


def _dependent(what: str) -> UnsupportedError:
    return UnsupportedError(
        f"{what} at {user_location()} has a shape that depends on a traced value; shapes "
        "must be static inside a loop body: use lax.dynamic_slice(x, start, sizes) with a "
        "static size, a mask (anp.where(anp.arange(n) < i, x, 0)), or a Python loop",
        feature="dynamic shape", alternative="lax.dynamic_slice or a mask")


def _plan(tr: Trace, x: Tracer, index: Any) -> tuple[list[Value], list[int], list[int | None],
                                                      list[Any]]:
    """Offsets and sizes per axis, then the result's axes: an extent, or None for an added
    axis (``None`` in the index); and the per-axis slice to apply to the window after."""
    items = expand_index(index, x.ndim)
    offs: list[Value] = []
    sizes: list[int] = []
    dims: list[int | None] = []
    post: list[Any] = []
    axis = 0
    for ix in items:
        if ix is None:
            dims.append(None)
            continue
        n = x.shape[axis]
        axis += 1
        if isinstance(ix, slice):
            if any(isinstance(b, Tracer) for b in (ix.start, ix.stop, ix.step)):
                w = _width(ix.start, ix.stop)
                if w is None or ix.step not in (None, 1) or not 0 <= w <= n:
                    raise _dependent(f"slice {ix.start!r}:{ix.stop!r}")
                offs.append(_offset(tr, ix.start, n))
                sizes.append(w)
                dims.append(w)
                post.append(slice(None))
                continue
            start, stop, step = ix.indices(n)
            if step == 1:
                size = max(0, stop - start)
                offs.append(_offset(tr, start, n))
                sizes.append(size)
                dims.append(size)
                post.append(slice(None))
            else:
                offs.append(_offset(tr, 0, n))
                sizes.append(n)
                dims.append(len(range(start, stop, step)))
                post.append(ix)
            continue
        if isinstance(ix, Tracer) and ix.ndim:
            raise UnsupportedError(
                f"an integer array index together with a traced scalar at {user_location()}; "
                "index one axis per step: x[i][:, idx]", feature="indexing: mixed")
        if not isinstance(ix, Tracer):
            if isinstance(ix, (bool, np.bool_)) or not isinstance(ix, (int, np.integer)):
                raise UnsupportedError(f"index {ix!r} at {user_location()}; use integers, "
                                       "slices, None or '...'", feature="indexing")
            if not -n <= int(ix) < n:
                raise VerifyError(f"index {int(ix)} at {user_location()} is out of range for "
                                  f"an axis of extent {n}")
            ix = int(ix) % n
        offs.append(_offset(tr, ix, n))
        sizes.append(1)
        post.append(0)
    return offs, sizes, dims, post


def dynamic_getitem(x: Tracer, index: Any) -> Tracer:
    """``x[index]`` where ``index`` holds traced scalars (see the module docstring)."""
    tr = trace_of(x)
    assert tr is not None
    offs, sizes, dims, post = _plan(tr, x, index)
    fb = tr.fb
    w = fb.emit("tensor.dynamic_slice", [x.value, *offs], {"sizes": tuple(sizes)})[0]
    if any(isinstance(p, slice) and p != slice(None) for p in post):
        raise UnsupportedError(
            f"a strided slice together with a traced index at {user_location()}; index "
            "with the traced value first, then slice: x[i][::2]", feature="indexing: strided")
    shape = tuple(1 if d is None else d for d in dims)
    return wrap(tr, w if w.type.shape == shape else fb.reshape(w, shape))


def at_update(x: Tracer, index: Any, values: Any, how: str) -> Tracer:
    """``x.at[index].<how>(values)`` for integer/slice/traced-scalar ``index``: ``how`` is
    ``set``, ``add``, ``multiply``, ``min`` or ``max`` (``tensor.dynamic_update_slice``)."""
    tr = trace_of(x, values)
    assert tr is not None
    offs, sizes, dims, post = _plan(tr, x, index)
    if None in dims or any(isinstance(p, slice) and p != slice(None) for p in post):
        raise UnsupportedError(f"x.at[{index!r}] with None or a strided slice at "
                               f"{user_location()}", feature="at: strided")
    fb = tr.fb
    window = tuple(d for d in dims if d is not None)
    v = value_of(tr, values, x.accy_dtype)
    try:
        v = fb.broadcast_to(v, window)
    except VerifyError:
        raise VerifyError(f"x.at[...].{how}: values of shape {list(v.type.shape)} do not "
                          f"broadcast to the indexed shape {list(window)} at "
                          f"{user_location()}") from None
    if how != "set":
        cur = fb.reshape(fb.emit("tensor.dynamic_slice", [x.value, *offs],
                                 {"sizes": tuple(sizes)})[0], window)
        v = {"add": fb.add, "multiply": fb.mul, "min": fb.min, "max": fb.max}[how](cur, v)
    v = fb.reshape(v, tuple(sizes))
    return wrap(tr, fb.emit("tensor.dynamic_update_slice", [x.value, v, *offs])[0])


def _starts(x: Any, start_indices: Sequence[Any]) -> list[Any]:
    starts = list(start_indices)
    if len(starts) != _ndim(x):
        raise VerifyError(f"dynamic slice at {user_location()}: {len(starts)} start indices "
                          f"for an array of rank {_ndim(x)}; give one per axis")
    return starts


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    """``jax.lax.dynamic_slice``: the window of static ``slice_sizes`` at ``start_indices``
    (clamped into range, no negative-index wrap). Host inputs compute with numpy."""
    starts = _starts(operand, start_indices)
    sizes = tuple(int(s) for s in slice_sizes)
    tr = trace_of(operand, *starts)
    if tr is None:
        from accy.ir.ops.dynamic import clamped_starts

        arr = np.asarray(operand)
        a = clamped_starts(arr.shape, sizes, [int(s) for s in starts])
        return arr[tuple(slice(p, p + s) for p, s in zip(a, sizes, strict=True))].copy()
    v = value_of(tr, operand)
    offs = [_offset(tr, s, n, normalize=False) for s, n in zip(starts, v.type.shape,
                                                                strict=True)]
    return wrap(tr, tr.fb.emit("tensor.dynamic_slice", [v, *offs], {"sizes": sizes})[0])


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """``jax.lax.dynamic_update_slice``: ``operand`` with ``update`` written at
    ``start_indices`` (clamped so the update fits). Host inputs compute with numpy."""
    starts = _starts(operand, start_indices)
    tr = trace_of(operand, update, *starts)
    if tr is None:
        from accy.ir.ops.dynamic import clamped_starts

        arr, upd = np.array(operand), np.asarray(update)
        a = clamped_starts(arr.shape, upd.shape, [int(s) for s in starts])
        arr[tuple(slice(p, p + s) for p, s in zip(a, upd.shape, strict=True))] = upd
        return arr
    v = value_of(tr, operand)
    u = value_of(tr, update, v.type.dtype)
    offs = [_offset(tr, s, n, normalize=False) for s, n in zip(starts, v.type.shape,
                                                                strict=True)]
    return wrap(tr, tr.fb.emit("tensor.dynamic_update_slice", [v, u, *offs])[0])
