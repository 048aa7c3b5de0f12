"""Each contract pass on IR text: the rewritten IR, and the same bits from the reference."""

from __future__ import annotations

import numpy as np
from accy.ir import parse_module
from accy.passes import PassContext, PassManager
from pass_helpers import run_pipeline


def _body(module) -> list[str]:
    """The printed ops of the first function, without indentation."""
    lines = module.to_text().splitlines()
    return [ln.strip() for ln in lines[2:-2]]


IDENTITIES = """\
module {
  func @f(%arg0: f32[4], %arg1: i32[4]) -> (f32[4], i32[4], f32[4], i32[4]) {
    %0 = tensor.constant {value = dense<[1.0]>} : () -> f32[]
    %1 = tensor.broadcast_to %0 {shape = [4]} : (f32[]) -> f32[4]
    %2 = arith.mul %arg0, %1 : (f32[4], f32[4]) -> f32[4]
    %3 = arith.div %2, %1 : (f32[4], f32[4]) -> f32[4]
    %4 = tensor.constant {value = dense<[-0.0, -0.0, -0.0, -0.0]>} : () -> f32[4]
    %5 = arith.add %4, %3 : (f32[4], f32[4]) -> f32[4]
    %6 = tensor.constant {value = dense<[0]>} : () -> i32[]
    %7 = tensor.broadcast_to %6 {shape = [4]} : (i32[]) -> i32[4]
    %8 = arith.add %arg1, %7 : (i32[4], i32[4]) -> i32[4]
    %9 = arith.sub %8, %7 : (i32[4], i32[4]) -> i32[4]
    %10 = tensor.constant {value = dense<[1]>} : () -> i32[]
    %11 = tensor.broadcast_to %10 {shape = [4]} : (i32[]) -> i32[4]
    %12 = arith.mul %11, %9 : (i32[4], i32[4]) -> i32[4]
    %13 = arith.neg %5 : (f32[4]) -> f32[4]
    %14 = arith.neg %13 : (f32[4]) -> f32[4]
    %15 = arith.cast %12 {dtype = i32} : (i32[4]) -> i32[4]
    %16 = tensor.constant {value = dense<[0.0]>} : () -> f32[]
    %17 = tensor.broadcast_to %16 {shape = [4]} : (f32[]) -> f32[4]
    %18 = arith.sub %14, %17 : (f32[4], f32[4]) -> f32[4]
    func.return %14, %15, %18, %12 : (f32[4], i32[4], f32[4], i32[4]) -> ()
  }
}
"""


def test_canonicalize_folds_arithmetic_identities_and_erases_what_dies() -> None:
    after = run_pipeline(IDENTITIES, "canonicalize")
    assert _body(after) == [
        "func.return %arg0, %arg1, %arg0, %arg1 : (f32[4], i32[4], f32[4], i32[4]) -> ()"
    ]


SIGNED_ZEROS = """\
module {
  func @f(%arg0: f32[3]) -> (f32[3], f32[3]) {
    %0 = tensor.constant {value = dense<[0.0]>} : () -> f32[]
    %1 = tensor.broadcast_to %0 {shape = [3]} : (f32[]) -> f32[3]
    %2 = arith.add %arg0, %1 : (f32[3], f32[3]) -> f32[3]
    %3 = tensor.constant {value = dense<[-0.0]>} : () -> f32[]
    %4 = tensor.broadcast_to %3 {shape = [3]} : (f32[]) -> f32[3]
    %5 = arith.sub %arg0, %4 : (f32[3], f32[3]) -> f32[3]
    func.return %2, %5 : (f32[3], f32[3]) -> ()
  }
}
"""


def test_canonicalize_keeps_float_ops_that_would_change_a_signed_zero() -> None:
    x = np.array([-0.0, 1.5, np.nan], np.float32)
    after = run_pipeline(SIGNED_ZEROS, "canonicalize", inputs=[x])
    assert after.to_text() == parse_module(SIGNED_ZEROS).to_text()


