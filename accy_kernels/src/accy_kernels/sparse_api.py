"""Sparse families' Python API: spmv (CSR scalar/vector, COO, ELL, SELL-C-σ), spmm, and
Matrix Market reading with clear errors. Matrices are converted on the host from any scipy
format; indices travel as int32."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from accy.errors import InputError, UnsupportedError
from accy.families import Candidate, as_array

from accy_kernels._common import MAX_ELEMS
from accy_kernels._dispatch import call
from accy_kernels.spmv_csr_check import check_host
from accy_kernels.spmv_fast import fast_spmv

__all__ = ["csr_arrays", "longest_row", "read_matrix", "spmm", "spmv"]

FORMATS = {"csr": "csr_scalar", "coo": "coo", "ell": "ell", "sell": "sell"}
#: the keyword options each format takes (anything else used to be ignored silently)
_OPTIONS = {"csr": (), "coo": (), "ell": ("width",), "sell": ("C", "sigma")}
_VARIANTS = ("csr_scalar", "csr_vector", "coo", "coo_rows", "ell", "sell")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def read_matrix(path: str | Path) -> Any:
    """Read a Matrix Market file (``scipy.io.mmread``) into a scipy CSR matrix.

    Symmetric, skew-symmetric and Hermitian files are expanded as scipy does; pattern files
    get values 1. Source: the Matrix Market exchange format (Boisvert, Pozo, Remington, NIST
    1996).

    Raises:
        InputError: the file is missing or malformed (message names the file and scipy's
            reason).
    """
    import scipy.io
    import scipy.sparse

    path = Path(path)
    try:
        m = scipy.io.mmread(str(path))
    except FileNotFoundError as e:
        raise InputError(f"{path}: no such Matrix Market file") from e
    except Exception as e:  # scipy raises ValueError, IndexError, ... on malformed input
        raise InputError(f"{path}: malformed Matrix Market file: {type(e).__name__}: {e}; "
                         f"expected a '%%MatrixMarket matrix ...' header and "
                         f"entries within the declared shape") from e
    return scipy.sparse.csr_matrix(m)


def _matrix_dtype(A: Any, x: np.ndarray, family: str) -> np.dtype:
    for what, dt in (("A", A.dtype), ("x", x.dtype)):
        if dt.kind not in "biuf" or dt == np.float16 or dt.itemsize > 8:
            raise UnsupportedError(
                f"{family}: {what} dtype must be real (float32 or float64; integers and bool "
                f"are converted), got {dt}; complex matrices are not supported",
                feature=f"dtype {dt}")
    dt = np.result_type(A.dtype, x.dtype)
    return dt if dt in _FLOATS else np.dtype(np.float64)


def _as_sparse(A: Any, family: str) -> Any:
    import scipy.sparse

    if scipy.sparse.issparse(A):
        return A
    arr = np.asarray(A) if isinstance(A, np.ndarray) else None
    if arr is None or arr.ndim != 2:
        raise InputError(f"{family}: A must be a scipy.sparse matrix or a 2-D numpy array, "
                         f"got {type(A).__name__}")
    return scipy.sparse.csr_matrix(arr)


def csr_arrays(A: Any, dtype: np.dtype,
               check: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(indptr, indices, data)`` of ``A`` as CSR: int32, int32, ``dtype`` (host).

    ``check=False``: the caller checks the structure itself (a cached layout checks it once
    per content, when it is built).

    Raises:
        UnsupportedError: more than 2**31 - 1 stored entries, rows or columns (the kernels
            index them with 32-bit integers).
        InputError: row pointers or column indices out of range (the position named; see
            :mod:`accy_kernels.spmv_csr_check`).
    """
    if max(A.shape, default=0) > MAX_ELEMS:
        raise UnsupportedError(f"spmv: a matrix of shape {list(A.shape)} has more than "
                               f"{MAX_ELEMS} rows or columns (32-bit indices); split it",
                               feature="size")
    csr = A.tocsr()  # duplicates and unsorted columns are fine: every format sums entries
    if csr.nnz > MAX_ELEMS:
        raise UnsupportedError(f"spmv: {csr.nnz} entries exceed 2**31 - 1", feature="size")
    if check:  # the kernels index x and the arrays unchecked: refuse what scipy lets through
        check_host(csr.indptr, csr.indices, A.shape[1], min(csr.indices.size, csr.data.size))
    return (csr.indptr.astype(np.int32, copy=False), csr.indices.astype(np.int32, copy=False),
            csr.data.astype(dtype, copy=False))


def longest_row(indptr: np.ndarray) -> int:
    """The most entries in one row of CSR ``indptr`` (0 for no rows)."""
    return int(np.diff(indptr).max()) if indptr.size > 1 else 0


