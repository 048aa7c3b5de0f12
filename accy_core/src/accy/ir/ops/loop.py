"""``loop`` ops: structured loops whose bodies are functions of the module.

A loop's body is a function of the same module named by the ``body`` attribute (a
symbol reference, like ``func.call``), so it goes through every compilation stage exactly
as a function body does: fusion, bufferization and kernel outlining see an ordinary
function; the runtime's launch graph repeats its launch sequence.

``loop.for`` — fixed trip count::

    %r:2 = loop.for %a, %b, %k {body = "step", carried = 2, lower = 0, upper = 100, step = 1}
        : (f32[8], f32[8], f32[8]) -> (f32[8], f32[8])

Operands are the ``carried`` initial values followed by loop invariants (values the body
reads but does not change). ``@step`` takes ``(i32[] induction variable, carried...,
invariants...)`` and returns the next carried values; the op's results are the carried
values after the last iteration (the initial values when ``upper <= lower``).

``loop.while`` — the condition is a device scalar::

    %r = loop.while %x, %k {cond = "c", body = "b", carried = 1} : (f32[8], f32) -> (f32[8])

``@c`` takes ``(carried..., invariants...)`` and returns ``bool[]``; ``@b`` takes the same
and returns the next carried values. The loop runs ``@b`` while ``@c`` is true.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accy.ir.ops.common import fail
from accy.ir.ops.registry import OpDef, register_op
from accy.ir.types import TensorType

__all__ = ["LOOP_OPS", "loop_body_names"]

#: Ops whose bodies are module functions (fusion materializes their operands).
LOOP_OPS = frozenset({"loop.for", "loop.while"})


def _infer(name: str):
    def infer(types: Sequence[TensorType], attrs: dict[str, Any]) -> list[TensorType]:
        n = attrs["carried"]
        if not 0 <= n <= len(types):
            raise fail(name, f"carried = {n} must be between 0 and the {len(types)} operands")
        if name == "loop.for" and attrs.get("step", 1) <= 0:
            raise fail(name, f"step must be positive, got {attrs.get('step')}")
        return list(types[:n])
    return infer


register_op(OpDef(
    "loop.for", None, _infer("loop.for"), None,
    attrs={"body": "str", "carried": "int", "lower": "int", "upper": "int"},
    optional_attrs={"step": ("int", 1)},
    traits=frozenset({"pure", "loop"}),
    summary="repeat a body function a fixed number of times with carried values",
))
register_op(OpDef(
    "loop.while", None, _infer("loop.while"), None,
    attrs={"cond": "str", "body": "str", "carried": "int"},
    traits=frozenset({"pure", "loop"}),
    summary="repeat a body function while a condition function returns true",
))


def loop_body_names(op: Any) -> list[str]:
    """Names of the functions a loop op refers to (condition first for ``loop.while``)."""
    if op.name == "loop.while":
        return [op.attrs["cond"], op.attrs["body"]]
    return [op.attrs["body"]]
