"""The builder API exactly as users call it."""

from __future__ import annotations

import inspect
import re

import accy
import numpy as np
import pytest
from accy.errors import VerifyError
from accy.ir import FunctionBuilder

THIS_FILE = "test_builder.py"


def _ops(module: accy.Module) -> list[str]:
    return [op.name for op in module.walk()]


def _line_of(marker: str) -> int:
    """Line number in this file of the line ending with ``# <marker>``."""
    src = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(i for i, line in enumerate(src, start=1) if line.endswith(f"# {marker}"))


def test_add_mul_example() -> None:
    b = accy.Builder()
    t = b.tensor("f32", (4,))
    fb = b.begin_function("add_mul", params=[t, t, t], results=[t, t])
    s = fb.add(fb.param(0), fb.param(1))
    p = fb.mul(s, fb.param(2))
    fb.return_(s, p)
    fb.finish()
    m = b.finish()
    assert m.to_text() == (
        "module {\n"
        "  func @add_mul(%arg0: f32[4], %arg1: f32[4], %arg2: f32[4]) -> (f32[4], f32[4]) {\n"
        "    %0 = arith.add %arg0, %arg1 : (f32[4], f32[4]) -> f32[4]\n"
        "    %1 = arith.mul %0, %arg2 : (f32[4], f32[4]) -> f32[4]\n"
        "    func.return %0, %1 : (f32[4], f32[4]) -> ()\n"
        "  }\n"
        "}\n"
    )
    assert m.function("add_mul").result_types == [t, t]
    assert accy.parse_module(m.to_text()).fingerprint() == m.fingerprint()


def test_numpy_broadcasting_inserts_broadcast_to() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (3, 1)), b.tensor("f32", (4,))])
    r = fb.add(fb.param(0), fb.param(1))
    assert r.type == b.tensor("f32", (3, 4))
    fb.return_(r)
    fb.finish()
    m = b.finish()
    bcasts = [op for op in m.walk() if op.name == "tensor.broadcast_to"]
    assert [op.attrs["shape"] for op in bcasts] == [(3, 4), (3, 4)]
    assert [op.operands[0] for op in bcasts] == m.functions[0].params


def test_equal_shapes_insert_no_broadcast() -> None:
    b = accy.Builder()
    t = b.tensor("i32", (2, 2))
    fb = b.begin_function("f", params=[t, t])
    fb.return_(fb.sub(fb.param(0), fb.param(1)))
    fb.finish()
    assert _ops(b.finish()) == ["arith.sub", "func.return"]


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64", "u32"])
def test_python_scalar_becomes_constant_of_other_operand_dtype(dtype: str) -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor(dtype, (2, 3))])
    r = fb.mul(2, fb.param(0))
    fb.return_(r)
    fb.finish()
    m = b.finish()
    const = next(op for op in m.walk() if op.name == "tensor.constant")
    value = const.attrs["value"]
    assert value.dtype == accy.DType.parse(dtype).numpy and value.shape == () and value == 2
    assert _ops(m) == ["tensor.constant", "tensor.broadcast_to", "arith.mul", "func.return"]
    assert r.type == b.tensor(dtype, (2, 3))


def test_bool_scalar_and_float_scalar() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("bool", (2,)), b.tensor("f32", (2,))])
    a = fb.and_(fb.param(0), True)
    c = fb.lt(fb.param(1), 0.5)
    fb.return_(a, c)
    fb.finish()
    m = b.finish()
    consts = [op.attrs["value"] for op in m.walk() if op.name == "tensor.constant"]
    assert [v.dtype for v in consts] == [np.dtype(bool), np.dtype(np.float32)]


@pytest.mark.parametrize(("dtype", "scalar"), [("i32", 2.5), ("u32", -1), ("i32", 2**31), ("bool", 2)])
def test_scalar_that_does_not_fit_is_rejected(dtype: str, scalar: float) -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor(dtype, (2,))])
    with pytest.raises(VerifyError, match=rf"'arith.add' op: scalar .* is not a {dtype} value"):
        fb.add(fb.param(0), scalar)


