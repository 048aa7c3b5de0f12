"""``accy.dask.jit``: run an ``accy.numpy`` function on ``dask.array`` arguments.

The function is traced once per signature on the client, at the arguments' *full* shapes
(zero-copy stand-ins, nothing is computed), exactly as :func:`accy.jit` traces it. The
partitioner (:mod:`accy.dask.partition`) decides which axes may stay chunked; the graph
builder (:mod:`accy.dask.graph`) turns the program into ``blockwise`` calls, each running a
compiled accy program per block, and tree reductions for sums, means, maxima and minima
over chunked axes. Workers receive tensor IR text and compile it once per process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accy.dask.graph import Materializer
from accy.dask.partition import analyze
from accy.errors import InputError, install_hint

__all__ = ["DaskJitted", "jit"]


def _dask_array_type() -> type:
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InputError("accy.dask needs Dask: pip install 'dask[array]' distributed, or the "
                         f"[dask] extra of accy-core ({install_hint('accy_core', 'dask')})"
                         ) from None
    return da.Array


def _stand_in(x: Any) -> np.ndarray:
    """A zero-byte array of ``x``'s shape and dtype (all strides 0) for tracing."""
    base = np.zeros(1, dtype=x.dtype)
    return np.lib.stride_tricks.as_strided(base, shape=x.shape, strides=(0,) * len(x.shape))


class DaskJitted:
    """A function of Dask arrays; call it with ``dask.array.Array``/numpy arguments.

    numpy arrays become one-chunk Dask arrays (replicated operands, e.g. weights); Python
    numbers are static, as in :func:`accy.jit`. Results are lazy Dask arrays (call
    ``.compute()``), in the structure the function returns.

    Raises (on call):
        UnsupportedError: the program needs a chunked axis whole (the message names the op,
            the line and the axis to rechunk), or builds a full-extent array that meets a
            chunked axis.
        InputError: Dask is not installed, or an argument has an unsupported dtype.
    """

    def __init__(self, fn: Callable[..., Any], backend: str = "cpu",
                 static_argnums: Sequence[int] = ()) -> None:
        import accy

        self.fn = fn
        self.backend = backend
        self._jitted = accy.jit(fn, backend=backend, static_argnums=tuple(static_argnums))
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any) -> Any:
        import dask.array as da

        array_t = _dask_array_type()
        arrays: list[Any] = []

        def swap(a: Any) -> Any:
            if isinstance(a, array_t | np.ndarray):
                arr = a if isinstance(a, array_t) else da.from_array(a, chunks=a.shape or ())
                arrays.append(arr)
                return _stand_in(arr)
            if isinstance(a, tuple | list):
                return type(a)(swap(x) for x in a)
            if isinstance(a, dict):
                return {k: swap(v) for k, v in a.items()}
            return a

        fake = tuple(swap(a) for a in args)
        entry, _ = self._jitted._entry(fake, {})
        fn = entry.module.functions[0]
        lab = analyze(fn, [a.chunks for a in arrays])
        inputs = [self._aligned(a, fn.params[i], lab) for i, a in enumerate(arrays)]
        mat = Materializer(fn, lab, inputs, self.backend)
        outs = [mat(v) for v in fn.returns]
        from accy.frontend.tree import unflatten

        return unflatten(entry.out_tree, outs)

    @staticmethod
    def _aligned(arr: Any, param: Any, lab: Any) -> Any:
        want = tuple(lab.chunks(label) for label in lab.dims[param])
        return arr if tuple(arr.chunks) == want else arr.rechunk(want)


def jit(fn: Callable[..., Any] | None = None, *, backend: str = "cpu",
        static_argnums: int | Sequence[int] = ()) -> Any:
    """:func:`accy.jit` for Dask arrays; usable as ``@accy.dask.jit`` or with options.

    Args:
        fn: a function written with ``accy.numpy`` and array operators.
        backend: the accy backend each worker compiles for (``"cpu"`` by default).
        static_argnums: as :func:`accy.jit`.

    Returns:
        a :class:`DaskJitted`.

    Example::

        import dask.array as da, accy.dask, accy.numpy as anp

        f = accy.dask.jit(lambda x: anp.exp(x) * 2.0 + 1.0)
        y = f(da.ones((1000, 64), chunks=(250, 64), dtype="f4")).compute()
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if fn is None:
        return functools.partial(jit, backend=backend, static_argnums=nums)
    return DaskJitted(fn, backend=backend, static_argnums=nums)
