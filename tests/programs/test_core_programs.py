"""The core acceptance programs, on every available backend, against numpy."""

from __future__ import annotations

import accy
import numpy as np
import pytest
from accy.testing import assert_close

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def one_function(name, params, body, dtype="f32"):
    b = accy.Builder()
    types = [b.tensor(dt, s) for dt, s in params]
    fb = b.begin_function(name, params=types)
    fb.return_(*body(fb, [fb.param(i) for i in range(len(types))]))
    fb.finish()
    return b.finish()


def test_add_f32(backend):
    m = one_function("add", [("f32", (4,))] * 2, lambda fb, p: [fb.add(p[0], p[1])])
    x, y = f32(4), f32(4)
    (out,) = accy.compile(m, backend=backend)(x, y)
    assert_close(out, x + y)


def test_add_mul_two_results_builder_api(backend):
    b = accy.Builder()
    t = b.tensor("f32", (4,))
    fb = b.begin_function("add_mul", params=[t, t, t], results=[t, t])
    s = fb.add(fb.param(0), fb.param(1))
    p = fb.mul(s, fb.param(2))
    fb.return_(s, p)
    fb.finish()
    module = b.finish()
    again = accy.parse_module(module.to_text())
    assert again.fingerprint() == module.fingerprint()
    exe = accy.compile(again, backend=backend)
    x, y, z = f32(4), f32(4), f32(4)
    s_out, p_out = exe(x, y, z)
    assert_close(s_out, x + y)
    assert_close(p_out, (x + y) * z)


def test_chain_fuses_into_one_kernel(backend):
    m = one_function("chain", [("f32", (4,))] * 2, lambda fb, p: [
        fb.max(fb.sub(fb.mul(fb.add(p[0], p[1]), p[1]), p[0]), p[1])])
    exe = accy.compile(m, backend=backend)
    assert exe.kernel_count == 1
    x, y = f32(4), f32(4)
    assert_close(exe(x, y)[0], np.maximum((x + y) * y - x, y))


def test_dot_general_2x3_3x2(backend):
    m = one_function("dot", [("f32", (2, 3)), ("f32", (3, 2))],
                     lambda fb, p: [fb.dot_general(p[0], p[1], [1], [0])])
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    bm = np.arange(7, 13, dtype=np.float32).reshape(3, 2)
    (out,) = accy.compile(m, backend=backend)(a, bm)
    np.testing.assert_array_equal(out, np.array([[58, 64], [139, 154]], dtype=np.float32))


def test_gt_returns_bool(backend):
    m = one_function("gt", [("f32", (8,))] * 2, lambda fb, p: [fb.gt(p[0], p[1])])
    x, y = f32(8), f32(8)
    (out,) = accy.compile(m, backend=backend)(x, y)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, x > y)


@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_reduce_sum_to_scalar(backend, dtype):
    m = one_function("rsum", [(dtype, (256,))], lambda fb, p: [fb.reduce_sum(p[0], axes=[0])])
    x = (RNG.integers(-100, 100, 256).astype(np.int32) if dtype == "i32" else f32(256))
    (out,) = accy.compile(m, backend=backend)(x)
    assert out.shape == ()
    assert_close(out, x.sum(dtype=x.dtype), scale=10)