def test_incompatible_shapes_name_op_and_user_line() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (4,)), b.tensor("f32", (3,))])
    with pytest.raises(VerifyError) as info:
        fb.add(fb.param(0), fb.param(1))  # bad-broadcast
    err = info.value
    assert err.op == "arith.add"
    assert "'arith.add' op: operand shapes [4] and [3] are not broadcast-compatible" in str(err)
    assert f"(at {THIS_FILE}:{_line_of('bad-broadcast')})" in str(err)
    assert err.position == f"{THIS_FILE}:{_line_of('bad-broadcast')}"


def test_dtype_mismatch_raises_with_user_line() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (4,)), b.tensor("i32", (4,))])
    with pytest.raises(VerifyError) as info:
        fb.max(fb.param(0), fb.param(1))  # bad-dtype
    assert info.value.op == "arith.max"
    assert "operand dtypes must match, got f32 and i32; cast one first" in str(info.value)
    assert f"{THIS_FILE}:{_line_of('bad-dtype')}" in str(info.value)


def test_op_level_errors_name_op_and_user_line() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (4, 2)), b.tensor("i32", (3,))])
    cases = [
        (lambda: fb.reshape(fb.param(0), (3, 3)), "tensor.reshape", "cannot reshape"),
        (lambda: fb.transpose(fb.param(0), (1, 1)), "tensor.transpose", "not a permutation"),
        (lambda: fb.exp(fb.param(1)), "math.exp", "operand dtype must be f32 or f64, got i32"),
        (lambda: fb.reduce_sum(fb.param(0), 2), "reduce.sum", "axis 2 is out of range for rank 2"),
        (lambda: fb.matmul(fb.param(0), fb.param(0)), "linalg.dot_general", "extents differ"),
        (lambda: fb.broadcast_to(fb.param(1), (2, 4)), "tensor.broadcast_to", "cannot broadcast"),
        (lambda: fb.softmax(fb.param(0), axis=5), "nn.softmax", "axis 5 is out of range"),
        (lambda: fb.select(fb.param(0), fb.param(0), fb.param(0)), "arith.select", "must be bool"),
    ]
    for call, op, fragment in cases:
        with pytest.raises(VerifyError) as info:
            call()
        assert info.value.op == op
        assert str(info.value).startswith(f"'{op}' op: ")
        assert fragment in str(info.value)
        assert re.search(rf"\(at {THIS_FILE}:\d+\)$", str(info.value))


def test_return_checks_declared_results() -> None:
    b = accy.Builder()
    t = b.tensor("f32", (4,))
    fb = b.begin_function("f", params=[t], results=[t, t])
    with pytest.raises(VerifyError, match=r"return types \['f32\[4\]'\] do not match declared"):
        fb.return_(fb.param(0))


def test_function_lifecycle_errors() -> None:
    b = accy.Builder()
    t = b.tensor("f32", ())
    fb = b.begin_function("f", params=[t])
    with pytest.raises(VerifyError, match="still open"):
        b.begin_function("g", params=[])
    with pytest.raises(VerifyError, match="still open"):
        b.finish()
    with pytest.raises(VerifyError, match="call return_"):
        fb.finish()
    with pytest.raises(VerifyError, match="param index 1 out of range"):
        fb.param(1)
    fb.return_(fb.param(0))
    with pytest.raises(VerifyError, match="finished"):
        fb.neg(fb.param(0))
    fb.finish()
    with pytest.raises(VerifyError, match="defined twice"):
        b.begin_function("f", params=[])


def test_multiple_functions_and_scalars() -> None:
    b = accy.Builder()
    s = b.tensor("f64", ())
    fb = b.begin_function("one", params=[s], results=[s, s])
    fb.return_(fb.sqrt(fb.param(0)), fb.param(0))
    fb.finish()
    fb = b.begin_function("two", params=[])
    fb.return_()
    fb.finish()
    m = b.finish()
    assert [f.name for f in m.functions] == ["one", "two"]
    assert m.function("two").result_types == []


