"""A small helper for passes that replace one op by a sequence of new ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.ir import Operation, TensorType, Value, get_op_def
from accy.ir.core import Block

__all__ = ["Rewriter"]


class Rewriter:
    """Insert type-inferred ops before ``anchor`` in its block, then replace ``anchor``.

    Example::

        rw = Rewriter(op)
        y = rw.op("arith.max", [x, rw.splat(0.0, x.type)])
        rw.replace_with([y])
    """

    def __init__(self, anchor: Operation) -> None:
        if anchor.parent is None:
            raise ValueError("anchor op is not in a block")
        self.anchor = anchor
        self.block: Block = anchor.parent

    def op(self, name: str, operands: Sequence[Value], **attrs: Any) -> Value:
        """Insert op ``name`` before the anchor; return its single result."""
        types = get_op_def(name).infer_types([v.type for v in operands], attrs)
        new = Operation(name, operands, types, attrs, location=self.anchor.location)
        self.block.insert_before(self.anchor, new)
        return new.results[0]

    def constant(self, value: Any, type: TensorType) -> Value:
        arr = np.array(np.broadcast_to(np.asarray(value, dtype=type.dtype.numpy), type.shape))
        return self.op("tensor.constant", [], value=arr)

    def splat(self, value: float, type: TensorType) -> Value:
        """A scalar constant broadcast to ``type`` (stays a cheap scalar in fusion)."""
        c = self.constant(value, TensorType(type.dtype, ()))
        if type.shape == ():
            return c
        return self.op("tensor.broadcast_to", [c], shape=type.shape)

    def broadcast(self, x: Value, shape: tuple[int, ...]) -> Value:
        return (
            x
            if x.type.shape == tuple(shape)
            else self.op("tensor.broadcast_to", [x], shape=tuple(shape))
        )

    def replace_with(self, values: Sequence[Value]) -> None:
        """Replace the anchor's results by ``values`` and erase the anchor."""
        for old, new in zip(self.anchor.results, values, strict=True):
            old.replace_all_uses_with(new)
        self.anchor.erase()