INDEX_MAPS = """\
module {
  func @f(%arg0: f32[2,3,4], %arg1: f32[4]) -> (f32[2,3,4], f32[4,3,2], f32[24], f32[2,3,4], f32[5,2,4], f32[1,3], f32[4]) {
    %0 = tensor.transpose %arg0 {perm = [1, 2, 0]} : (f32[2,3,4]) -> f32[3,4,2]
    %1 = tensor.transpose %0 {perm = [2, 0, 1]} : (f32[3,4,2]) -> f32[2,3,4]
    %2 = tensor.transpose %0 {perm = [1, 0, 2]} : (f32[3,4,2]) -> f32[4,3,2]
    %3 = tensor.reshape %arg0 {shape = [6, 4]} : (f32[2,3,4]) -> f32[6,4]
    %4 = tensor.reshape %3 {shape = [24]} : (f32[6,4]) -> f32[24]
    %5 = tensor.reshape %arg0 {shape = [2, 3, 4]} : (f32[2,3,4]) -> f32[2,3,4]
    %6 = tensor.broadcast_to %5 {shape = [2, 3, 4]} : (f32[2,3,4]) -> f32[2,3,4]
    %7 = tensor.transpose %6 {perm = [0, 1, 2]} : (f32[2,3,4]) -> f32[2,3,4]
    %8 = tensor.broadcast_to %arg1 {shape = [2, 4]} : (f32[4]) -> f32[2,4]
    %9 = tensor.broadcast_to %8 {shape = [5, 2, 4]} : (f32[2,4]) -> f32[5,2,4]
    %10 = tensor.constant {value = dense<[1.0, 2.0, 3.0]>} : () -> f32[3]
    %11 = tensor.broadcast_to %10 {shape = [1, 3]} : (f32[3]) -> f32[1,3]
    %12 = tensor.constant {value = dense<[2.0]>} : () -> f32[]
    %13 = tensor.broadcast_to %12 {shape = [4]} : (f32[]) -> f32[4]
    func.return %1, %2, %4, %7, %9, %11, %13 : (f32[2,3,4], f32[4,3,2], f32[24], f32[2,3,4], f32[5,2,4], f32[1,3], f32[4]) -> ()
  }
}
"""


def test_canonicalize_collapses_index_map_chains() -> None:
    after = run_pipeline(INDEX_MAPS, "canonicalize")
    assert _body(after) == [
        "%0 = tensor.transpose %arg0 {perm = [2, 1, 0]} : (f32[2,3,4]) -> f32[4,3,2]",
        "%1 = tensor.reshape %arg0 {shape = [24]} : (f32[2,3,4]) -> f32[24]",
        "%2 = tensor.broadcast_to %arg1 {shape = [5, 2, 4]} : (f32[4]) -> f32[5,2,4]",
        "%3 = tensor.constant {value = dense<[1.0, 2.0, 3.0]>} : () -> f32[1,3]",
        # a splat that grows the data stays a broadcast (fusion keeps it free)
        "%4 = tensor.constant {value = dense<[2.0]>} : () -> f32[]",
        "%5 = tensor.broadcast_to %4 {shape = [4]} : (f32[]) -> f32[4]",
        (
            "func.return %arg0, %0, %1, %arg0, %2, %3, %5 : "
            "(f32[2,3,4], f32[4,3,2], f32[24], f32[2,3,4], f32[5,2,4], f32[1,3], f32[4]) -> ()"
        ),
    ]


FOLDABLE = """\
module {
  func @f(%arg0: f32[2]) -> (f32[2], f32[], i32[3], f32[2]) {
    %0 = tensor.constant {value = dense<[1.0, 2.0]>} : () -> f32[2]
    %1 = tensor.constant {value = dense<[0.5, -4.0]>} : () -> f32[2]
    %2 = arith.mul %0, %1 : (f32[2], f32[2]) -> f32[2]
    %3 = math.exp %2 : (f32[2]) -> f32[2]
    %4 = reduce.sum %3 {axes = [0]} : (f32[2]) -> f32[]
    %5 = tensor.constant {value = dense<[7, -7, 5]>} : () -> i32[3]
    %6 = tensor.constant {value = dense<[2, 2, 0]>} : () -> i32[3]
    %7 = arith.div %5, %6 : (i32[3], i32[3]) -> i32[3]
    %8 = arith.add %arg0, %3 : (f32[2], f32[2]) -> f32[2]
    func.return %8, %4, %7, %3 : (f32[2], f32[], i32[3], f32[2]) -> ()
  }
}
"""