ALL_METHODS = ["add", "sub", "mul", "div", "max", "min", "pow", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "sigmoid", "eq", "ne", "lt", "le", "gt", "ge", "select", "cast", "broadcast_to", "reshape", "transpose", "reduce_sum", "reduce_max", "reduce_min", "reduce_mean", "dot_general", "einsum", "softmax", "relu", "gelu", "iota", "constant", "matmul"]


@pytest.mark.parametrize("name", ALL_METHODS)
def test_every_op_method_exists(name: str) -> None:
    assert callable(getattr(FunctionBuilder, name))


def test_every_op_method_builds_a_valid_module() -> None:
    b = accy.Builder()
    m43 = b.tensor("f32", (4, 3))
    fb = b.begin_function("all", params=[m43, b.tensor("f32", (3, 2)), b.tensor("f32", (2, 4, 3))])
    x, w, batch = fb.param(0), fb.param(1), fb.param(2)
    out = [fb.add(x, x), fb.sub(x, 1.0), fb.mul(x, x), fb.div(x, 2), fb.max(x, 0.0),
           fb.min(x, x), fb.pow(x, 2.0)]
    out += [getattr(fb, n)(x) for n in
            ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "sigmoid",
             "relu", "gelu")]
    cond = fb.gt(x, 0.0)
    out += [fb.cast(c, "f32") for c in
            (fb.eq(x, x), fb.ne(x, x), fb.lt(x, x), fb.le(x, x), cond, fb.ge(x, x))]
    out.append(fb.select(cond, x, 0.0))
    out.append(fb.cast(fb.cast(x, "i64"), "f32"))
    out.append(fb.broadcast_to(fb.reduce_sum(x, 0), (4, 3)))
    out.append(fb.reshape(fb.transpose(x, (1, 0)), (4, 3)))
    out.append(fb.reduce_max(x, [1], keepdims=True))
    out.append(fb.reduce_min(x, -1))
    out.append(fb.reduce_mean(x))
    out.append(fb.dot_general(x, w, [1], [0]))
    out.append(fb.matmul(x, w))
    out.append(fb.matmul(batch, fb.transpose(batch, (0, 2, 1))))
    out.append(fb.einsum([x, w, fb.transpose(w, (1, 0))], m43.with_shape((4, 3)), "ij,jk,kl->il"))
    out.append(fb.softmax(x))
    out.append(fb.iota(b.tensor("i32", (4, 3)), dim=1))
    out.append(fb.constant(b.tensor("f64", (2,)), [1.5, -0.0]))
    fb.return_(*out)
    fb.finish()
    m = b.finish()
    names = set(_ops(m))
    assert {"arith.pow", "arith.select", "tensor.iota", "linalg.einsum", "nn.softmax"} <= names
    assert accy.parse_module(m.to_text()).fingerprint() == m.fingerprint()
    types = m.function("all").result_types
    assert types[-5:] == [b.tensor("f32", (2, 4, 4)), m43, m43, b.tensor("i32", (4, 3)),
                          b.tensor("f64", (2,))]


@pytest.mark.parametrize("spec", ["->", ""])
def test_einsum_of_one_scalar_operand(spec: str) -> None:
    # numpy: np.einsum("->", 3) == 3; an empty left side is one operand with no indices
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("i32", ())])
    out = fb.einsum([fb.param(0)], None, spec)
    assert out.type == b.tensor("i32", ())
    fb.return_(out)
    fb.finish()
    m = accy.parse_module(b.finish().to_text())
    from accy.passes.reference_eval import evaluate

    assert evaluate(m, "f", [np.int32(3)])[0] == 3


def test_einsum_out_type_is_checked() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (2, 3))])
    with pytest.raises(VerifyError, match=r"gives f32\[3\], declared f32\[2\]"):
        fb.einsum([fb.param(0)], b.tensor("f32", (2,)), "ij->j")


