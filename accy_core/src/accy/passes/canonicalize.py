"""Fold algebraic identities and collapse chains of index maps.

Rewrites (each keeps every value bit for bit, NaN and signed zeros included):

- ``x + 0`` → ``x`` (ints; floats only for ``-0.0``, since ``-0.0 + 0.0`` is ``+0.0``),
  ``x - 0`` → ``x`` (floats: ``+0.0``), ``x * 1`` / ``1 * x`` → ``x``, ``x / 1`` → ``x``;
  the constant may be a ``tensor.constant`` or a ``tensor.broadcast_to`` of one;
- ``neg(neg(x))`` → ``x``; ``cast(x)`` to ``x``'s own dtype → ``x``;
- ``broadcast_to`` / ``reshape`` to ``x``'s own shape, ``transpose`` by the identity → ``x``;
- ``transpose(transpose(x))`` → one ``transpose`` (or ``x``), ``reshape(reshape(x))`` → one
  ``reshape``, ``broadcast_to(broadcast_to(x))`` → one ``broadcast_to``;
- ``broadcast_to`` of a constant that adds no elements (only axes of extent 1) → a constant.
  A broadcast that grows the data is kept: fusion treats ``broadcast_to`` of a scalar
  constant as a free splat, while a dense constant would become a buffer in memory.

Ops left without uses by a rewrite are erased with their dead pure producers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module, Operation, Value
from accy.passes.base import Pass, PassContext
from accy.passes.constants import (
    all_blocks,
    all_equal_to,
    constant_array,
    erase_dead,
    insert_op,
    make_constant,
    replace_op,
    splat_source,
)

__all__ = ["CanonicalizePass", "canonicalize_op"]

_MAX_SWEEPS = 64

Pattern = Callable[[Operation], "Value | None"]


def _is_identity_constant(v: Value, value: int, negative_zero: bool | None) -> bool:
    arr = splat_source(v)
    return arr is not None and all_equal_to(arr, value, negative_zero)


def _add(op: Operation) -> Value | None:
    a, b = op.operands
    if _is_identity_constant(b, 0, True):
        return a
    if _is_identity_constant(a, 0, True):
        return b
    return None


def _sub(op: Operation) -> Value | None:
    a, b = op.operands
    return a if _is_identity_constant(b, 0, False) else None


def _mul(op: Operation) -> Value | None:
    a, b = op.operands
    if _is_identity_constant(b, 1, None):
        return a
    if _is_identity_constant(a, 1, None):
        return b
    return None


def _div(op: Operation) -> Value | None:
    a, b = op.operands
    return a if _is_identity_constant(b, 1, None) else None


def _producer(v: Value, name: str) -> Operation | None:
    op = v.defining_op
    return op if op is not None and op.name == name else None


def _neg(op: Operation) -> Value | None:
    inner = _producer(op.operands[0], "arith.neg")
    return inner.operands[0] if inner is not None else None


def _cast(op: Operation) -> Value | None:
    x = op.operands[0]
    return x if x.type == op.results[0].type else None


def _broadcast(op: Operation) -> Value | None:
    x, out = op.operands[0], op.results[0].type
    if x.type == out:
        return x
    inner = _producer(x, "tensor.broadcast_to")
    if inner is not None:
        return insert_op(op, "tensor.broadcast_to", [inner.operands[0]], {"shape": out.shape})
    arr = constant_array(x)
    if arr is not None and arr.size == out.num_elements:
        return make_constant(op, arr, out)
    return None


def _reshape(op: Operation) -> Value | None:
    x, out = op.operands[0], op.results[0].type
    if x.type == out:
        return x
    inner = _producer(x, "tensor.reshape")
    if inner is not None:
        src = inner.operands[0]
        if src.type == out:
            return src
        return insert_op(op, "tensor.reshape", [src], {"shape": out.shape})
    return None


def _transpose(op: Operation) -> Value | None:
    x, perm = op.operands[0], tuple(op.attrs["perm"])
    if perm == tuple(range(len(perm))):
        return x
    inner = _producer(x, "tensor.transpose")
    if inner is None:
        return None
    inner_perm = tuple(inner.attrs["perm"])
    composed = tuple(inner_perm[p] for p in perm)
    if composed == tuple(range(len(composed))):
        return inner.operands[0]
    return insert_op(op, "tensor.transpose", [inner.operands[0]], {"perm": composed})


PATTERNS: dict[str, Pattern] = {
    "arith.add": _add,
    "arith.sub": _sub,
    "arith.mul": _mul,
    "arith.div": _div,
    "arith.neg": _neg,
    "arith.cast": _cast,
    "tensor.broadcast_to": _broadcast,
    "tensor.reshape": _reshape,
    "tensor.transpose": _transpose,
}


def canonicalize_op(op: Operation) -> bool:
    """Apply the first matching pattern to ``op``; return whether it was replaced."""
    pattern = PATTERNS.get(op.name)
    if pattern is None or len(op.results) != 1:
        return False
    new = pattern(op)
    if new is None:
        return False
    if new.type != op.results[0].type:  # a pattern must never change a type
        if new.defining_op is not None and new.defining_op is not op:
            erase_dead(new.defining_op)
        return False
    replace_op(op, [new])
    return True


@dataclass(frozen=True)
class CanonicalizePass(Pass):
    """Fold identities (``x + 0``, ``x * 1``, ``neg(neg(x))``, no-op casts and index maps)
    and collapse chains of transposes, reshapes and broadcasts, until nothing changes."""

    name: ClassVar[str] = "canonicalize"
    summary: ClassVar[str] = "fold identities and collapse transpose/reshape/broadcast chains"

    def run(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for _ in range(_MAX_SWEEPS):
            swept = False
            for block in list(all_blocks([f.body for f in module.functions])):
                with block.batch_edits():
                    for op in list(block.ops):
                        if op.parent is block and canonicalize_op(op):
                            swept = True
            if not swept:
                break
            changed = True
        return changed
