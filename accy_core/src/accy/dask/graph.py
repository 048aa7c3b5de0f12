"""Turn a labelled traced function into Dask arrays: ``blockwise`` slices and tree reductions.

``materialize(value)`` gives the Dask array of one IR value:

- a parameter is the (chunk-aligned) input array;
- the result of a cross-block reduction is ``dask.array.reduction`` over its operand with
  accy chunk / combine / aggregate functions (sum, max, min; mean as a sum of the values
  cast to the result dtype, scaled by ``1 / count`` at the end);
- any other value is one ``dask.array.blockwise`` call running the backward slice of the
  program from its leaves (:mod:`accy.dask.blocks`) as one compiled accy program per block.

Label classes become Dask index symbols, so blockwise aligns every chunked class; extents
that only broadcasting creates are ``new_axes`` of one chunk.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from accy.dask import worker
from accy.dask.blocks import block_texts, slice_for
from accy.dask.partition import Labels
from accy.ir import Builder, DType, Function, Operation, TensorType, Value

__all__ = ["Materializer"]


def _reduce_text(kind: str, dtype: str, shape: tuple[int, ...], axes: tuple[int, ...],
                 keepdims: bool, cast_to: str | None = None) -> str:
    b = Builder()
    fb = b.begin_function(f"dask_{kind}", params=[TensorType(dtype, shape)])
    x = fb.param(0)
    if cast_to is not None and cast_to != dtype:
        x = fb.cast(x, cast_to)
    fb.return_(getattr(fb, f"reduce_{kind}")(x, axes=list(axes), keepdims=keepdims))
    fb.finish()
    return b.finish().to_text()


def _reduce_block(kind: str, backend: str, cast_to: str | None, x: np.ndarray,
                  axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """Dask ``chunk``/``combine``/``aggregate`` function: an accy reduction of one block."""
    axes = tuple(sorted(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,))))
    text = _reduce_text(kind, DType.parse(x.dtype).value, tuple(x.shape), axes, keepdims,
                        cast_to)
    return worker.run_text(text, backend, x)[0]


def _scaled(scale: float, kind: str, backend: str, x: np.ndarray, axis, keepdims):
    out = _reduce_block(kind, backend, None, x, axis, keepdims)
    return (out * np.asarray(scale, dtype=out.dtype)).astype(out.dtype, copy=False)


class Materializer:
    """Builds the Dask array of each IR value of ``fn`` (memoized).

    Args:
        fn: the traced function; lab: its :func:`~accy.dask.partition.analyze` result;
        inputs: one chunk-aligned Dask array per parameter; backend: accy backend name.
    """

    def __init__(self, fn: Function, lab: Labels, inputs: list[Any], backend: str) -> None:
        self.fn, self.lab, self.backend = fn, lab, backend
        self.done: dict[Value, Any] = dict(zip(fn.params, inputs, strict=True))
        self.frontier = set(fn.params) | {op.results[0] for op in lab.cross_block}
        self.symbols: dict[int, str] = {}

    def _sym(self, label: int) -> str:
        c = self.lab.cls(label)
        return self.symbols.setdefault(c, f"x{len(self.symbols)}")

    def _index(self, v: Value) -> tuple[str, ...]:
        return tuple(self._sym(label) for label in self.lab.dims[v])

    def __call__(self, v: Value) -> Any:
        got = self.done.get(v)
        if got is None:
            op = v.defining_op
            if op is not None and op in self.lab.cross_block:
                got = self._reduction(op)
            else:
                got = self._blockwise(v)
            self.done[v] = got
        return got

    def _blockwise(self, v: Value) -> Any:
        import dask.array as da

        sl = slice_for(self.fn, v, self.frontier)
        leaves = [self(leaf) for leaf in sl.leaves]
        texts = block_texts(self.fn, sl, self.lab)
        out_ind = self._index(v)
        pairs: list[Any] = []
        seen: set[str] = set()
        for leaf, arr in zip(sl.leaves, leaves, strict=True):
            ind = self._index(leaf)
            pairs += [arr, ind]
            seen.update(ind)
        new_axes = {s: n for s, n in zip(out_ind, v.type.shape, strict=True) if s not in seen}
        dtype = v.type.dtype.numpy
        fn = functools.partial(worker.run_block, texts, self.backend)
        return da.blockwise(fn, out_ind, *pairs, new_axes=new_axes or None, dtype=dtype,
                            concatenate=True, meta=np.empty((0,) * v.type.rank, dtype),
                            token=f"accy-{self.fn.name}")

    def _reduction(self, op: Operation) -> Any:
        import dask.array as da

        src, res = op.operands[0], op.results[0]
        x = self(src)
        kind = op.name.split(".")[1]
        axes = tuple(sorted(a % max(src.type.rank, 1) for a in op.attrs["axes"]))
        keepdims = bool(op.attrs.get("keepdims", False))
        out_dtype = res.type.dtype.numpy
        part = functools.partial
        if kind == "mean":
            count = math.prod(src.type.shape[a] for a in axes)
            chunk = part(_reduce_block, "sum", self.backend, res.type.dtype.value)
            combine = part(_reduce_block, "sum", self.backend, None)
            aggregate = part(_scaled, 1.0 / max(count, 1), "sum", self.backend)
        else:
            chunk = part(_reduce_block, kind, self.backend, None)
            combine = aggregate = chunk
        return da.reduction(x, chunk, aggregate, combine=combine, axis=axes,
                            keepdims=keepdims, dtype=out_dtype, concatenate=True,
                            meta=np.empty((0,) * res.type.rank, out_dtype))