def test_matmul_batched_shape() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (5, 2, 3)), b.tensor("f32", (5, 3, 7))])
    r = fb.matmul(fb.param(0), fb.param(1))
    assert r.type == b.tensor("f32", (5, 2, 7))


def test_location_recorded_on_ops() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (2,))])
    r = fb.exp(fb.param(0))  # exp-here
    assert r.defining_op is not None
    assert r.defining_op.location == f"{THIS_FILE}:{_line_of('exp-here')}"


def test_constant_that_does_not_fit_type() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[])
    with pytest.raises(VerifyError, match=r"value of shape \[3\] does not fit f32\[2\]"):
        fb.constant(b.tensor("f32", (2,)), [1, 2, 3])


def test_tensor_type_validation() -> None:
    with pytest.raises(VerifyError, match="unknown dtype 'f16'; known: bool, f32"):
        accy.Builder.tensor("f16", (2,))
    with pytest.raises(VerifyError, match="extents must be >= 0"):
        accy.Builder.tensor("f32", (-1,))
    with pytest.raises(VerifyError, match="unknown dtype None"):
        accy.DType.parse(None)  # type: ignore[arg-type]
    assert str(accy.Builder.tensor(np.float64, [2, 0])) == "f64[2,0]"


@pytest.mark.parametrize("shape", [(2.5,), "4", 4, None])
def test_tensor_shape_that_is_not_ints_is_refused(shape) -> None:
    """A float extent was cut to an int (2.5 -> 2) and a string read digit by digit; an
    int raised Python's TypeError."""
    with pytest.raises(VerifyError, match="must be a tuple of ints"):
        accy.Builder.tensor("f32", shape)


@pytest.mark.parametrize("text", [b"module {}", None])
def test_parse_module_of_a_non_str_is_an_input_error(text) -> None:
    with pytest.raises(accy.errors.InputError, match="expects the program text as a str"):
        accy.parse_module(text)


def test_unknown_backend_that_is_not_a_string() -> None:
    from accy.plugins import open_backend  # (accy.plugins is loaded lazily: run alone, the
    # attribute does not exist yet)

    with pytest.raises(accy.errors.BackendUnavailable, match="unknown backend 3"):
        open_backend(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["add-mul", "", "a b", "f()"])
def test_function_name_must_round_trip(name: str) -> None:
    with pytest.raises(VerifyError, match="cannot be printed"):
        accy.Builder().begin_function(name, params=[])


def test_dtype_attribute_must_be_a_dtype_name() -> None:
    b = accy.Builder()
    fb = b.begin_function("f", params=[b.tensor("f32", (2,))])
    with pytest.raises(VerifyError, match="attribute 'dtype' must be of kind dtype"):
        fb.emit("arith.cast", [fb.param(0)], {"dtype": np.dtype(np.int32)})
    with pytest.raises(VerifyError, match="attribute 'axis' must be of kind int, got True"):
        fb.emit("nn.softmax", [fb.param(0)], {"axis": True})
    assert fb.emit("arith.cast", [fb.param(0)], {"dtype": "i32"})[0].type == b.tensor("i32", (2,))


def test_verifier_rejects_use_across_isolated_region() -> None:
    from accy.ir import Block, Function, Module, Operation, Region

    t = accy.TensorType("f32", (4,))
    fn = Function("f", [t, t], [t])
    block = Block([t])
    add = block.append(Operation("arith.add", [block.args[0], fn.params[1]], [t]))
    block.append(Operation("dispatch.yield", [add.result], []))
    region = fn.body.append(Operation("dispatch.region", [fn.params[0]], [t], {}, [Region(block)]))
    fn.body.append(Operation("func.return", [region.result], []))
    with pytest.raises(VerifyError) as info:
        Module([fn]).verify()
    assert "'arith.add' op at @f:#0.#0: operand #1 is not defined before use" in str(info.value)
    assert info.value.position == "@f:#0.#0"