def spmv(A: Any, x: Any, format: str | None = None, *, backend: Any = "cpu",
         variant: str | None = None, candidate: Candidate | None = None,
         **options: Any) -> np.ndarray:
    """Return ``y = A @ x`` for a sparse ``A`` in a chosen device format.

    Args:
        A: scipy.sparse matrix (any format; converted on the host) or dense 2-D array,
            shape ``(n_rows, n_cols)``, real values.
        x: ``(n_cols,)`` float32 | float64.
        format: ``"csr"`` (variants ``csr_scalar`` default, ``csr_vector``), ``"coo"``
            (``coo``: segmented atomic adds; ``coo_rows``: per-row sums, no atomics,
            deterministic; the default is ``coo`` where the backend has atomic add on the
            dtype, else ``coo_rows``),
            ``"ell"`` (option ``width``: rows longer spill into a COO tail), ``"sell"``
            (options ``C`` rows per slice, ``sigma`` sorting window in rows). None (the
            default): the tuning cache's winner for this device and shape class (any
            format, ``accy tune --families``), else ``"csr"``.

    Returns:
        ``(n_rows,)`` of ``result_type(A, x)`` (float64 when both are integers).

    Every format keeps each work-item's loops under the backend's ``max_loop_iterations``
    (lavapipe: 65535): rows (ELL/SELL widths) longer than it are summed over several
    launches, each continuing the stored partial sums. ELL/SELL padding never reads ``x``,
    so inf/NaN in ``x`` reach only the rows that store an entry in that column (as scipy).

    Raises:
        UnsupportedError: complex or other unsupported dtypes; more than 2**31 - 1 rows,
            columns or entries.
        InputError: shape mismatch, unknown format or option.

    Passes over memory: CSR on the CPU 1 (the structure check fused into the product, block
    by block, from data then in L1; minimum 1); CSR elsewhere and COO 1 plus the structure
    check (row pointers and column indices, 8 of the 16 bytes an entry, on the host);
    ELL/SELL 2 (a checksum of the CSR arrays to find the cached layout, then the padded
    layout; minimum 1: :func:`prepare_spmv`).

    Repeated calls with the same CSR matrix (int32 indices, values of ``x``'s dtype) on the
    CPU reuse a launch prepared for that matrix, which reads its arrays in place (so
    in-place edits are always seen; replaced arrays prepare it again): about a microsecond
    of Python per call (:mod:`accy_kernels.spmv_fast` states the rule). For SELL/ELL, or to
    skip every per-call check of the matrix, hold a handle:
    :func:`accy_kernels.prepare_spmv` (docs/sparse.md).

    Raises (also):
        InputError: row pointers or column indices out of range (the position named).
    """
    if variant is None and candidate is None and not options and format in (None, "csr"):
        y = fast_spmv(A, x, backend, format is None)
        if y is not None:
            return y
    if format == "sell" and variant is None and candidate is None:
        from accy_kernels.spmv_sell import fast_sell  # (spmv_sell imports this module)

        y = fast_sell(A, x, backend, options)  # a bound product this matrix left, checked
        if y is not None:
            return y
    free = format is None and not options and variant is None  # the tuning cache may choose
    format = "csr" if format is None else format
    if format not in FORMATS:
        raise InputError(f"spmv: unknown format {format!r}; known: {', '.join(FORMATS)}")
    A = _as_sparse(A, "spmv")
    x = as_array(x, "spmv x")
    dt = _matrix_dtype(A, x, "spmv")
    if x.shape != (A.shape[1],):
        raise InputError(f"spmv: x must have shape ({A.shape[1]},) for A of shape "
                         f"{list(A.shape)}, got {list(x.shape)}")
    kdt = "f32" if dt == np.float32 else "f64"
    name = variant or FORMATS[format]
    if variant is None and format == "coo":  # by capability: atomic adds or per-row sums
        from accy_kernels._dispatch import pick_atomic

        name = pick_atomic(backend, kdt, "coo", "coo_rows")
    allowed = None if free else tuple(v for v in _VARIANTS if v.startswith(format))
    if not name.startswith(format.replace("sell", "sell")):
        raise InputError(f"spmv: variant {name!r} does not belong to format {format!r}")
    unknown = sorted(set(options) - set(_OPTIONS[format]))
    if unknown:
        raise InputError(f"spmv: unknown option(s) {', '.join(unknown)} for format {format!r}; "
                         f"known: {', '.join(_OPTIONS[format]) or 'none'}")
    return call("spmv", variant, backend, candidate, default_variant=name, allowed=allowed,
                A=A, x=x.astype(dt, copy=False), dtype=kdt, options=options)


def spmm(A: Any, X: Any, *, backend: Any = "cpu", variant: str | None = None,
         candidate: Candidate | None = None) -> np.ndarray:
    """Return ``Y = A @ X`` for sparse ``A`` ``(n_rows, n_cols)`` (CSR on the device) and dense
    ``X`` ``(n_cols, k)`` (float32 | float64, row-major).

    Raises:
        UnsupportedError: complex or other unsupported dtypes. InputError: shape mismatch.
    """
    A = _as_sparse(A, "spmm")
    X = as_array(X, "spmm X")
    dt = _matrix_dtype(A, X, "spmm")
    if X.ndim != 2 or X.shape[0] != A.shape[1]:
        raise InputError(f"spmm: X must have shape ({A.shape[1]}, k) for A of shape "
                         f"{list(A.shape)}, got {list(X.shape)}")
    if A.shape[0] * X.shape[1] > MAX_ELEMS or X.size > MAX_ELEMS:
        raise UnsupportedError(f"spmm: a result of {A.shape[0]} x {X.shape[1]} or an X of "
                               f"{X.size} elements exceeds {MAX_ELEMS} (32-bit work-item "
                               "ids); split X into column blocks", feature="size")
    kdt = "f32" if dt == np.float32 else "f64"
    return call("spmm", variant, backend, candidate, A=A, X=X.astype(dt, copy=False), dtype=kdt)
