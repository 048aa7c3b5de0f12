"""Element tests and truth reductions of ``accy.numpy``: ``isnan``, ``isinf``,
``isfinite``, ``any``, ``all``, ``count_nonzero``.

``isnan(x)`` is ``x != x`` (IEEE: only NaN differs from itself), ``isinf`` is
``abs(x) == inf`` and ``isfinite`` is ``abs(x) < inf`` (False for NaN); integer and bool
arrays are never NaN or infinite. ``any``/``all`` reduce ``x != 0`` with max/min (bool
results, like ``x.any()``); ``count_nonzero`` sums ``x != 0`` in i32 (numpy: int64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.frontend.numpy_api import (
    abs,
    astype,
    equal,
    greater,
    less,
    max,
    min,
    not_equal,
    sum,
    trace_of,
)
from accy.frontend.shape_api import full_like
from accy.frontend.tracer import Tracer

__all__ = ["all", "any", "count_nonzero", "isfinite", "isinf", "isnan"]


def _host(x: Any) -> bool:
    return trace_of(x) is None or not isinstance(x, Tracer)


def isnan(x: Any) -> Any:
    """Where ``x`` is NaN (bool, ``x``'s shape)."""
    if _host(x):
        return np.isnan(x)
    return not_equal(x, x) if x.accy_dtype.is_float else full_like(x, False, dtype=bool)


def isinf(x: Any) -> Any:
    """Where ``x`` is +inf or -inf (bool)."""
    if _host(x):
        return np.isinf(x)
    return equal(abs(x), np.inf) if x.accy_dtype.is_float else full_like(x, False, dtype=bool)


def isfinite(x: Any) -> Any:
    """Where ``x`` is neither NaN nor infinite (bool)."""
    if _host(x):
        return np.isfinite(x)
    return less(abs(x), np.inf) if x.accy_dtype.is_float else full_like(x, True, dtype=bool)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether any element (along ``axis``) is nonzero (NaN counts as nonzero)."""
    if _host(a):
        return np.any(a, axis=axis, keepdims=keepdims)
    return greater(max(astype(not_equal(a, 0), np.int32), axis=axis, keepdims=keepdims,
                       initial=0 if np.size(a) == 0 else None), 0)  # empty: False, numpy's


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether every element (along ``axis``) is nonzero."""
    if _host(a):
        return np.all(a, axis=axis, keepdims=keepdims)
    return greater(min(astype(not_equal(a, 0), np.int32), axis=axis, keepdims=keepdims,
                       initial=1 if np.size(a) == 0 else None), 0)  # empty: True, numpy's


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements (along ``axis``), i32."""
    if _host(a):
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)
    return sum(astype(not_equal(a, 0), np.int32), axis=axis, keepdims=keepdims)
