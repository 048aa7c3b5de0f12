"""Tuning keys of the accy-kernels families: the dtypes and the shape class of one call.

A cached family choice (:mod:`accy.tuning.families`) applies to every call with the same
device, family, variant space, dtypes and *shape class*. ``b(n)`` below is
``ceil(log2(max(n, 1)))`` (``b(1000) = 10``, ``b(1024) = 10``, ``b(1025) = 11``):

==============================  ==================  ==============================================
family                          dtypes              shape class
==============================  ==================  ==============================================
gather                          src + indices       ``n{b(outputs)}``
scatter, scatter_add            dst + indices       ``n{b(values)}-d{b(dst elements)}``
segment_sum                     values + ids        ``n{b(values)}-d{b(outputs)}``
scan, filter                    x                   ``n{b(n)}``
sort, argsort                   x                   ``n{b(n)}``
sort_pairs                      keys + values       ``n{b(n)}``
spmv                            A                   ``r{b(rows)}-z{b(nnz / rows)}``
spmm                            A                   ``r{b(rows)}-z{b(nnz / rows)}-k{b(k)}``
matmul                          a                   ``m{b(m)}-n{b(n)}-k{b(k)}-b{b(batch)}``
random                          out                 ``n{b(size)}-{algorithm}-{distribution}``
==============================  ==================  ==============================================

:func:`call_key` reads these from a variant's ``run`` keyword arguments (what
:func:`accy_kernels._dispatch.call` passes); the IR lowering of library ops uses the same
functions on types (:func:`sort_class`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bucket", "call_key", "sort_class"]

_KIND = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
         np.dtype(np.int64): "i64", np.dtype(np.uint32): "u32", np.dtype(np.bool_): "bool"}


def bucket(n: int) -> int:
    """``ceil(log2(max(n, 1)))``: the power-of-two bucket of a size."""
    return max(0, int(n) - 1).bit_length()


def sort_class(n: int) -> str:
    """The shape class of a 1-D sort, argsort, sort_pairs, scan or filter of ``n`` keys."""
    return f"n{bucket(n)}"


def _kind(a: Any) -> str:
    return _KIND.get(np.asarray(a).dtype if not hasattr(a, "dtype") else np.dtype(a.dtype),
                     "?")


def _size(a: Any) -> int:
    return int(np.size(a)) if a is not None else 0


def _sparse(kw: dict[str, Any]) -> tuple[int, int]:
    a = kw["A"]
    rows = int(a.shape[0])
    return rows, -(-int(a.nnz) // max(rows, 1))


def call_key(family: str, kw: dict[str, Any]) -> tuple[str, str] | None:
    """``(dtypes, shape class)`` of one call of ``family`` with ``run`` keyword arguments
    ``kw``; None for a family without a tuning key (nothing is looked up)."""
    if family == "gather":
        out = _size(kw["src"]) // max(np.shape(kw["src"])[kw["axis"]], 1) * _size(kw["indices"])
        return f"{kw['dtype']}+{kw['index_dtype']}", f"n{bucket(out)}"
    if family in ("scatter", "scatter_add"):
        return (f"{kw['dtype']}+{kw['index_dtype']}",
                f"n{bucket(_size(kw['values']))}-d{bucket(_size(kw['dst']))}")
    if family == "segment_sum":
        inner = _size(kw["values"]) // max(len(kw["values"]), 1)
        return (f"{kw['dtype']}+{kw['index_dtype']}",
                f"n{bucket(_size(kw['values']))}-d{bucket(kw['num_segments'] * inner)}")
    if family in ("scan", "filter"):
        return kw["dtype"], sort_class(_size(kw["x"]))
    if family in ("sort", "argsort"):
        return kw["dtype"], sort_class(_size(kw["keys"]))
    if family == "sort_pairs":
        return f"{kw['dtype']}+{_kind(kw['values'])}", sort_class(_size(kw["keys"]))
    if family == "spmv":
        rows, per_row = _sparse(kw)
        return kw["dtype"], f"r{bucket(rows)}-z{bucket(per_row)}"
    if family == "spmm":
        rows, per_row = _sparse(kw)
        return kw["dtype"], f"r{bucket(rows)}-z{bucket(per_row)}-k{bucket(kw['X'].shape[1])}"
    if family == "matmul":
        a, b = np.asarray(kw["a"]), np.asarray(kw["b"])
        m = a.shape[-2] if a.ndim > 1 else 1
        k = a.shape[-1]
        n = b.shape[-1] if b.ndim > 1 else 1
        batch = max(a.shape[0] if a.ndim == 3 else 1, b.shape[0] if b.ndim == 3 else 1)
        return _kind(a), f"m{bucket(m)}-n{bucket(n)}-k{bucket(k)}-b{bucket(batch)}"
    if family == "random":
        return kw["dtype"], f"n{bucket(kw['size'])}-{kw['algorithm']}-{kw['dist']}"
    return None
