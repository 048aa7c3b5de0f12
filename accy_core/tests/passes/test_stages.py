"""run_stages: stage order, snapshots, fingerprints, records; the reference evaluator."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError, VerifyError
from accy.ir import Operation, TensorType, parse_module
from accy.passes import (
    STAGES,
    PassContext,
    get_pipeline,
    parse_pipeline,
    print_pipeline,
    product_fingerprint,
    run_stages,
)
from accy.passes.reference_eval import evaluate
from pass_helpers import assert_bitwise_equal

PROGRAM = """\
module {
  func @f(%arg0: f32[4], %arg1: f32[4]) -> (f32[4]) {
    %0 = math.exp %arg0 : (f32[4]) -> f32[4]
    %1 = arith.mul %arg0, %arg1 : (f32[4], f32[4]) -> f32[4]
    %2 = arith.mul %arg1, %arg0 : (f32[4], f32[4]) -> f32[4]
    %3 = arith.add %1, %2 : (f32[4], f32[4]) -> f32[4]
    func.return %3 : (f32[4]) -> ()
  }
}
"""


def test_stages_are_registered_pipelines_in_order() -> None:
    assert STAGES == ("contract", "tensor", "dispatch", "memory", "kernel", "target")
    assert get_pipeline("contract") == "verify,canonicalize,constant-fold,cse,dce"
    assert get_pipeline("tensor") == (
        "activation-lowering,einsum-lowering{strategy=greedy},reduction-lowering,"
        "indexing-lowering{kernel-library=enabled},canonicalize,cse,dce"
    )
    for stage in STAGES:
        assert print_pipeline(parse_pipeline(get_pipeline(stage))) == get_pipeline(stage)


def test_contract_stage_removes_dead_and_repeated_work_on_a_copy() -> None:
    module = parse_module(PROGRAM)
    text = module.to_text()
    ctx = PassContext()
    (product,) = run_stages(module, ctx, until="contract")
    assert module.to_text() == text  # the input is untouched
    assert product.stage == "contract"
    assert module.op_count() == 4 and product.module.op_count() == 2
    assert [r.name for r in product.records] == [
        "verify",
        "canonicalize",
        "constant-fold",
        "cse",
        "dce",
    ]
    assert [r.position for r in product.records] == [0, 1, 2, 3, 4]
    assert list(product.records) == ctx.records
    assert product.fingerprint == hashlib.sha256(product.module.to_text().encode()).hexdigest()
    assert product.text == product.module.to_text()
    assert product.wall_ns >= sum(r.wall_ns for r in product.records)
    assert [(a.name, a.hits, a.misses) for a in product.analysis_records] == [("use-counts", 0, 1)]
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    assert_bitwise_equal(evaluate(product.module, "f", [x, y]), evaluate(module, "f", [x, y]))


def test_each_stage_gets_its_own_snapshot() -> None:
    products = run_stages(parse_module(PROGRAM), PassContext(), until="dispatch")
    assert [p.stage for p in products] == ["contract", "tensor", "dispatch"]
    assert len({id(p.module) for p in products}) == 3
    assert "dispatch.region" not in products[1].text
    assert "dispatch.region" in products[2].text


def test_unknown_stage_lists_the_stages_in_order() -> None:
    with pytest.raises(
        InputError,
        match="unknown stage 'lowering'; stages in order: "
        "contract, tensor, dispatch, memory, kernel, target",
    ):
        run_stages(parse_module(PROGRAM), until="lowering")


def test_malformed_input_is_a_verify_error() -> None:
    module = parse_module(PROGRAM)
    fn = module.functions[0]
    bad = Operation("math.exp", [fn.params[0]], [TensorType("f32", (5,))])
    fn.body.insert_before(fn.body.ops[0], bad)
    with pytest.raises(VerifyError, match="'math.exp' op at @f:#0: result types"):
        run_stages(module, until="contract")


class _Kernel:
    def __init__(self, fp: str) -> None:
        self.fp = fp

    def fingerprint(self) -> str:
        return self.fp


def test_product_fingerprint_covers_kernels_in_key_order() -> None:
    module = parse_module(PROGRAM)
    plain = product_fingerprint(module)
    assert plain == module.fingerprint()
    module.attrs["kernels"] = {"b": _Kernel("2"), "a": _Kernel("1")}
    with_kernels = product_fingerprint(module)
    assert with_kernels != plain
    module.attrs["kernels"] = {"a": _Kernel("1"), "b": _Kernel("2")}
    assert product_fingerprint(module) == with_kernels
    module.attrs["kernels"]["b"] = _Kernel("3")
    assert product_fingerprint(module) != with_kernels


REGION = """\
module {
  func @g(%arg0: f32[3], %arg1: i32[3]) -> (f32[3], f32[]) {
    %0 = dispatch.region %arg0 {kind = "map"} : (f32[3]) -> f32[3] {
    ^(%arg2: f32[3]):
      %1 = arith.neg %arg2 : (f32[3]) -> f32[3]
      dispatch.yield %1 : (f32[3]) -> ()
    }
    %2 = arith.cast %arg1 {dtype = f32} : (i32[3]) -> f32[3]
    %3 = arith.add %0, %2 : (f32[3], f32[3]) -> f32[3]
    %4 = reduce.sum %3 {axes = [0]} : (f32[3]) -> f32[]
    func.return %3, %4 : (f32[3], f32[]) -> ()
  }
}
"""


def test_reference_evaluator_runs_regions_and_checks_inputs() -> None:
    module = parse_module(REGION)
    out = evaluate(module, "g", [[1.0, 2.0, 3.0], np.array([1, 1, 1], np.int32)])
    np.testing.assert_array_equal(out[0], np.array([0.0, -1.0, -2.0], np.float32))
    assert out[0].dtype == np.float32 and out[1].shape == () and out[1] == -3.0
    with pytest.raises(InputError, match=r"input #0: expected shape \[3\], got \[2\]"):
        evaluate(module, "g", [np.zeros(2, np.float32), np.zeros(3, np.int32)])
    with pytest.raises(InputError, match="input #1: expected dtype i32, got float64"):
        evaluate(module, "g", [np.zeros(3, np.float32), np.zeros(3)])
    with pytest.raises(InputError, match="@g takes 2 inputs, got 1"):
        evaluate(module, "g", [np.zeros(3, np.float32)])


def test_reference_evaluator_refuses_ops_without_semantics(monkeypatch) -> None:
    from accy.ir.ops import OpDef, registry

    # registered for this test only: the op registry is process-wide, and a leftover op
    # would fail the golden-coverage test of accy_core/tests/ir in the same worker
    monkeypatch.setitem(registry._REGISTRY, "test.opaque",
                        OpDef("test.opaque", 1, lambda types, attrs: [types[0]], None))
    text = PROGRAM.replace("math.exp", "test.opaque")
    module = parse_module(text)
    with pytest.raises(UnsupportedError, match="'test.opaque' op has no reference semantics"):
        evaluate(module, "f", [np.zeros(4, np.float32), np.zeros(4, np.float32)])


SCALAR_TRANSPOSE = """\
module {
  func @s(%arg0: f32[]) -> (f32[]) {
    %0 = tensor.transpose %arg0 {perm = []} : (f32[]) -> f32[]
    func.return %0 : (f32[]) -> ()
  }
}
"""


def test_reference_evaluator_keeps_scalars_scalar() -> None:
    # np.ascontiguousarray turns 0-d arrays into 1-d ones; the transpose reference used it.
    (out,) = evaluate(parse_module(SCALAR_TRANSPOSE), "s", [np.float32(2.5)])
    assert out.shape == () and out == 2.5
