"""Lower ``nn.relu``, ``nn.gelu`` and ``nn.softmax`` to arith/math/reduce primitives.

- relu(x) → max(x, 0)
- gelu(x) → 0.5·x·(1 + tanh(c·(x + 0.044715·x³))), c = √(2/π) (tanh form, see accy.ir.ops.nn)
- softmax(x, axis) → e = exp(x − broadcast(max(x, axis))); e / broadcast(sum(e, axis));
  an empty ``x`` is its own softmax (there is no max over an empty axis to take)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module
from accy.ir.ops.nn import GELU_C
from accy.passes.base import Pass, PassContext
from accy.passes.rewriter import Rewriter

__all__ = ["ActivationLoweringPass"]


def _relu(rw: Rewriter) -> list:
    x = rw.anchor.operands[0]
    return [rw.op("arith.max", [x, rw.splat(0, x.type)])]


def _gelu(rw: Rewriter) -> list:
    x = rw.anchor.operands[0]
    t = x.type
    x3 = rw.op("arith.mul", [rw.op("arith.mul", [x, x]), x])
    inner = rw.op("arith.add", [x, rw.op("arith.mul", [rw.splat(0.044715, t), x3])])
    th = rw.op("math.tanh", [rw.op("arith.mul", [rw.splat(GELU_C, t), inner])])
    one_plus = rw.op("arith.add", [rw.splat(1.0, t), th])
    return [rw.op("arith.mul", [rw.op("arith.mul", [rw.splat(0.5, t), x]), one_plus])]


def _softmax(rw: Rewriter) -> list:
    x = rw.anchor.operands[0]
    if x.type.num_elements == 0:
        return [x]
    axis = rw.anchor.attrs.get("axis", -1)
    axis = axis + x.type.rank if axis < 0 else axis
    m = rw.op("reduce.max", [x], axes=(axis,), keepdims=True)
    e = rw.op("math.exp", [rw.op("arith.sub", [x, rw.broadcast(m, x.type.shape)])])
    s = rw.op("reduce.sum", [e], axes=(axis,), keepdims=True)
    return [rw.op("arith.div", [e, rw.broadcast(s, x.type.shape)])]


_LOWERINGS = {"nn.relu": _relu, "nn.gelu": _gelu, "nn.softmax": _softmax}


@dataclass(frozen=True)
class ActivationLoweringPass(Pass):
    """Replace nn activations and softmax by primitive ops."""

    name: ClassVar[str] = "activation-lowering"
    summary: ClassVar[str] = "lower relu, gelu and softmax to arith/math/reduce ops"

    def run(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for fn in module.functions:
            for op in list(fn.body.ops):
                lower = _LOWERINGS.get(op.name)
                if lower is not None:
                    rw = Rewriter(op)
                    rw.replace_with(lower(rw))
                    changed = True
        return changed