def test_constant_fold_evaluates_chains_through_the_reference() -> None:
    after = run_pipeline(FOLDABLE, "constant-fold")
    exp = np.exp(np.array([0.5, -8.0], np.float32))
    ops = after.functions[0].body.ops
    assert [op.name for op in ops] == [
        "tensor.constant",
        "tensor.constant",
        "tensor.constant",
        "arith.add",
        "func.return",
    ]
    np.testing.assert_array_equal(ops[0].attrs["value"], exp)
    assert ops[1].attrs["value"].dtype == np.float32 and ops[1].attrs["value"].shape == ()
    assert ops[1].attrs["value"] == np.sum(exp).astype(np.float32)
    np.testing.assert_array_equal(ops[2].attrs["value"], np.array([3, -3, 0], np.int32))
    assert _body(after)[-1].startswith("func.return %3, %1, %2, %0 :")


SPLATS = """\
module {
  func @f(%arg0: f32[3,4]) -> (f32[3,4], f32[3,4]) {
    %0 = tensor.constant {value = dense<[2.0]>} : () -> f32[]
    %1 = tensor.broadcast_to %0 {shape = [3, 4]} : (f32[]) -> f32[3,4]
    %2 = tensor.constant {value = dense<[1.0, 2.0, 3.0, 4.0]>} : () -> f32[4]
    %3 = tensor.broadcast_to %2 {shape = [3, 4]} : (f32[4]) -> f32[3,4]
    %4 = arith.mul %1, %3 : (f32[3,4], f32[3,4]) -> f32[3,4]
    %5 = math.sqrt %1 : (f32[3,4]) -> f32[3,4]
    %6 = arith.add %arg0, %5 : (f32[3,4], f32[3,4]) -> f32[3,4]
    %7 = tensor.iota {dim = 1, dtype = f32, shape = [3, 4]} : () -> f32[3,4]
    %8 = arith.add %7, %4 : (f32[3,4], f32[3,4]) -> f32[3,4]
    func.return %6, %8 : (f32[3,4], f32[3,4]) -> ()
  }
}
"""


def test_constant_fold_keeps_splats_as_broadcasts_and_leaves_iota() -> None:
    after = run_pipeline(SPLATS, "constant-fold,dce")
    assert _body(after) == [
        "%0 = tensor.constant {value = dense<[2.0, 4.0, 6.0, 8.0]>} : () -> f32[4]",
        "%1 = tensor.broadcast_to %0 {shape = [3, 4]} : (f32[4]) -> f32[3,4]",
        "%2 = tensor.constant {value = dense<[1.4142135]>} : () -> f32[]",
        "%3 = tensor.broadcast_to %2 {shape = [3, 4]} : (f32[]) -> f32[3,4]",
        "%4 = arith.add %arg0, %3 : (f32[3,4], f32[3,4]) -> f32[3,4]",
        "%5 = tensor.iota {dim = 1, dtype = f32, shape = [3, 4]} : () -> f32[3,4]",
        "%6 = arith.add %5, %1 : (f32[3,4], f32[3,4]) -> f32[3,4]",
        "func.return %4, %6 : (f32[3,4], f32[3,4]) -> ()",
    ]


def test_constant_fold_respects_the_size_limit() -> None:
    text = FOLDABLE
    after = run_pipeline(text, "constant-fold{max-elems=1}")
    names = [op.name for op in after.functions[0].body.ops]
    assert "arith.mul" in names and "math.exp" in names


