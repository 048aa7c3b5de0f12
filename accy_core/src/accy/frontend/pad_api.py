"""``numpy.pad`` for ``accy.numpy``: a border around an array, one axis at a time.

``mode="constant"`` is one ``tensor.pad`` (any constant; the padding fuses into the next
elementwise kernel); ``"edge"``, ``"wrap"``, ``"reflect"`` and ``"symmetric"`` join static
slices of the array (``concatenate``), as numpy's definitions of those modes say.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.join_api import concatenate
from accy.frontend.numpy_api import astype, trace_of, wrap
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["pad"]

_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


def _widths(pad_width: Any, rank: int) -> list[tuple[int, int]]:
    """numpy's broadcasting of ``pad_width`` to one ``(before, after)`` per axis."""
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu":
        raise VerifyError(f"pad at {user_location()}: pad_width must be integers, got "
                          f"{pad_width!r}")
    try:
        w = np.broadcast_to(w.reshape(-1, 2) if w.size % 2 == 0 and w.ndim == 2 else w,
                            (rank, 2))
    except ValueError as e:
        raise VerifyError(f"pad at {user_location()}: pad_width {pad_width!r} does not fit "
                          f"an array of rank {rank}") from e
    if (w < 0).any():
        raise VerifyError(f"pad at {user_location()}: negative pad_width {pad_width!r}")
    return [(int(a), int(b)) for a, b in w]


def _take(x: Tracer, ax: int, sl: slice) -> Tracer:
    index = [slice(None)] * x.ndim
    index[ax] = sl
    return x[tuple(index)]


def _border(x: Tracer, ax: int, before: int, after: int, mode: str) -> Tracer:
    n = x.shape[ax]
    if n == 0:
        raise VerifyError(f"pad at {user_location()}: mode {mode!r} cannot pad an empty axis")
    limit = n - 1 if mode == "reflect" else n
    if mode in ("reflect", "symmetric") and (before > limit or after > limit):
        raise UnsupportedError(f"pad at {user_location()}: mode {mode!r} with a width of at "
                               f"least the axis length {n} is not supported; pad in steps",
                               feature=f"pad {mode}", alternative="several pad calls")
    if mode == "edge":
        lo = [_take(x, ax, slice(0, 1))] * before
        hi = [_take(x, ax, slice(n - 1, n))] * after
    elif mode == "wrap":
        reps = -(-max(before, after) // n) + 1
        lo_src = concatenate([x] * reps, axis=ax) if reps > 1 else x
        m = lo_src.shape[ax]
        lo = [_take(lo_src, ax, slice(m - before, m))] if before else []
        hi = [_take(lo_src, ax, slice(0, after))] if after else []
    else:
        k = 1 if mode == "reflect" else 0
        lo = [_take(x, ax, slice(before - 1 + k, k - 1 if k - 1 >= 0 else None, -1))
              ] if before else []
        hi = [_take(x, ax, slice(n - 1 - k, n - 1 - k - after if n - 1 - k - after >= 0
                                 else None, -1))] if after else []
    return concatenate([*lo, x, *hi], axis=ax)


def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """``numpy.pad`` of a traced array: ``mode`` is ``"constant"`` (one scalar
    ``constant_values``), ``"edge"``, ``"wrap"``, ``"reflect"`` or ``"symmetric"``;
    ``pad_width`` is an int, ``(before, after)`` or one pair per axis. Host arrays go to
    numpy.

    Raises:
        VerifyError: a negative or ill-shaped ``pad_width``.
        UnsupportedError: another mode, per-axis ``constant_values``, or a reflect width of
            at least the axis length.
    """
    tr = trace_of(array)
    if tr is None or not isinstance(array, Tracer):
        return np.pad(array, pad_width, mode=mode, constant_values=constant_values) \
            if mode == "constant" else np.pad(array, pad_width, mode=mode)
    if mode not in _MODES:
        raise UnsupportedError(f"pad at {user_location()}: mode {mode!r} is not supported; "
                               f"use one of {', '.join(_MODES)}", feature=f"pad {mode}",
                               alternative=", ".join(_MODES))
    widths = _widths(pad_width, array.ndim)
    if mode == "constant":
        if np.ndim(constant_values) != 0 or isinstance(constant_values, Tracer):
            raise UnsupportedError(
                f"pad at {user_location()}: constant_values must be one Python number; "
                "pad with 0 and write the borders with slice assignments",
                feature="pad constant_values", alternative="slice assignment")
        c = float(constant_values)
        if not array.accy_dtype.is_float and c != int(c):
            c = float(int(c))  # numpy casts the constant to the array's dtype
        v = tr.fb.pad(array.value, [w[0] for w in widths], [w[1] for w in widths], c)
        out = wrap(tr, v)
        return out if out.dtype == array.dtype else astype(out, array.dtype)
    x = array
    for ax, (before, after) in enumerate(widths):
        if before or after:
            x = _border(x, ax, before, after, mode)
    return x
