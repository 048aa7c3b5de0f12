"""Per-block programs: the slice of a traced function that computes one value from its leaves,
re-typed at a block's extents and printed as tensor IR text (what a Dask worker receives).

A slice stops at *leaves*: function parameters and the results of cross-block reductions
(:mod:`accy.dask.partition`). Every dimension of a chunked label class takes the block's
extent; every other dimension keeps its full extent. Attributes that spell a result shape
(``broadcast_to``, ``reshape``) follow the new result type; the module is verified before
it is printed, so a block program is as checked as the traced one.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from accy.dask.partition import Labels
from accy.ir import Function, Module, Operation, TensorType, Value

__all__ = ["Slice", "block_texts", "slice_for"]

_SHAPE_ATTR_OPS = frozenset({"tensor.broadcast_to", "tensor.reshape"})


class Slice:
    """The ops computing ``target`` from ``leaves`` (in program order)."""

    def __init__(self, target: Value, leaves: list[Value], ops: list[Operation]) -> None:
        self.target, self.leaves, self.ops = target, leaves, ops


def slice_for(fn: Function, target: Value, frontier: set[Value]) -> Slice:
    """Backward slice of ``target`` that stops at values in ``frontier`` (or parameters)."""
    needed: set[Operation] = set()
    leaves: list[Value] = []
    stack = [target]
    seen: set[Value] = set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        op = v.defining_op
        if v in frontier or op is None:
            leaves.append(v)
            continue
        needed.add(op)
        stack.extend(op.operands)
    order = {v: i for i, v in enumerate(fn.params)}
    ops = [op for op in fn.body.ops if op in needed]
    pos = {r: i for i, op in enumerate(fn.body.ops) for r in op.results}
    leaves.sort(key=lambda v: (0, order[v]) if v in order else (1, pos[v]))
    return Slice(target, leaves, ops)


def _retyped(t: TensorType, labels: list[int], lab: Labels, sizes: dict[int, int]) -> TensorType:
    shape = tuple(sizes.get(lab.cls(label), n) for label, n in zip(labels, t.shape, strict=True))
    return t.with_shape(shape)


def _build(fn: Function, sl: Slice, lab: Labels, sizes: dict[int, int]) -> Module:
    params = [_retyped(v.type, lab.dims[v], lab, sizes) for v in sl.leaves]
    out_t = _retyped(sl.target.type, lab.dims[sl.target], lab, sizes)
    nf = Function(fn.name, params, [out_t])
    mapping: dict[Value, Value] = dict(zip(sl.leaves, nf.params, strict=True))
    for op in sl.ops:
        types = [_retyped(r.type, lab.dims[r], lab, sizes) for r in op.results]
        attrs = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in op.attrs.items()}
        if op.name in _SHAPE_ATTR_OPS:
            attrs["shape"] = list(types[0].shape)
        elif op.name == "tensor.slice":  # an axis kept whole keeps the block's whole extent
            src = mapping[op.operands[0]].type.shape
            attrs["limit"] = [n if lo == 0 and hi == full else hi for lo, hi, full, n in
                              zip(op.attrs["start"], op.attrs["limit"],
                                  op.operands[0].type.shape, src, strict=True)]
        new = Operation(op.name, [mapping[v] for v in op.operands], types, attrs, [],
                        op.location)
        nf.body.append(new)
        mapping.update(zip(op.results, new.results, strict=True))
    nf.body.append(Operation("func.return", [mapping[sl.target]], [], {}, []))
    module = Module([nf])
    module.verify()
    return module


def block_texts(fn: Function, sl: Slice, lab: Labels) -> dict[tuple, str]:
    """IR text of the slice for every combination of block extents, keyed by leaf shapes.

    Raises:
        VerifyError: the re-typed slice does not verify (an accy bug in the partitioner).
    """
    classes: list[int] = []
    for v in [*sl.leaves, sl.target]:
        for c in lab.chunked_classes(v):
            if c not in classes:
                classes.append(c)
    options: Iterable[tuple[int, ...]] = itertools.product(
        *[sorted(set(lab.chunks(c))) for c in classes])
    out: dict[tuple, str] = {}
    for combo in options:
        sizes = dict(zip(classes, combo, strict=True))
        key = tuple(_retyped(v.type, lab.dims[v], lab, sizes).shape for v in sl.leaves)
        if key not in out:
            out[key] = _build(fn, sl, lab, sizes).to_text()
    return out
