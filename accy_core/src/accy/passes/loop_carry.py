"""Prepare loop bodies for the launch graph (dispatch stage, before fusion).

Each loop gets its own copy of its body function (``@body.iter``, attribute
``loop_iteration``), so the body stays callable as written. The runtime repeats a body's
launches and hands each iteration's results to the next one
as its parameters (double-buffered), so:

- a ``loop.for`` body computes its next induction variable itself: ``iv + step`` becomes a
  trailing result (function attribute ``iv_carried``), and no iteration needs the host; a
  body that never reads its induction variable (a time-stepping loop) gets no such result,
  so no launch per iteration computes a value nothing reads;
- every carried result is a fresh buffer written by the body: a body that returns one of
  its parameters or a constant gets an explicit copy (a ``tensor.reshape`` to the same
  shape, which fusion turns into a copy kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from accy.ir import Module, Operation
from accy.ir.clone import clone_block_into
from accy.ir.core import Function
from accy.ir.loop_verify import IV_TYPE
from accy.ir.ops.loop import LOOP_OPS
from accy.passes.base import Pass, PassContext

__all__ = ["LoopCarryPass"]


def _copy_returns(fn: Function) -> None:
    term = fn.body.terminator
    for k, v in enumerate(list(term.operands)):
        op = v.defining_op
        if op is None or op.name == "tensor.constant":
            cp = Operation("tensor.reshape", [v], [v.type], {"shape": v.type.shape},
                           location=term.location)
            fn.body.insert_before(term, cp)
            term.set_operand(k, cp.results[0])


def _carry_iv(fn: Function, step: int) -> None:
    if not fn.params[0].users:
        return  # nothing reads the induction variable: no iv + step launch per iteration
    term = fn.body.terminator
    c = Operation("tensor.constant", [], [IV_TYPE], {"value": np.asarray(step, np.int32)})
    add = Operation("arith.add", [fn.params[0], c.results[0]], [IV_TYPE])
    fn.body.insert_before(term, c)
    fn.body.insert_before(term, add)
    term._add_operand(add.results[0])
    fn.result_types.append(IV_TYPE)
    fn.attrs["iv_carried"] = True


def _copy(module: Module, fn: Function) -> Function:
    """A copy of ``fn`` named ``<name>.iter`` (the original stays callable as it was)."""
    out = Function(f"{fn.name}.iter", fn.param_types, fn.result_types, fn.attrs)
    mapping = dict(zip(fn.params, out.params, strict=True))
    clone_block_into(fn.body, out.body, mapping)
    module.functions.append(out)
    return out


def prepare_loops(module: Module) -> int:
    """Point every loop of ``module`` at a prepared copy of its body (see the module
    docstring); a body already prepared (``iv_carried``, or a ``.iter`` copy) is kept, and
    a ``private`` body (traced by the frontend for one loop) is prepared in place."""
    done: dict[tuple[str, str], str] = {}
    for fn in list(module.functions):
        for op in fn.body.ops:
            if op.name not in LOOP_OPS:
                continue
            key = (op.name, op.attrs["body"], op.attrs.get("step", 1))
            if key not in done:
                body = module.function(op.attrs["body"])
                if body.attrs.get("iv_carried") or body.attrs.get("loop_iteration"):
                    done[key] = body.name
                else:
                    private = body.attrs.get("private") and sum(
                        1 for k in done if k[1] == body.name) == 0
                    copy = body if private else _copy(module, body)
                    copy.attrs["loop_iteration"] = True
                    if op.name == "loop.for":
                        _carry_iv(copy, op.attrs.get("step", 1))
                    _copy_returns(copy)
                    done[key] = copy.name
            op.attrs["body"] = done[key]
    return len(done)


@dataclass(frozen=True)
class LoopCarryPass(Pass):
    """Make loop bodies self-contained iterations (next induction variable, fresh results)."""

    name: ClassVar[str] = "loop-carry"
    summary: ClassVar[str] = "loop bodies compute their next induction variable, copy passthroughs"

    def run(self, module: Module, ctx: PassContext) -> bool:
        return prepare_loops(module) > 0
