"""The tensor IR verifier.

Checks, for every function: each op is registered, has the right operand count and
attributes, reads only values defined earlier in its block (or, for ops in a region, the
region's own arguments: regions are isolated from above), and has the result types its
op declaration infers; the body ends with ``func.return`` whose operand types equal the
declared result types. Messages name the op and its position ``@func:#index``. Loop ops
are checked against the functions they name (:mod:`accy.ir.loop_verify`).
"""

from __future__ import annotations

from accy.errors import VerifyError
from accy.ir.core import Block, Function, Module, Operation, Value
from accy.ir.ops.registry import get_op_def

__all__ = ["verify", "verify_function"]


def _where(fn: Function, path: str, op: Operation) -> str:
    loc = f" (at {op.location})" if op.location else ""
    return f"@{fn.name}:{path}{loc}"


def _verify_op(fn: Function, op: Operation, path: str, visible: set[Value]) -> None:
    try:
        op_def = get_op_def(op.name)
    except VerifyError as e:
        pos = _where(fn, path, op)
        raise VerifyError(f"{e.message} at {pos}", op=op.name, position=pos) from None
    for i, v in enumerate(op.operands):
        if v not in visible:
            pos = _where(fn, path, op)
            raise VerifyError(
                f"'{op.name}' op at {pos}: operand #{i} is not defined before use "
                "(or is defined outside an isolated region)",
                op=op.name,
                position=pos,
            )
    if op_def.has("region"):
        _verify_region_op(fn, op, path)
    else:
        try:
            inferred = op_def.infer_types([v.type for v in op.operands], op.attrs)
        except VerifyError as e:
            pos = _where(fn, path, op)
            raise VerifyError(f"{e.message} at {pos}", op=op.name, position=pos) from None
        got = [r.type for r in op.results]
        if inferred != got:
            pos = _where(fn, path, op)
            raise VerifyError(
                f"'{op.name}' op at {pos}: result types {[str(t) for t in got]} do not match "
                f"inferred {[str(t) for t in inferred]}",
                op=op.name,
                position=pos,
            )


def _verify_region_op(fn: Function, op: Operation, path: str) -> None:
    pos = _where(fn, path, op)
    if len(op.regions) != 1:
        raise VerifyError(f"'{op.name}' op at {pos}: expected 1 region", op=op.name, position=pos)
    block = op.regions[0].block
    if [a.type for a in block.args] != [v.type for v in op.operands]:
        raise VerifyError(
            f"'{op.name}' op at {pos}: region argument types must equal operand types",
            op=op.name,
            position=pos,
        )
    term = _verify_block(fn, block, path + ".", set(block.args), terminator="dispatch.yield")
    if [v.type for v in term.operands] != [r.type for r in op.results]:
        raise VerifyError(
            f"'{op.name}' op at {pos}: yielded types {[str(v.type) for v in term.operands]} "
            f"do not match results {[str(r.type) for r in op.results]}",
            op=op.name,
            position=pos,
        )


def _verify_block(
    fn: Function, block: Block, prefix: str, visible: set[Value], terminator: str
) -> Operation:
    if not block.ops or block.ops[-1].name != terminator:
        raise VerifyError(f"@{fn.name}: block must end with '{terminator}'")
    for i, op in enumerate(block.ops):
        path = f"{prefix}#{i}"
        if op.name == terminator and i != len(block.ops) - 1:
            raise VerifyError(
                f"'{op.name}' op at @{fn.name}:{path}: terminator in the middle of a block"
            )
        _verify_op(fn, op, path, visible)
        visible.update(op.results)
    return block.ops[-1]


def verify_function(fn: Function) -> None:
    """Verify one function; raise :class:`VerifyError` at the first problem."""
    term = _verify_block(fn, fn.body, "", set(fn.params), terminator="func.return")
    got = [v.type for v in term.operands]
    if got != fn.result_types:
        raise VerifyError(
            f"'func.return' op in @{fn.name}: returns {[str(t) for t in got]}, "
            f"function declares {[str(t) for t in fn.result_types]}",
            op="func.return",
            position=_where(fn, f"#{len(fn.body.ops) - 1}", term),
        )


def verify(module: Module) -> None:
    """Verify every function of ``module``.

    Raises:
        VerifyError: the first problem found, naming op and position.
    """
    names: set[str] = set()
    for fn in module.functions:
        if fn.name in names:
            raise VerifyError(f"function @{fn.name} is defined twice")
        names.add(fn.name)
        verify_function(fn)
    from accy.ir.loop_verify import verify_loops

    verify_loops(module)
