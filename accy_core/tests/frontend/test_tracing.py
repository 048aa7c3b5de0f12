"""Tracing semantics of accy.jit, checked with the numpy reference evaluator (no device)."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.frontend import Tracer

RNG = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_same_signature_does_not_retrace_and_new_shape_does() -> None:
    calls = []

    @accy.jit(backend="reference")
    def f(x, y):
        calls.append(1)
        return x * y + 1.0

    a, b = f32(3, 4), f32(3, 4)
    np.testing.assert_allclose(f(a, b), a * b + 1, rtol=1e-6)
    f(f32(3, 4), f32(3, 4))
    assert f.trace_count == 1 and len(calls) == 1
    f(f32(5, 4), f32(5, 4))
    assert f.trace_count == 2 and f.cache_size == 2
    f(a.astype(np.float64), b.astype(np.float64))  # a new dtype is a new signature
    assert f.trace_count == 3


def test_python_control_flow_runs_at_trace_time() -> None:
    @accy.jit(backend="reference")
    def f(x, n, mode="relu"):
        for _ in range(n):  # unrolled: n is a static Python int
            x = x * 2.0
        return anp.relu(x) if mode == "relu" else anp.tanh(x)

    x = f32(8)
    np.testing.assert_allclose(f(x, 3), np.maximum(x * 8, 0), rtol=1e-6)
    np.testing.assert_allclose(f(x, 1, mode="tanh"), np.tanh(x * 2), rtol=1e-6)
    assert f.trace_count == 2
    f(x, 3)
    assert f.trace_count == 2


def test_static_argnums_and_nested_structures() -> None:
    @accy.jit(backend="reference", static_argnums=1)
    def f(params, axes):
        w, b = params["w"], params["b"]
        return {"sum": (w + b).sum(axis=axes), "pair": [w.T, b]}

    w, b = f32(2, 3), f32(3)
    out = f({"w": w, "b": b}, (0,))
    np.testing.assert_allclose(out["sum"], (w + b).sum(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(out["pair"][0], w.T)
    np.testing.assert_array_equal(out["pair"][1], b)


def test_lower_returns_module_with_text() -> None:
    def model(x, w):
        return anp.softmax(x @ w, axis=-1)

    text = accy.jit(model, backend="reference").lower(f32(4, 3), f32(3, 5)).to_text()
    assert "func @model(%arg0: f32[4,3], %arg1: f32[3,5]) -> (f32[4,5])" in text
    assert "linalg.dot_general" in text and "nn.softmax" in text


def test_scalars_are_weak_and_constants_fold_in() -> None:
    table = np.arange(3, dtype=np.float32)

    @accy.jit(backend="reference")
    def f(x, i):
        return x * 2 + table, i + 1, (i / 2).dtype == np.float32

    x, i = f32(3), np.arange(3, dtype=np.int32)
    y, j, is_f32 = f(x, i)
    assert y.dtype == np.float32 and j.dtype == np.int32 and is_f32 is True
    np.testing.assert_allclose(y, x * 2 + table, rtol=1e-6)


def test_tracers_expose_shape_dtype_and_numpy_dispatch() -> None:
    seen = {}

    @accy.jit(backend="reference")
    def f(x):
        seen["t"] = (type(x), x.shape, x.dtype, x.ndim, x.size, len(x))
        return np.exp(x) + np.sum(x, axis=0), np.ones(3, np.float32) + x

    x = f32(4, 3)
    e, s = f(x)
    assert seen["t"] == (Tracer, (4, 3), np.float32, 2, 12, 4)
    np.testing.assert_allclose(e, np.exp(x) + x.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(s, 1 + x, rtol=1e-6)


def test_nested_jit_inlines() -> None:
    inner = accy.jit(lambda x: x + 1.0, backend="reference")

    @accy.jit(backend="reference")
    def outer(x):
        return inner(x) * 2.0

    x = f32(5)
    np.testing.assert_allclose(outer(x), (x + 1) * 2, rtol=1e-6)
    assert inner.trace_count == 0


def test_eager_calls_outside_jit_use_numpy() -> None:
    x = f32(2, 3)
    np.testing.assert_allclose(anp.softmax(x).sum(axis=-1), np.ones(2), rtol=1e-6)
    assert isinstance(anp.zeros((2,)), np.ndarray)


def test_compile_is_refused_for_the_reference_backend() -> None:
    with pytest.raises(accy.errors.UnsupportedError, match="backend='cpu'"):
        accy.jit(lambda x: x, backend="reference").compile(f32(2))