CSE = """\
module {
  func @f(%arg0: f32[4], %arg1: f32[4]) -> (f32[4], f32[4], f32[4], f32[4], f32[], f32[], f32[4], f32[4], f32[4]) {
    %0 = arith.add %arg0, %arg1 : (f32[4], f32[4]) -> f32[4]
    %1 = arith.add %arg1, %arg0 : (f32[4], f32[4]) -> f32[4]
    %2 = arith.sub %arg0, %arg1 : (f32[4], f32[4]) -> f32[4]
    %3 = arith.sub %arg1, %arg0 : (f32[4], f32[4]) -> f32[4]
    %4 = reduce.sum %0 {axes = [0]} : (f32[4]) -> f32[]
    %5 = reduce.sum %1 {axes = [0], keepdims = false} : (f32[4]) -> f32[]
    %6 = tensor.constant {value = dense<[0.0, 1.0, 2.0, 3.0]>} : () -> f32[4]
    %7 = tensor.constant {value = dense<[0.0, 1.0, 2.0, 3.0]>} : () -> f32[4]
    %8 = tensor.constant {value = dense<[-0.0, 1.0, 2.0, 3.0]>} : () -> f32[4]
    %9 = arith.mul %6, %0 : (f32[4], f32[4]) -> f32[4]
    %10 = arith.mul %7, %1 : (f32[4], f32[4]) -> f32[4]
    %11 = arith.mul %8, %1 : (f32[4], f32[4]) -> f32[4]
    func.return %0, %1, %2, %3, %4, %5, %9, %10, %11 : (f32[4], f32[4], f32[4], f32[4], f32[], f32[], f32[4], f32[4], f32[4]) -> ()
  }
}
"""


def test_cse_merges_equal_pure_ops() -> None:
    after = run_pipeline(CSE, "cse")
    body = _body(after)
    assert body[-1] == (
        "func.return %0, %0, %1, %2, %3, %3, %6, %6, %7 : "
        "(f32[4], f32[4], f32[4], f32[4], f32[], f32[], f32[4], f32[4], f32[4]) -> ()"
    )
    # keepdims = false spelt out equals the default: the two sums merge; the -0.0 constant
    # stays apart from the 0.0 one.
    assert after.op_count() == 8


REGIONS = """\
module {
  func @f(%arg0: f32[4]) -> (f32[4], f32[4]) {
    %0 = dispatch.region %arg0 {kind = "map"} : (f32[4]) -> f32[4] {
    ^(%arg1: f32[4]):
      %1 = math.exp %arg1 : (f32[4]) -> f32[4]
      %2 = math.exp %arg1 : (f32[4]) -> f32[4]
      %3 = arith.add %1, %2 : (f32[4], f32[4]) -> f32[4]
      dispatch.yield %3 : (f32[4]) -> ()
    }
    %4 = dispatch.region %arg0 {kind = "map"} : (f32[4]) -> f32[4] {
    ^(%arg2: f32[4]):
      %5 = math.exp %arg2 : (f32[4]) -> f32[4]
      %6 = math.log %arg2 : (f32[4]) -> f32[4]
      dispatch.yield %5 : (f32[4]) -> ()
    }
    func.return %0, %4 : (f32[4], f32[4]) -> ()
  }
}
"""


def test_cse_and_dce_stay_inside_each_region() -> None:
    x = np.abs(np.arange(4, dtype=np.float32)) + 1
    after = run_pipeline(REGIONS, "cse,dce", inputs=[x])
    regions = [op for op in after.functions[0].body.ops if op.name == "dispatch.region"]
    assert len(regions) == 2  # region ops are not pure: never merged nor erased
    assert [op.name for op in regions[0].regions[0].block.ops] == [
        "math.exp",
        "arith.add",
        "dispatch.yield",
    ]
    assert [op.name for op in regions[1].regions[0].block.ops] == ["math.exp", "dispatch.yield"]


DEAD = """\
module {
  func @f(%arg0: f32[4], %arg1: i32[2]) -> (f32[4]) {
    %0 = math.exp %arg0 : (f32[4]) -> f32[4]
    %1 = arith.mul %0, %0 : (f32[4], f32[4]) -> f32[4]
    %2 = reduce.sum %1 {axes = [0]} : (f32[4]) -> f32[]
    %3 = tensor.constant {value = dense<[1.0]>} : () -> f32[]
    %4 = arith.add %arg0, %arg0 : (f32[4], f32[4]) -> f32[4]
    func.return %4 : (f32[4]) -> ()
  }
}
"""


def test_dce_removes_dead_chains_and_keeps_parameters() -> None:
    module = parse_module(DEAD)
    before = module.op_count()
    after = run_pipeline(DEAD, "dce")
    assert before == 5 and after.op_count() == 1
    assert len(after.functions[0].params) == 2
    ctx = PassContext()
    records = PassManager("dce,dce").run(after, ctx)
    assert [r.changed for r in records] == [False, False]
