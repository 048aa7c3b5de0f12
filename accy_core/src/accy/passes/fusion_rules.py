"""What fusion may recompute inside a consumer rather than write to memory: index maps,
scalar constants and short arithmetic over values already in memory
(:mod:`accy.passes.fusion` forms the regions)."""

from __future__ import annotations

from accy.ir import Operation, Value
from accy.ir.ops.loop import LOOP_OPS

__all__ = ["INDEX_OPS", "RECOMPUTE_BUDGET", "ROOT_OPS", "is_cheap", "is_input",
           "is_scalar_constant", "recomputable"]

INDEX_OPS = frozenset(
    {
        "tensor.broadcast_to",
        "tensor.reshape",
        "tensor.transpose",
        "tensor.iota",
        "tensor.slice",
        "tensor.pad",
        "tensor.dynamic_slice",
    }
)
ROOT_OPS = frozenset({"reduce.sum", "reduce.max", "reduce.min", "linalg.dot_general"})


def is_scalar_constant(op: Operation | None) -> bool:
    """``op`` is a ``tensor.constant`` of at most one element."""
    return op is not None and op.name == "tensor.constant" and op.results[0].type.num_elements <= 1


def is_cheap(op: Operation | None) -> bool:
    """Cheap to recompute per use: index maps, iota and scalar constants."""
    return op is not None and (op.name in INDEX_OPS or is_scalar_constant(op))


def is_input(v: Value) -> bool:
    """Values that already live in memory: params, non-scalar constants, region results."""
    op = v.defining_op
    if op is None:
        return True
    if op.name == "dispatch.region" or op.name in LOOP_OPS:
        return True
    return op.name == "tensor.constant" and not is_scalar_constant(op)


#: elementwise ops a consumer may recompute instead of reading their value from memory
#: (``re*re`` feeding both an escape test and an update), and how many of them at most
_RECOMPUTE_OPS = frozenset({"arith.add", "arith.sub", "arith.mul", "arith.neg", "arith.abs",
                            "arith.max", "arith.min", "arith.cast", "arith.lt", "arith.le",
                            "arith.gt", "arith.ge", "arith.eq", "arith.ne", "arith.and",
                            "arith.or", "arith.not", "arith.select"})
RECOMPUTE_BUDGET = 4


def _resident(v: Value, mat: set[Value]) -> bool:
    """``v`` is read from memory (through index maps) or is a scalar constant."""
    while is_cheap(v.defining_op) and v.defining_op.operands:
        v = v.defining_op.operands[0]
    op = v.defining_op
    return is_input(v) or is_scalar_constant(op) or (v in mat and not is_cheap(op))


def _recompute_cost(v: Value, mat: set[Value], budget: int) -> int:
    """Ops a consumer evaluates to recompute ``v`` from values in memory (stops counting
    past ``budget``); ``budget + 1`` when ``v`` is no such cheap same-shape expression."""
    if _resident(v, mat):
        return 0
    op = v.defining_op
    if (op.name not in _RECOMPUTE_OPS or len(op.results) != 1
            or any(x.type.shape != v.type.shape for x in op.operands)):
        return budget + 1
    cost = 1
    for x in op.operands:
        if cost > budget:
            break
        cost += _recompute_cost(x, mat, budget - cost)
    return cost


def recomputable(op: Operation, mat: set[Value]) -> bool:
    """At most :data:`RECOMPUTE_BUDGET` cheap arithmetic ops over values already in memory:
    recomputing them in each consumer costs a few instructions per element, writing the
    value a launch, a store and a load per element per consumer. Only for consumers that
    read it elementwise: one reading it through index maps (a roll, a shifted window) may
    evaluate it at several positions per element, and keeps it in memory."""
    v = op.results[0]
    if any(u.name in INDEX_OPS for u in v.users):  # read at other positions: once there
        return False
    return _recompute_cost(v, mat, RECOMPUTE_BUDGET) <= RECOMPUTE_BUDGET
