"""Numpy/scipy references of every family (the test oracles), same arguments as the API."""

from __future__ import annotations

import numpy as np

__all__ = [
    "argsort", "filter", "gather", "matmul", "random", "scan", "scatter", "scatter_add",
    "segment_sum", "sort", "sort_pairs", "spmm", "spmv",
]


def gather(src, indices, axis=0, mode="raise"):
    """``numpy.take``."""
    return np.take(src, indices, axis=axis, mode=mode)


def scatter(dst, indices, values, axis=0, mode="raise"):
    """Sequential assignment on a copy: the last duplicate index wins."""
    out = np.array(dst, copy=True)
    idx = np.asarray(indices).reshape(-1)
    n = out.shape[axis]
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    moved = np.moveaxis(out, axis, 0)
    vals = np.broadcast_to(values, dst.shape[:axis] + np.shape(indices) + dst.shape[axis + 1:])
    vals = np.moveaxis(vals.reshape(dst.shape[:axis] + (idx.size,) + dst.shape[axis + 1:]),
                       axis, 0)
    for j, i in enumerate(idx):
        moved[i] = vals[j]
    return out


def scatter_add(dst, indices, values, axis=0):
    """``numpy.add.at`` on a copy."""
    out = np.array(dst, copy=True)
    index = (slice(None),) * axis + (np.asarray(indices),)
    np.add.at(out, index, values)
    return out


def segment_sum(values, segment_ids, num_segments):
    """Unsorted segment sum with ``numpy.add.at``."""
    out = np.zeros((num_segments, *np.shape(values)[1:]), dtype=np.asarray(values).dtype)
    np.add.at(out, np.asarray(segment_ids), values)
    return out


def scan(x, inclusive=True):
    """``numpy.cumsum`` (exclusive: shifted by one, starting at 0)."""
    x = np.asarray(x).reshape(-1)
    c = np.cumsum(x, dtype=x.dtype)
    return c if inclusive else c - x


def filter(x, mask):
    """``x[mask]`` (flattened)."""
    return np.asarray(x).reshape(-1)[np.asarray(mask, dtype=bool).reshape(-1)]


def sort(x, descending=False):
    """``numpy.sort`` (descending: stable by descending value, NaN last)."""
    return np.asarray(x)[argsort(x, descending)]


def argsort(x, descending=False):
    """``numpy.argsort(kind="stable")``; descending keeps equal keys in input order."""
    x = np.asarray(x)
    if not descending:
        return np.argsort(x, kind="stable")
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        key = np.where(nan, 0, -x.astype(np.float64) if x.dtype == np.float32 else -x)
        order = np.lexsort((np.arange(x.size), key, nan))
        return order.astype(np.int64)
    if x.dtype == np.uint32:
        return np.argsort(~x, kind="stable")
    return np.argsort(~x, kind="stable")  # ~x reverses the order of signed ints exactly


def sort_pairs(keys, values, descending=False):
    """Keys sorted stably, values permuted alongside."""
    order = argsort(keys, descending)
    return np.asarray(keys)[order], np.asarray(values)[order]


def spmv(A, x, format="csr"):
    """``A @ x`` with scipy."""
    return A @ x


def spmm(A, X):
    """``A @ X`` with scipy (CSR times dense)."""
    return A @ X


def random(*args, **kwargs):
    """The random family is checked against Random123's known-answer vectors instead."""
    raise NotImplementedError("random: see accy_kernels.random.philox.reference")


def matmul(a, b):
    """``numpy.matmul(a, b)``."""
    return np.matmul(a, b)
