"""Each op's ``reference`` (the oracle every backend is tested against) versus plain numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from accy.ir import DType, get_op_def, op_names

RNG = np.random.default_rng(1234)


def ref(op: str, *xs: np.ndarray, **attrs: object) -> np.ndarray:
    (out,) = get_op_def(op).reference([np.asarray(x) for x in xs], attrs)
    return out


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_every_computing_op_has_a_reference() -> None:
    no_reference = {"func.return", "dispatch.region", "dispatch.yield",
                    "loop.for", "loop.while"}  # the evaluator runs their body functions
    missing = [n for n in op_names() if get_op_def(n).reference is None and n not in no_reference]
    assert not missing


@pytest.mark.parametrize(
    ("op", "fn"),
    [("arith.add", np.add), ("arith.sub", np.subtract), ("arith.mul", np.multiply),
     ("arith.max", np.maximum), ("arith.min", np.minimum)],
)
@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64", "u32"])
def test_binary_arithmetic(op: str, fn: np.ufunc, dtype: str) -> None:
    npd = DType.parse(dtype).numpy
    a = RNG.integers(0, 50, (3, 4)).astype(npd)
    b = RNG.integers(0, 50, (3, 4)).astype(npd)
    out = ref(op, a, b)
    assert out.dtype == npd
    np.testing.assert_array_equal(out, fn(a, b))


def test_int_div_truncates_toward_zero_and_zero_divisor_gives_zero() -> None:
    a = np.array([7, -7, 7, -7, 5, 0, -1, 9], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 0, 0, 3, -10], dtype=np.int32)
    out = ref("arith.div", a, b)
    assert out.dtype == np.int32
    expected = [math.trunc(x / y) if y else 0 for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert out.tolist() == expected == [3, -3, -3, 3, 0, 0, 0, 0]


@pytest.mark.parametrize("dtype", [np.int64, np.uint32])
def test_int_div_other_dtypes(dtype: type) -> None:
    a = np.array([9, 10, 11, 0], dtype=dtype)
    b = np.array([2, 0, 11, 7], dtype=dtype)
    out = ref("arith.div", a, b)
    assert out.dtype == dtype
    assert out.tolist() == [4, 0, 1, 0]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_int_div_with_int_min_truncates_and_wraps(dtype: type) -> None:
    lo = int(np.iinfo(dtype).min)
    a = np.array([lo, lo, 1, -1, lo, lo, 7], dtype=dtype)
    b = np.array([2, -2, lo, lo, -1, lo, lo], dtype=dtype)
    out = ref("arith.div", a, b)
    # np.abs(INT_MIN) is INT_MIN: the reference must not take absolute values
    assert out.tolist() == [lo // 2, -(lo // 2), 0, 0, lo, 1, 0]


def test_evaluate_int_min_div_is_truncating_division() -> None:
    from accy.ir import parse_module
    from accy.passes.reference_eval import evaluate

    m = parse_module(
        "module { func @f(%arg0: i32[2]) -> (i32[2]) {\n"
        "  %0 = tensor.constant {value = dense<[-2147483648, 1]>} : () -> i32[2]\n"
        "  %1 = tensor.constant {value = dense<[2, -2147483648]>} : () -> i32[2]\n"
        "  %2 = arith.div %0, %1 : (i32[2], i32[2]) -> i32[2]\n"
        "  %3 = arith.add %2, %arg0 : (i32[2], i32[2]) -> i32[2]\n"
        "  func.return %3 : (i32[2]) -> () } }"
    )
    (out,) = evaluate(m, "f", [np.zeros(2, np.int32)])
    assert out.tolist() == [-1073741824, 0]


def test_float_div_by_zero_is_ieee() -> None:
    out = ref("arith.div", np.array([1, -1, 0], np.float32), np.zeros(3, np.float32))
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


@pytest.mark.parametrize("op", ["arith.max", "arith.min"])
def test_max_min_propagate_nan(op: str) -> None:
    a = np.array([np.nan, 1.0, np.nan, -np.inf], np.float32)
    b = np.array([1.0, np.nan, np.nan, 2.0], np.float32)
    out = ref(op, a, b)
    assert np.isnan(out[:3]).all()
    assert out[3] == (2.0 if op == "arith.max" else -np.inf)


def test_pow_and_bitwise() -> None:
    a, b = np.abs(_f32(5)) + 0.1, _f32(5)
    np.testing.assert_allclose(ref("arith.pow", a, b), np.power(a, b), rtol=1e-6)
    x = np.array([0b1100, 7], np.uint32)
    y = np.array([0b1010, 1], np.uint32)
    assert ref("arith.and", x, y).tolist() == [0b1000, 1]
    assert ref("arith.or", x, y).tolist() == [0b1110, 7]
    assert ref("arith.xor", x, y).tolist() == [0b0110, 6]
    assert ref("arith.not", np.array([True, False])).tolist() == [False, True]
    assert ref("arith.not", np.array([0, -1], np.int32)).tolist() == [-1, 0]


@pytest.mark.parametrize(
    ("op", "fn"),
    [("arith.eq", np.equal), ("arith.ne", np.not_equal), ("arith.lt", np.less),
     ("arith.le", np.less_equal), ("arith.gt", np.greater), ("arith.ge", np.greater_equal)],
)
def test_compare(op: str, fn: np.ufunc) -> None:
    a = np.array([1.0, 2.0, np.nan, 3.0], np.float32)
    b = np.array([1.0, 3.0, np.nan, 2.0], np.float32)
    out = ref(op, a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, fn(a, b))


def test_unary_select_cast() -> None:
    x = np.array([-2, 3, 0], np.int64)
    assert ref("arith.neg", x).tolist() == [2, -3, 0]
    assert ref("arith.abs", x).tolist() == [2, 3, 0]
    c = np.array([True, False, True])
    assert ref("arith.select", c, x, -x).tolist() == [-2, -3, 0]
    f = np.array([-1.7, 1.7, 2.5, -0.0], np.float32)
    assert ref("arith.cast", f, dtype=DType.I32).tolist() == [-1, 1, 2, 0]
    assert ref("arith.cast", f, dtype=DType.BOOL).tolist() == [True, True, True, False]
    assert ref("arith.cast", c, dtype=DType.F64).dtype == np.float64


@pytest.mark.parametrize(
    ("op", "fn"),
    [("math.exp", np.exp), ("math.log", np.log), ("math.sqrt", np.sqrt),
     ("math.rsqrt", lambda x: 1 / np.sqrt(x)), ("math.tanh", np.tanh), ("math.sin", np.sin),
     ("math.cos", np.cos), ("math.sigmoid", lambda x: 1 / (1 + np.exp(-x)))],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math(op: str, fn, dtype: type) -> None:
    x = (np.abs(RNG.standard_normal(16)) + 0.05).astype(dtype)
    out = ref(op, x)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, fn(x.astype(np.float64)), rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_relu() -> None:
    x = np.array([-1.0, 0.0, 2.5, np.nan], np.float32)
    out = ref("nn.relu", x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out[:3], [0.0, 0.0, 2.5])
    assert np.isnan(out[3])


def test_gelu_is_the_tanh_form() -> None:
    x = np.linspace(-6, 6, 101)
    c = math.sqrt(2 / math.pi)
    expected = 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(ref("nn.gelu", x), expected, rtol=1e-14, atol=1e-15)
    out32 = ref("nn.gelu", x.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, expected, rtol=1e-5, atol=1e-6)
    # not the erf form: they differ by ~1e-4 at x = 2
    erf_form = 0.5 * 2.0 * (1 + math.erf(2.0 / math.sqrt(2)))
    assert abs(float(ref("nn.gelu", np.array(2.0))) - erf_form) > 5e-5


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_softmax(axis: int) -> None:
    x = _f32(5, 7) * 10
    out = ref("nn.softmax", x, axis=axis)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=axis, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-5)
    assert out.dtype == np.float32


def test_softmax_defaults_and_edge_cases() -> None:
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], np.float32)
    out = ref("nn.softmax", x)  # axis omitted: the declared default -1
    np.testing.assert_allclose(out, [[0.5, 0.5], [0.0, 1.0]])
    assert ref("nn.softmax", np.zeros((2, 0), np.float32), axis=1).shape == (2, 0)


REDUCTIONS = [("reduce.sum", np.sum), ("reduce.max", np.max), ("reduce.min", np.min),
              ("reduce.mean", np.mean)]


@pytest.mark.parametrize(("op", "fn"), REDUCTIONS)
@pytest.mark.parametrize("axes", [(0,), (-1,), (0, 2), (-1, -3), (), (1, 0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(op: str, fn, axes: tuple[int, ...], keepdims: bool) -> None:
    x = _f32(2, 3, 4)
    out = ref(op, x, axes=axes, keepdims=keepdims)
    expected = fn(x.astype(np.float64), axis=axes, keepdims=keepdims)
    assert out.shape == np.shape(expected)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_reductions_default_keepdims_and_ints() -> None:
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 12
    out = ref("reduce.sum", x, axes=(1,))
    assert out.shape == (2, 4) and out.dtype == np.int32
    np.testing.assert_array_equal(out, x.sum(axis=1))
    assert ref("reduce.max", x, axes=(-1,), keepdims=True).tolist() == x.max(-1, keepdims=True).tolist()
    u = np.array([4294967295, 1], np.uint32)
    assert ref("reduce.sum", u, axes=(0,)).tolist() == 0  # wraps like the u32 add
    assert ref("reduce.sum", np.zeros((0, 3), np.float32), axes=(0,)).tolist() == [0, 0, 0]
    assert np.isnan(ref("reduce.mean", np.zeros((0, 2), np.float64), axes=(0,))).all()


def test_dot_general_plain_and_default_batch() -> None:
    a, b = _f32(2, 3), _f32(3, 4)
    out = ref("linalg.dot_general", a, b, lhs_contracting=(1,), rhs_contracting=(0,))
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_dot_general_batched_matches_matmul() -> None:
    a, b = _f32(5, 2, 3), _f32(5, 3, 4)
    out = ref("linalg.dot_general", a, b, lhs_contracting=(2,), rhs_contracting=(1,),
              lhs_batch=(0,), rhs_batch=(0,))
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5, atol=1e-6)


def test_dot_general_batch_not_leading_and_free_dim_order() -> None:
    # lhs [k, b, m], rhs [n, k, b]: result is [b, m, n] (batch, lhs free, rhs free)
    a, b = _f32(3, 5, 2), _f32(4, 3, 5)
    out = ref("linalg.dot_general", a, b, lhs_contracting=(0,), rhs_contracting=(1,),
              lhs_batch=(1,), rhs_batch=(2,))
    np.testing.assert_allclose(out, np.einsum("kbm,nkb->bmn", a, b), rtol=1e-5, atol=1e-6)
    assert out.shape == (5, 2, 4)


def test_dot_general_multi_contracting_and_outer() -> None:
    a, b = _f32(2, 3, 4), _f32(4, 3)
    out = ref("linalg.dot_general", a, b, lhs_contracting=(1, 2), rhs_contracting=(1, 0))
    np.testing.assert_allclose(out, np.einsum("ijk,kj->i", a, b), rtol=1e-5, atol=1e-6)
    v = np.arange(3, dtype=np.int64)
    outer = ref("linalg.dot_general", v, v, lhs_contracting=(), rhs_contracting=())
    np.testing.assert_array_equal(outer, np.outer(v, v))
    assert outer.dtype == np.int64


def test_dot_general_matches_einsum_op() -> None:
    a, b = _f32(4, 2, 3), _f32(4, 3, 6)
    dot = ref("linalg.dot_general", a, b, lhs_contracting=(2,), rhs_contracting=(1,),
              lhs_batch=(0,), rhs_batch=(0,))
    ein = ref("linalg.einsum", a, b, spec="bij,bjk->bik")
    np.testing.assert_allclose(dot, ein, rtol=1e-6)


def test_einsum_three_operands_and_implicit_output() -> None:
    q, k, v = _f32(2, 4, 3), _f32(2, 5, 3), _f32(2, 5, 6)
    out = ref("linalg.einsum", q, k, v, spec="bqd,bkd,bkv->bqv")
    np.testing.assert_allclose(out, np.matmul(np.matmul(q, k.transpose(0, 2, 1)), v),
                               rtol=1e-4, atol=1e-5)
    a, b = _f32(2, 3), _f32(3, 4)
    np.testing.assert_allclose(ref("linalg.einsum", a, b, spec="ij,jk"), a @ b, rtol=1e-5)
    assert ref("linalg.einsum", a, spec="ij->").shape == ()


def test_tensor_ops() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ref("tensor.reshape", x, shape=(3, 2)), x.reshape(3, 2))
    np.testing.assert_array_equal(ref("tensor.transpose", x, perm=(1, 0)), x.T)
    assert ref("tensor.transpose", x, perm=(1, 0)).flags.c_contiguous
    bc = ref("tensor.broadcast_to", np.array([1, 2], np.int32), shape=(3, 2))
    assert bc.tolist() == [[1, 2]] * 3 and bc.flags.writeable
    iota = ref("tensor.iota", shape=(2, 3), dim=1, dtype=DType.U32)
    assert iota.tolist() == [[0, 1, 2], [0, 1, 2]] and iota.dtype == np.uint32
    assert ref("tensor.iota", shape=(2, 3), dim=-2, dtype=DType.F32).tolist() == [[0] * 3, [1] * 3]
    value = np.array([1.5, -0.0])
    const = ref("tensor.constant", value=value)
    assert const is not value and const.tolist() == [1.5, -0.0]
