"""Long straight-line programs (a Python loop unrolled at trace time, issue 11): the
passes edit a block without a linear search per op, and nothing recurses per op.

Work is counted, never timed: ``Block.ops`` is swapped for a list that counts its
``remove`` and ``index`` calls (each one a scan of the whole block).
"""

from __future__ import annotations

import pytest
from accy.errors import VerifyError
from accy.ir import Block, Operation, parse_module
from accy.ir.ops.registry import OpDef
from accy.ir.types import TensorType
from accy.passes import PassContext, PassManager
from accy.passes.constants import erase_dead
from accy.passes.reference_eval import evaluate
from pass_helpers import assert_bitwise_equal, random_inputs

STEPS = 300
T = "f32[4]"


class CountingList(list):
    """A list that counts the calls that scan it for one element."""

    scans = 0

    def remove(self, x: object) -> None:
        CountingList.scans += 1
        super().remove(x)

    def index(self, *args: object) -> int:
        CountingList.scans += 1
        return super().index(*args)


def _unrolled(steps: int) -> str:
    """``x = (x*c + x*c - (c+c)) * 1`` ``steps`` times: a repeated product (cse), a
    constant expression (constant-fold), an identity (canonicalize) and a chain as long as
    the program (fusion, erase)."""
    lines = ["%c = tensor.constant {value = dense<[0.5, 0.5, 0.5, 0.5]>} : () -> f32[4]",
             "%one = tensor.constant {value = dense<[1.0, 1.0, 1.0, 1.0]>} : () -> f32[4]"]
    x = "%arg0"
    for i in range(steps):
        lines += [
            f"%a{i} = arith.mul {x}, %c : ({T}, {T}) -> {T}",
            f"%b{i} = arith.mul {x}, %c : ({T}, {T}) -> {T}",
            f"%k{i} = arith.add %c, %c : ({T}, {T}) -> {T}",
            f"%s{i} = arith.add %a{i}, %b{i} : ({T}, {T}) -> {T}",
            f"%d{i} = arith.sub %s{i}, %k{i} : ({T}, {T}) -> {T}",
            f"%x{i} = arith.mul %d{i}, %one : ({T}, {T}) -> {T}",
        ]
        x = f"%x{i}"
    lines.append(f"func.return {x} : ({T}) -> ()")
    body = "\n    ".join(lines)
    return f"module {{\n  func @f(%arg0: {T}) -> ({T}) {{\n    {body}\n  }}\n}}\n"


@pytest.mark.parametrize("pipeline", ["cse", "constant-fold", "canonicalize",
                                      "cse,constant-fold,fusion"])
def test_passes_edit_a_long_block_without_scanning_it_per_op(pipeline: str) -> None:
    module = parse_module(_unrolled(STEPS))
    before = module.clone()
    fn = module.functions[0]
    fn.body.ops = CountingList(fn.body.ops)
    CountingList.scans = 0
    PassManager(pipeline).run(module, PassContext())
    assert CountingList.scans == 0
    computed = [op for op in module.functions[0].body.ops
                if op.name not in ("tensor.constant", "func.return")]
    assert len(computed) <= 5 * STEPS  # the pass did merge, fold, simplify or fuse ops
    inputs = random_inputs(before)
    assert_bitwise_equal(evaluate(module, "f", inputs), evaluate(before, "f", inputs))


def test_batch_edits_place_inserted_ops_as_eager_edits_do() -> None:
    t = TensorType("f32", (4,))
    block = Block([t])
    a = block.append(Operation("arith.neg", [block.args[0]], [t]))
    b = block.append(Operation("arith.neg", [a.result], [t]))
    ret = block.append(Operation("func.return", [b.result], []))
    with block.batch_edits():
        p = block.insert_before(b, Operation("arith.abs", [block.args[0]], [t]))
        q = block.insert_before(b, Operation("arith.abs", [block.args[0]], [t]))
        r = block.insert_before(p, Operation("math.exp", [block.args[0]], [t]))  # anchor new
        b.results[0].replace_all_uses_with(q.result)
        b.erase()
        assert b.parent is None and p.parent is block
        assert block.ops == [a, b, ret]  # the list is edited when the batch ends
    assert block.ops == [a, r, p, q, ret]
    assert a.result.uses == []  # the erased op's operand use went at once


def test_erase_dead_does_not_recurse_per_op() -> None:
    steps = 3000  # deeper than the default recursion limit (1000)
    lines = [f"%x0 = arith.neg %arg0 : ({T}) -> {T}"]
    lines += [f"%x{i} = arith.neg %x{i - 1} : ({T}) -> {T}" for i in range(1, steps)]
    body = "\n    ".join([*lines, f"func.return %arg0 : ({T}) -> ()"])
    module = parse_module(f"module {{\n  func @f(%arg0: {T}) -> ({T}) {{\n    {body}\n  }}\n}}\n")
    fn = module.functions[0]
    erase_dead(fn.body.ops[-2])
    assert [op.name for op in fn.body.ops] == ["func.return"]


def test_infer_types_is_remembered_per_exact_signature() -> None:
    calls = []
    t = TensorType("f32", (4,))

    def infer(types, attrs):
        calls.append(dict(attrs))
        return [types[0]]

    op = OpDef("test.scaled", 1, infer, optional_attrs={"k": ("float", 1.0)})
    for _ in range(3):
        assert op.infer_types([t], {"k": 2.0}) == [t]
    assert len(calls) == 1
    # values equal to Python but of another type or sign are other signatures
    for k in (-0.0, 0.0, 1, 2):
        op.infer_types([t], {"k": k})
    assert len(calls) == 5
    with pytest.raises(VerifyError, match="must be of kind float"):  # True == 1, not a float
        op.infer_types([t], {"k": True})
    assert op.infer_types([t], {}) == [t] and calls[-1] == {"k": 1.0}
