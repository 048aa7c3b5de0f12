"""Creation helpers of ``accy.numpy``: ``empty``, ``linspace``, grids and triangles.

``empty``/``empty_like`` are zeros (a traced array always has defined contents);
``linspace``, ``mgrid``, ``ogrid`` and ``meshgrid`` of host data are constants; ``meshgrid``
of traced vectors broadcasts them; ``triu``/``tril`` select under a constant mask. Each
matches numpy's shape and dtype, except that default floats are f32 and default ints i32
(accy's scalar dtypes, :mod:`accy.frontend.trace`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.frontend.numpy_api import trace_of, where
from accy.frontend.shape_api import _make, broadcast_to, full, full_like, host_numpy, reshape
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["empty", "empty_like", "linspace", "meshgrid", "mgrid", "ogrid", "tril", "triu"]


def empty(shape: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` (f32 unless ``dtype``); its contents are zeros."""
    return full(shape, 0.0, np.float32 if dtype is None else dtype, what="empty")


def empty_like(a: Any, dtype: Any = None) -> Any:
    """An array shaped like ``a`` (its dtype unless ``dtype``); contents are zeros."""
    return full_like(a, 0, dtype)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``numpy.linspace`` with static (Python number) bounds; f32 unless ``dtype``.

    Raises:
        VerifyError: traced bounds (use ``start + (stop - start) * anp.arange(num) / n``).
    """
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        raise VerifyError(f"linspace at {user_location()} needs static bounds; write "
                          "start + (stop - start) * anp.arange(num) / (num - 1) for traced ones")
    arr, step = host_numpy("linspace", np.linspace, start, stop, num, endpoint=endpoint,
                           retstep=True, axis=axis)
    out = _make(arr.astype(np.float32 if dtype is None else np.dtype(dtype)))
    return (out, step) if retstep else out


def meshgrid(*xi: Any, indexing: str = "xy", sparse: bool = False, copy: bool = True) -> list:
    """``numpy.meshgrid`` of 1-D arrays (host or traced): a list of broadcast grids."""
    if trace_of(*xi) is None or not any(isinstance(x, Tracer) for x in xi):
        grids = np.meshgrid(*[np.asarray(x) for x in xi], indexing=indexing, sparse=sparse)
        return [_make(g) for g in grids]
    if indexing not in ("xy", "ij"):
        raise VerifyError(f"meshgrid at {user_location()}: indexing must be 'xy' or 'ij'")
    n = len(xi)
    sizes = [_size(x) for x in xi]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for k, x in enumerate(xi):
        pos = (1 - k if k < 2 else k) if indexing == "xy" and n >= 2 else k
        shape = [1] * n
        shape[pos] = _size(x)
        g = reshape(x, shape)
        out.append(g if sparse else broadcast_to(g, sizes))
    return out


def _size(x: Any) -> int:
    return x.size if isinstance(x, Tracer) else int(np.size(x))


class _Grid:
    def __init__(self, sparse: bool) -> None:
        self._grid = np.ogrid if sparse else np.mgrid

    def __getitem__(self, key: Any) -> Any:
        g = self._grid[key]
        if isinstance(g, (list, tuple)):
            return [_make(_f32(a)) for a in g]
        return _make(_f32(g))


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int32)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def _tri(m: Any, k: int, upper: bool) -> Any:
    if trace_of(m) is None:
        return (np.triu if upper else np.tril)(m, k)
    if m.ndim < 2:
        raise VerifyError(f"{'triu' if upper else 'tril'} at {user_location()} needs an "
                          f"array of rank >= 2, got shape {list(m.shape)}")
    rows, cols = m.shape[-2:]
    keep = np.triu(np.ones((rows, cols), bool), k) if upper else np.tril(
        np.ones((rows, cols), bool), k)
    return where(keep, m, 0)


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the elements below the ``k``-th diagonal zeroed (last two axes)."""
    return _tri(m, k, True)


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the elements above the ``k``-th diagonal zeroed (last two axes)."""
    return _tri(m, k, False)