@pytest.mark.parametrize("kind", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_2d_reductions(backend, kind, axis, keepdims):
    m = one_function("r2", [("f32", (5, 7))], lambda fb, p: [
        getattr(fb, f"reduce_{kind}")(p[0], axes=[axis], keepdims=keepdims)])
    x = f32(5, 7)
    (out,) = accy.compile(m, backend=backend)(x)
    assert_close(out, getattr(np, kind)(x, axis=axis, keepdims=keepdims))


def test_large_reduction_uses_tree(backend):
    """Few outputs of many elements: a tree per output, except on the CPU (lanes kernels,
    one work-item per output: tests/programs/test_reduce_lanes.py)."""
    m = one_function("big", [("f32", (3, 5000))], lambda fb, p: [fb.reduce_sum(p[0], axes=[1])])
    x = f32(3, 5000)
    exe = accy.compile(m, backend=backend)
    if backend == "cpu":
        assert all(k.workgroup_size == 1 for k in exe.kernels.values())
    else:
        assert any(k.shared for k in exe.kernels.values())
    assert_close(exe(x)[0], x.sum(axis=1), scale=10)


def test_einsum_ab_cd_ac(backend):
    m = one_function("e1", [("f32", (3, 4)), ("f32", (5, 6))],
                     lambda fb, p: [fb.einsum([p[0], p[1]], None, "ab,cd->ac")])
    a, c = f32(3, 4), f32(5, 6)
    assert_close(accy.compile(m, backend=backend)(a, c)[0], np.einsum("ab,cd->ac", a, c))


def test_einsum_three_operands(backend):
    m = one_function("e3", [("f32", (2, 16, 16))] * 3,
                     lambda fb, p: [fb.einsum(p, None, "bqd,bkd,bkv->bqv")])
    a, bb, c = f32(2, 16, 16), f32(2, 16, 16), f32(2, 16, 16)
    out = accy.compile(m, backend=backend)(a, bb, c)[0]
    assert_close(out, np.einsum("bqd,bkd,bkv->bqv", a, bb, c), scale=10)


def test_add_constant(backend):
    m = one_function("addc", [("f32", (4,))], lambda fb, p: [
        fb.add(p[0], fb.constant(accy.TensorType("f32", (4,)), [1, 2, 3, 4]))])
    x = f32(4)
    assert_close(accy.compile(m, backend=backend)(x)[0], x + np.array([1, 2, 3, 4], np.float32))


def test_every_elementwise_op(backend):
    x = np.abs(f32(33)) + 0.5
    y = np.abs(f32(33)) + 0.5
    ops = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "max": np.maximum, "min": np.minimum, "pow": np.power,
    }
    for name, ref in ops.items():
        m = one_function(name, [("f32", (33,))] * 2, lambda fb, p, n=name: [getattr(fb, n)(p[0], p[1])])
        assert_close(accy.compile(m, backend=backend)(x, y)[0], ref(x, y).astype(np.float32), what=name)
    unary = {
        "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
        "rsqrt": lambda v: 1 / np.sqrt(v), "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
        "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    }
    for name, ref in unary.items():
        m = one_function(name, [("f32", (33,))], lambda fb, p, n=name: [getattr(fb, n)(p[0])])
        assert_close(accy.compile(m, backend=backend)(x)[0], ref(x).astype(np.float32), what=name)


def test_select_cast_iota_transpose_reshape_broadcast(backend):
    def body(fb, p):
        x = p[0]
        t = fb.transpose(x, [1, 0])
        r = fb.reshape(t, [6, 2])
        i = fb.cast(fb.iota(accy.TensorType("i32", (6, 2)), 0), "f32")
        s = fb.select(fb.gt(r, 0.0), r, i)
        return [fb.add(s, fb.broadcast_to(fb.constant(accy.TensorType("f32", (2,)), [10, 20]), (6, 2)))]

    m = one_function("mix", [("f32", (3, 4))], body)
    x = f32(3, 4)
    r = x.T.reshape(6, 2)
    i = np.broadcast_to(np.arange(6, dtype=np.float32)[:, None], (6, 2))
    expect = np.where(r > 0, r, i) + np.array([10, 20], np.float32)
    assert_close(accy.compile(m, backend=backend)(x)[0], expect)


@pytest.mark.parametrize("dtype", ["f64", "i32", "i64"])
def test_other_dtypes(backend, dtype):
    m = one_function("dt", [(dtype, (17,))] * 2, lambda fb, p: [fb.add(fb.mul(p[0], p[1]), p[0])])
    npd = accy.DType.parse(dtype).numpy
    x = (RNG.standard_normal(17) * 10).astype(npd)
    y = (RNG.standard_normal(17) * 10).astype(npd)
    assert_close(accy.compile(m, backend=backend)(x, y)[0], x * y + x)


def test_integer_division_semantics(backend):
    m = one_function("idiv", [("i32", (6,))] * 2, lambda fb, p: [fb.div(p[0], p[1])])
    a = np.array([7, -7, 7, -7, 5, -2**31], np.int32)
    b = np.array([2, 2, -2, 0, 0, -1], np.int32)
    (out,) = accy.compile(m, backend=backend)(a, b)
    np.testing.assert_array_equal(out, np.array([3, -3, -3, 0, 0, -2**31], np.int32))


def test_dead_temporary_removed():
    from accy.passes import PassContext, run_stages

    def body(fb, p):
        fb.exp(p[0])  # dead
        return [fb.add(p[0], p[0])]

    m = one_function("dead", [("f32", (4,))], body)
    before = m.op_count()
    products = run_stages(m, PassContext(), until="contract")
    assert products[-1].module.op_count() < before


def test_einsum_with_zero_size_temporary(backend):
    # the pairwise plan makes a zero-size temporary; its buffer must still hold whole elements
    m = one_function("ez", [("f32", (0, 3)), ("f32", (4, 0))],
                     lambda fb, p: [fb.einsum(p, None, "ae,da->")])
    a, d = np.zeros((0, 3), np.float32), np.zeros((4, 0), np.float32)
    (out,) = accy.compile(m, backend=backend)(a, d)
    assert out.shape == () and out == 0


def test_same_array_for_several_parameters(backend):
    m = one_function("same", [("f32", (8,))] * 3, lambda fb, p: [
        fb.mul(fb.add(p[0], p[1]), p[2])])
    x = f32(8)
    assert_close(accy.compile(m, backend=backend)(x, x, x)[0], (x + x) * x)


def test_overlapping_views_as_inputs(backend):
    m = one_function("views", [("f32", (7,))] * 2, lambda fb, p: [fb.sub(p[1], p[0])])
    x = f32(8)
    assert_close(accy.compile(m, backend=backend)(x[:-1], x[1:])[0], x[1:] - x[:-1])


def test_pow_edge_cases_match_numpy(backend):
    vals = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf,
                     np.nan, 1e-3, 7.5], np.float32)
    x, y = (a.ravel().copy() for a in np.meshgrid(vals, vals))
    m = one_function("pw", [("f32", x.shape)] * 2, lambda fb, p: [fb.pow(p[0], p[1])])
    got = accy.compile(m, backend=backend)(x, y)[0]
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    assert_close(got, want)
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))


def test_f64_sqrt_and_rsqrt_run_everywhere(backend):
    m = one_function("s64", [("f64", (9,))], lambda fb, p: [fb.add(fb.sqrt(p[0]), fb.rsqrt(p[0]))])
    x = np.abs(RNG.standard_normal(9)) + 0.1
    assert_close(accy.compile(m, backend=backend)(x)[0], np.sqrt(x) + 1 / np.sqrt(x))
