"""Kernel families over Dask collections; each block runs the accy family on the worker.

- :func:`spmv` — a row-partitioned sparse matrix (a Dask array whose blocks are scipy CSR
  row blocks, see :func:`from_scipy`) times a replicated vector: one ``accy_kernels.spmv``
  per row block.
- :func:`scatter_add`, :func:`segment_sum` — one partial result per block (the family on a
  zeroed output), summed by a tree of pairwise adds.
- :func:`uniform`, :func:`normal` — each block asks for its own part of the counter-based
  stream (``accy_kernels.random.generators.stream_position``), so the numbers equal the
  single-machine request bit for bit, whatever the chunks.
- :func:`sort` — sample sort (Frazer & McKellar, JACM 17(3), 1970): splitters from a
  sample of every block, every block sorted by accy and cut at the splitters, then each
  bucket gathered (an all-to-all exchange of Dask tasks) and sorted by accy.

These need ``accy-kernels`` and ``scipy`` (for :func:`spmv`) on the client and the workers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from accy.errors import InputError, UnsupportedError, install_hint

__all__ = ["from_scipy", "normal", "scatter_add", "segment_sum", "sort", "spmv", "uniform"]


def _ak() -> Any:
    try:
        import accy_kernels
    except ImportError:  # pragma: no cover - accy-kernels is a separate package
        raise InputError("accy.dask families need accy-kernels installed "
                         f"({install_hint('accy_kernels')})") from None
    return accy_kernels


# ------------------------------------------------------------------ sparse
def from_scipy(A: Any, row_chunks: int) -> Any:
    """A Dask array of CSR row blocks of the scipy sparse matrix ``A`` (``row_chunks`` rows
    per block, one column chunk)."""
    import dask.array as da
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    if int(row_chunks) < 1:
        raise InputError(f"from_scipy: row_chunks must be >= 1, got {row_chunks}")
    starts = list(range(0, A.shape[0], int(row_chunks))) or [0]
    name = f"accy-csr-{id(A):x}"
    dsk = {(name, i, 0): A[s:s + int(row_chunks)] for i, s in enumerate(starts)}
    chunks = (tuple(min(int(row_chunks), A.shape[0] - s) for s in starts), (A.shape[1],))
    return da.Array(dsk, name, chunks=chunks, dtype=A.dtype, meta=A[:0])


def _spmv_block(backend: str, fmt: str, block: Any, x: np.ndarray) -> np.ndarray:
    return _ak().spmv(block, x, format=fmt, backend=backend)


def spmv(A: Any, x: Any, format: str = "csr", *, backend: str = "cpu") -> Any:
    """``A @ x`` for a row-partitioned sparse ``A`` (Dask array of CSR blocks, shape (m, n),
    one column chunk) and a vector ``x`` (n,) (numpy or Dask; gathered whole per block).

    Returns:
        a Dask array (m,) chunked like ``A``'s rows.

    Raises:
        InputError: ``A`` is chunked along columns, or shapes disagree.
    """
    import dask.array as da

    if len(A.chunks) != 2 or len(A.chunks[1]) != 1:
        raise InputError("accy.dask.spmv: A must be chunked by rows only (one column chunk); "
                         "use accy.dask.from_scipy(A, row_chunks)")
    if tuple(np.shape(x)) != (A.shape[1],):
        raise InputError(f"accy.dask.spmv: x must have shape ({A.shape[1]},), got "
                         f"{list(np.shape(x))}")
    xd = da.asarray(x).rechunk(-1)
    dtype = np.result_type(A.dtype, xd.dtype)
    return da.blockwise(lambda a, v: _spmv_block(backend, format, a, v), "i", A, "ij", xd, "j",
                        dtype=dtype, concatenate=True, meta=np.empty((0,), dtype))


# ------------------------------------------------------------------ scatter / segment
def _tree_sum(parts: list[Any]) -> Any:
    from dask import delayed

    while len(parts) > 1:
        parts = [delayed(np.add)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def _blocks_1d(a: Any, what: str) -> list[Any]:
    import dask.array as da

    a = da.asarray(a)
    return list(a.to_delayed().reshape(-1)) if a.ndim == 1 else _not_1d(what)


def _not_1d(what: str) -> Any:
    raise InputError(f"accy.dask: {what} must be one-dimensional")


def scatter_add(dst: Any, indices: Any, values: Any, *, backend: str = "cpu") -> Any:
    """``dst`` plus ``values`` accumulated at ``indices`` along axis 0 (``numpy.add.at``).

    Args:
        dst: numpy array (n, *inner) (the output, replicated); indices: Dask or numpy (k,)
            int32/int64 in [-n, n); values: (k, *inner) chunked like ``indices`` (or scalar).

    Returns:
        a Dask array of ``dst``'s shape (one chunk).
    """
    import dask.array as da
    from dask import delayed

    dst = np.asarray(dst)
    idx = da.asarray(indices)
    vals = da.broadcast_to(da.asarray(values, dtype=dst.dtype), idx.shape + dst.shape[1:])
    vals = vals.rechunk((idx.chunks[0],) + tuple((n,) for n in dst.shape[1:]))
    zero = np.zeros_like(dst)
    parts = [delayed(_ak().scatter_add)(zero, i, v, backend=backend)
             for i, v in zip(_blocks_1d(idx, "indices"), vals.to_delayed().reshape(-1),
                             strict=True)]
    total = delayed(np.add)(dst, _tree_sum(parts)) if parts else dst
    return da.from_delayed(total, dst.shape, dtype=dst.dtype)


def segment_sum(values: Any, segment_ids: Any, num_segments: int, *,
                backend: str = "cpu") -> Any:
    """``out[s] = sum(values[i] where segment_ids[i] == s)`` over a row-chunked Dask array.

    Args:
        values: (n, *inner) Dask/numpy; segment_ids: (n,) chunked like the rows of values;
        num_segments: output rows.

    Returns:
        a Dask array (num_segments, *inner) (one chunk).
    """
    import dask.array as da
    from dask import delayed

    vals = da.asarray(values)
    ids = da.asarray(segment_ids).rechunk((vals.chunks[0],))
    vals = vals.rechunk((vals.chunks[0],) + tuple((n,) for n in vals.shape[1:]))
    shape = (int(num_segments),) + tuple(vals.shape[1:])
    parts = [delayed(_ak().segment_sum)(v, i, int(num_segments), backend=backend)
             for v, i in zip(vals.to_delayed().reshape(-1), _blocks_1d(ids, "segment_ids"),
                             strict=True)]
    total = _tree_sum(parts) if parts else np.zeros(shape, vals.dtype)
    return da.from_delayed(total, shape, dtype=vals.dtype)


# ------------------------------------------------------------------ random
def _random_block(dist: str, n: int, start: int, seed: int, dtype: str, algorithm: str,
                  offset: int, p0: float, p1: float, backend: str) -> np.ndarray:
    from accy_kernels.random import generators

    ak = _ak()
    blocks, skip = generators.stream_position(algorithm, dist, dtype, start)
    kw = {"mean": p0, "std": p1} if dist == "normal" else {"low": p0, "high": p1}
    fn = ak.random.normal if dist == "normal" else ak.random.uniform
    return fn((n + skip,), seed, dtype, algorithm, offset=offset + blocks, backend=backend,
              **kw)[skip:]


def _stream(dist: str, shape: Any, seed: int, chunks: Any, dtype: str, algorithm: str,
            offset: int, p0: float, p1: float, backend: str) -> Any:
    import dask.array as da
    from dask import delayed

    shape = tuple(int(s) for s in (shape if isinstance(shape, tuple | list) else (shape,)))
    norm = da.core.normalize_chunks(chunks, shape, dtype=_np(dtype))
    if any(len(c) != 1 for c in norm[1:]):
        raise UnsupportedError("accy.dask.random: chunk along the first axis only (each block "
                               "must be a contiguous part of the stream)",
                               feature="dask random chunks", alternative="chunks=(rows, -1)")
    inner = math.prod(shape[1:])
    blocks, start = [], 0
    for rows in norm[0] if norm else (1,):
        n = rows * inner
        d = delayed(_random_block)(dist, n, start, seed, dtype, algorithm, offset, p0, p1,
                                   backend)
        blocks.append(da.from_delayed(d, (n,), dtype=_np(dtype)).reshape((rows,) + shape[1:]))
        start += n
    return da.concatenate(blocks, axis=0) if shape else blocks[0].reshape(())


def _np(dtype: str) -> np.dtype:
    return np.dtype({"f32": np.float32, "f64": np.float64}.get(dtype, dtype))


def uniform(shape: Any, seed: int, chunks: Any = "auto", dtype: str = "f32",
            algorithm: str = "philox4x32-10", *, low: float = 0.0, high: float = 1.0,
            offset: int = 0, backend: str = "cpu") -> Any:
    """``accy_kernels.random.uniform`` as a Dask array chunked along axis 0; equal bit for
    bit to the single-machine call with the same arguments.

    Raises:
        UnsupportedError: chunks along an axis other than the first.
    """
    return _stream("uniform", shape, seed, chunks, dtype, algorithm, offset, low, high,
                   backend)


def normal(shape: Any, seed: int, chunks: Any = "auto", dtype: str = "f32",
           algorithm: str = "philox4x32-10", *, mean: float = 0.0, std: float = 1.0,
           offset: int = 0, backend: str = "cpu") -> Any:
    """``accy_kernels.random.normal`` as a Dask array (see :func:`uniform`)."""
    return _stream("normal", shape, seed, chunks, dtype, algorithm, offset, mean, std, backend)


# ------------------------------------------------------------------ sort
def _sorted_cut(backend: str, splitters: np.ndarray, block: np.ndarray) -> list[np.ndarray]:
    s = _ak().sort(np.ascontiguousarray(block), backend=backend)
    cuts = np.searchsorted(s, splitters, side="left")
    return np.split(s, cuts)


def _bucket(backend: str, pieces: list[np.ndarray]) -> np.ndarray:
    return _ak().sort(np.concatenate(pieces), backend=backend)


def _sample(block: np.ndarray, k: int) -> np.ndarray:
    if block.size == 0:
        return block
    pick = np.linspace(0, block.size - 1, num=min(k, block.size)).astype(np.int64)
    return np.asarray(block)[pick]


def sort(x: Any, npartitions: int | None = None, *, backend: str = "cpu",
         oversample: int = 64) -> Any:
    """Ascending sort of a 1-D Dask array by sample sort (module docstring).

    Args:
        x: (n,) f32 | f64 | i32 | i64 | u32 Dask array; npartitions: output buckets
            (default: the input's block count); oversample: sample keys per bucket and block.

    Returns:
        a 1-D Dask array with unknown chunk sizes (the bucket sizes), equal to ``np.sort``.
    """
    import dask.array as da
    from dask import delayed

    x = da.asarray(x)
    if x.ndim != 1:
        raise InputError(f"accy.dask.sort: x must be one-dimensional, got shape {x.shape}")
    k = int(npartitions or x.numblocks[0])
    blocks = list(x.to_delayed().reshape(-1))
    samples = [delayed(_sample)(b, oversample * k) for b in blocks]
    splitters = delayed(_splitters)(samples, k)
    cut = [delayed(_sorted_cut, nout=k)(backend, splitters, b) for b in blocks]
    buckets = [delayed(_bucket)(backend, [c[p] for c in cut]) for p in range(k)]
    parts = [da.from_delayed(b, (np.nan,), dtype=x.dtype) for b in buckets]
    return da.concatenate(parts, axis=0, allow_unknown_chunksizes=True)


def _splitters(samples: list[np.ndarray], k: int) -> np.ndarray:
    allv = np.sort(np.concatenate(samples)) if samples else np.empty(0)
    if allv.size == 0 or k <= 1:
        return allv[:0]
    pick = (np.arange(1, k) * allv.size) // k
    return allv[pick]
