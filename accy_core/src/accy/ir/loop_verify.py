"""Module-level checks of ``loop.*`` ops against the body functions they name.

- the named functions exist and are not the function holding the loop (nor call it back
  through other loops: loop bodies form no cycle);
- ``loop.for``: the body takes ``(i32[], operands...)`` and returns the ``carried`` operand
  types (plus a trailing ``i32[]`` once the dispatch stage has made the induction variable a
  carried value: function attribute ``iv_carried``);
- ``loop.while``: the condition takes the operand types and returns ``bool[]``; the body
  takes the operand types and returns the carried ones.
"""

from __future__ import annotations

from accy.errors import VerifyError
from accy.ir.core import Function, Module, Operation
from accy.ir.dtypes import DType
from accy.ir.ops.loop import LOOP_OPS, loop_body_names
from accy.ir.types import TensorType

__all__ = ["IV_TYPE", "verify_loops"]

#: Type of a ``loop.for`` induction variable.
IV_TYPE = TensorType(DType.I32, ())


def _types(ts) -> list[str]:
    return [str(t) for t in ts]


def _check_sig(op: Operation, where: str, fn: Function, params: list[TensorType],
               results: list[TensorType]) -> None:
    if fn.param_types != params:
        raise VerifyError(
            f"'{op.name}' op in {where}: @{fn.name} takes {_types(fn.param_types)}, the loop "
            f"passes {_types(params)}", op=op.name, position=where)
    if fn.result_types != results:
        raise VerifyError(
            f"'{op.name}' op in {where}: @{fn.name} returns {_types(fn.result_types)}, the "
            f"loop carries {_types(results)}", op=op.name, position=where)


def _verify_loop(fn: Function, i: int, op: Operation, funcs: dict[str, Function]) -> None:
    where = f"@{fn.name}:#{i}" + (f" (at {op.location})" if op.location else "")
    for name in loop_body_names(op):
        if name not in funcs:
            raise VerifyError(f"'{op.name}' op in {where}: no function @{name} in the module",
                              op=op.name, position=where)
        if name == fn.name:
            raise VerifyError(f"'{op.name}' op in {where}: a loop cannot run the function "
                              "that holds it", op=op.name, position=where)
    operands = [v.type for v in op.operands]
    carried = operands[: op.attrs["carried"]]
    if op.name == "loop.for":
        body = funcs[op.attrs["body"]]
        extra = [IV_TYPE] if body.attrs.get("iv_carried") else []
        _check_sig(op, where, body, [IV_TYPE, *operands], carried + extra)
        return
    cond, body = funcs[op.attrs["cond"]], funcs[op.attrs["body"]]
    _check_sig(op, where, cond, operands, [TensorType(DType.BOOL, ())])
    _check_sig(op, where, body, operands, carried)


def verify_loops(module: Module) -> None:
    """Raise :class:`VerifyError` at the first loop op that does not match its bodies."""
    funcs = {f.name: f for f in module.functions}
    calls: dict[str, set[str]] = {}
    for fn in module.functions:
        for i, op in enumerate(fn.body.ops):  # loops are never inside dispatch regions
            if op.name in LOOP_OPS:
                _verify_loop(fn, i, op, funcs)
                calls.setdefault(fn.name, set()).update(loop_body_names(op))
    state: dict[str, int] = {}
    for start in calls:
        stack = [(start, iter(sorted(calls.get(start, ()))))]
        if state.get(start):
            continue
        state[start] = 1
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                raise VerifyError(f"loop bodies call each other in a cycle through @{nxt}")
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(calls.get(nxt, ())))))
