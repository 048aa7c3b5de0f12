"""Helpers shared by the contract passes: constants, splats, purity, op replacement."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.ir import Block, Operation, TensorType, Value, get_op_def

__all__ = [
    "MAX_FOLD_ELEMS",
    "all_blocks",
    "all_equal_to",
    "constant_array",
    "erase_dead",
    "insert_op",
    "is_pure",
    "make_constant",
    "replace_op",
    "splat_source",
]

#: Largest constant (in elements) the contract passes create.
MAX_FOLD_ELEMS = 1 << 20


def is_pure(op: Operation) -> bool:
    """Whether ``op`` is registered with the ``pure`` trait (unknown ops are not pure)."""
    try:
        return get_op_def(op.name).has("pure")
    except VerifyError:
        return False


def constant_array(v: Value) -> np.ndarray | None:
    """The array of ``v`` if a ``tensor.constant`` defines it, else ``None``."""
    op = v.defining_op
    if op is None or op.name != "tensor.constant":
        return None
    value = op.attrs.get("value")
    return value if isinstance(value, np.ndarray) else None


def splat_source(v: Value) -> np.ndarray | None:
    """The constant that ``v`` is (possibly through ``tensor.broadcast_to``), else ``None``.

    The returned array broadcasts (numpy rules) to ``v``'s shape.
    """
    op = v.defining_op
    if op is not None and op.name == "tensor.broadcast_to":
        return constant_array(op.operands[0])
    return constant_array(v)


def all_equal_to(arr: np.ndarray, value: Any, negative_zero: bool | None = None) -> bool:
    """Whether every element of ``arr`` equals ``value``; for float arrays and a given
    ``negative_zero``, also whether every sign bit is set (True) or clear (False)."""
    if not bool(np.all(arr == value)):
        return False
    if negative_zero is None or arr.dtype.kind != "f":
        return True
    return bool(np.all(np.signbit(arr) == negative_zero))


def insert_op(anchor: Operation, name: str, operands: list[Value], attrs: dict[str, Any]) -> Value:
    """Insert a type-inferred op ``name`` before ``anchor``; return its single result."""
    types = get_op_def(name).infer_types([v.type for v in operands], attrs)
    new = Operation(name, operands, types, attrs, location=anchor.location)
    if anchor.parent is None:
        raise VerifyError(f"'{anchor.name}' op is not in a block")
    anchor.parent.insert_before(anchor, new)
    return new.results[0]


def make_constant(anchor: Operation, arr: np.ndarray, type: TensorType) -> Value:
    """Insert ``tensor.constant`` holding ``arr`` (cast and shaped to ``type``)."""
    # np.array keeps 0-d arrays 0-d (np.ascontiguousarray would make them 1-d).
    value = np.array(arr, dtype=type.dtype.numpy, order="C").reshape(type.shape)
    return insert_op(anchor, "tensor.constant", [], {"value": value})


def replace_op(op: Operation, values: list[Value]) -> None:
    """Make the users of ``op``'s results read ``values``, then erase ``op`` and any pure
    producers of its operands that are left without uses."""
    for old, new in zip(op.results, values, strict=True):
        old.replace_all_uses_with(new)
    erase_dead(op)


def erase_dead(op: Operation) -> None:
    """Erase ``op`` if it is unused (and pure, or already replaced), then its dead producers.

    A worklist, not a recursion: a dead chain as long as the program (an unrolled Python
    loop) neither recurses per op nor hits the recursion limit.
    """
    work = [op]
    first = True
    while work:
        cur = work.pop()
        if cur.parent is None or any(r.uses for r in cur.results):
            continue
        if not first and not is_pure(cur):
            continue
        first = False
        operands = list(cur.operands)
        cur.erase()
        # reversed: the first operand's producer is looked at first, as the recursion did
        work.extend(v.defining_op for v in reversed(operands) if v.defining_op is not None)


def all_blocks(blocks: list[Block]) -> Iterator[Block]:
    """Each block, then the blocks of the regions nested in its ops (pre-order)."""
    for block in blocks:
        yield block
        for op in block.ops:
            yield from all_blocks([r.block for r in op.regions])
