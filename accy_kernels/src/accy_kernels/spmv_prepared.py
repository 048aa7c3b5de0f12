"""``prepare_spmv(A, format, **options)``: a matrix converted once, for many ``y = P @ x``.

Iterative solvers multiply by one matrix hundreds of times. ``spmv(A, x, "sell")`` must make
sure on every call that ``A`` did not change since its layout was built (a checksum of the
CSR arrays, a pass over them); a handle the caller holds needs no such check, because it
owns its data:

**The rule**: ``prepare_spmv`` copies ``A`` into the format's layout (CSR: int32 copies of
its arrays; SELL-C-σ: the padded slices) when it is called; the handle's arrays are
read-only and nothing else refers to them, so later changes to ``A`` are **not** seen —
prepare again after changing ``A``. The structure is checked once, when preparing
(:mod:`accy_kernels.spmv_csr_check`).

On the CPU backend (where this interpreter has native calls) a CSR or SELL handle binds its
kernel once (:mod:`accy_kernels.spmv_bound`): a call checks ``x``, allocates ``y`` and makes
one native call, from any number of threads at once. Elsewhere (other backends, ``"coo"``
and ``"ell"``, or an ``x`` of a wider dtype than the handle's) a call runs ``spmv`` on the
handle's private CSR copy with the same format and options, whose layout caches then always
hit. Results equal ``spmv(A, x, format, **options)`` bit for bit on the same backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from accy.errors import InputError

__all__ = ["PreparedSpmv", "prepare_spmv"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class PreparedSpmv:
    """A sparse matrix prepared for repeated products (see the module docstring).

    Attributes:
        shape: ``(n_rows, n_cols)``. dtype: the values' dtype (float32 or float64).
        format: the format it was prepared in. backend: the backend it runs on.
    """

    def __init__(self, A: Any, format: str = "csr", *, backend: Any = "cpu",
                 **options: Any) -> None:
        from accy.families import backend_object, host_like, loop_budget

        from accy_kernels.sparse_api import FORMATS, _as_sparse, _matrix_dtype, csr_arrays
        from accy_kernels.spmv_bound import native_cpu

        if format not in FORMATS:
            raise InputError(f"prepare_spmv: unknown format {format!r}; known: "
                             f"{', '.join(FORMATS)}")
        A = _as_sparse(A, "prepare_spmv")
        dt = _matrix_dtype(A, np.zeros(0, A.dtype if A.dtype in _FLOATS else np.float64),
                           "prepare_spmv")
        indptr, indices, data = (np.array(a, order="C") for a in csr_arrays(A, dt))
        import scipy.sparse

        self._csr = scipy.sparse.csr_matrix((data, indices, indptr), A.shape, copy=False)
        for a in (indptr, indices, data):
            a.flags.writeable = False
        self.shape, self.dtype, self.format, self.backend = A.shape, dt, format, backend
        self._options = dict(options)
        self._product = None
        be = backend_object(backend)
        if format in ("csr", "sell") and native_cpu(be) and host_like(be) \
                and loop_budget(be) is None:
            self._product = self._bind(be, indptr, indices, data)
        if self._product is None:  # run spmv on the private copy (checks the options)
            self(np.zeros(A.shape[1], dt))

    def _bind(self, be: Any, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> Any:
        from accy_kernels.spmv_bound import bind_csr, bind_sell

        if self.format == "csr":
            if self._options:
                raise InputError(f"prepare_spmv: unknown option(s) "
                                 f"{', '.join(self._options)} for format 'csr'; known: none")
            return bind_csr(be, indptr, indices, data)
        from accy_kernels.spmv_sell import sell_layout, sell_options

        c, sigma = sell_options(self._options, {}, self.shape[0])
        layout = sell_layout(indptr, indices, data, self.shape[0], c, sigma)
        for a in layout:
            a.flags.writeable = False
        return bind_sell(be, layout, self.shape[0], c)

    def __call__(self, x: Any) -> np.ndarray:
        """Return ``y = A @ x`` (``x``: ``(n_cols,)``; the result's dtype is
        ``result_type(A, x)`` as for :func:`accy_kernels.spmv`).

        Raises:
            InputError: ``x`` of the wrong shape. UnsupportedError: complex ``x``.
        """
        product = self._product
        if product is not None and type(x) is np.ndarray and x.dtype == self.dtype \
                and x.shape == (self.shape[1],) and x.flags.c_contiguous:
            return product(x)
        from accy.families import as_array

        from accy_kernels.sparse_api import spmv

        xa = as_array(x, "prepare_spmv x")
        if product is not None and xa.shape == (self.shape[1],) and \
                np.result_type(self.dtype, xa.dtype) == self.dtype and xa.dtype.kind in "biuf":
            return product(np.ascontiguousarray(xa, self.dtype))
        return spmv(self._csr, xa, self.format, backend=self.backend, **self._options)

    __matmul__ = __call__

    def __repr__(self) -> str:
        return (f"PreparedSpmv(shape={self.shape}, dtype={self.dtype}, format={self.format!r}, "
                f"backend={self.backend!r})")


def prepare_spmv(A: Any, format: str = "csr", *, backend: Any = "cpu",
                 **options: Any) -> PreparedSpmv:
    """Prepare ``A`` once for repeated ``y = P @ x`` (``P(x)`` too).

    Args:
        A: scipy.sparse matrix (any format) or dense 2-D array, real values; copied.
        format: as :func:`accy_kernels.spmv` (``"csr"``, ``"coo"``, ``"ell"``, ``"sell"``),
            with its options (``width``; ``C``, ``sigma``).
        backend: backend name or live backend.

    Returns:
        A :class:`PreparedSpmv`: later changes to ``A`` are not seen (module docstring).

    Raises:
        InputError: unknown format or option, out-of-range row pointers or columns (the
            position named). UnsupportedError: complex or other unsupported dtypes, more
            than 2**31 - 1 rows, columns or entries.
    """
    return PreparedSpmv(A, format, backend=backend, **options)
