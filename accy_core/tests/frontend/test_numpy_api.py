"""accy.numpy functions against numpy, through the reference evaluator (no device)."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.testing.reference import assert_close

RNG = np.random.default_rng(1)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
P = (np.abs(X) + 0.5).astype(np.float32)
I32 = RNG.integers(-5, 5, (3, 4)).astype(np.int32)

CASES = {
    "add": (lambda m, x, y: m.add(x, y), X, Y),
    "operators": (lambda m, x, y: (x - y) * 2 / (y * y + 1) - -x, X, Y),
    "power": (lambda m, x, y: x ** 2 + m.power(x, 3.0), P, Y),
    "maximum-minimum": (lambda m, x, y: m.maximum(x, y) - m.minimum(x, 0.5), X, Y),
    "compare-where": (lambda m, x, y: m.where((x > y) & (x < 1), x, y), X, Y),
    "logical": (lambda m, x, y: m.logical_or(x > 0, m.logical_not(y > 0)), X, Y),
    "unary": (lambda m, x, y: m.exp(x) + m.tanh(y) + m.sin(x) * m.cos(y) + m.abs(x), X, Y),
    "log-sqrt": (lambda m, x, y: m.log(x) + m.sqrt(x), P, Y),
    "clip-square": (lambda m, x, y: m.clip(m.square(x), 0.1, 2.0), X, Y),
    "sum-axis": (lambda m, x, y: m.sum(x, axis=1), X, Y),
    "sum-keepdims": (lambda m, x, y: x.sum(axis=(0, 1), keepdims=True), X, Y),
    "mean-max-min": (lambda m, x, y: m.mean(x, 0) + m.max(y, axis=0) - m.min(x, 0), X, Y),
    "var-std": (lambda m, x, y: m.var(x, axis=1) + m.std(y), X, Y),
    "matmul": (lambda m, x, y: x @ y.T, X, Y),
    "matmul-vector": (lambda m, x, v: (m.matmul(x, v)[:, None]
                                          * m.matmul(m.ones(3, dtype=np.float32), x)), X, Y[0].copy()),
    "matmul-batched": (lambda m, x, y: m.matmul(x.reshape(3, 2, 2), y.reshape(3, 2, 2)), X, Y),
    "dot": (lambda m, x, y: m.dot(x.T, y), X, Y),
    "einsum": (lambda m, x, y: m.einsum("ij,kj->ik", x, y), X, Y),
    "outer": (lambda m, x, y: m.outer(x, y), X[:1], Y[:2]),
    "reshape": (lambda m, x, y: m.reshape(x, (2, -1)) + y.reshape(2, 6), X, Y),
    "transpose": (lambda m, x, y: m.transpose(x) + y.T, X, Y),
    "expand-squeeze": (lambda m, x, y: m.squeeze(m.expand_dims(x, 0)) + x[:, None, ...][:, 0:1], X, Y),
    "broadcast": (lambda m, x, y: m.broadcast_to(x, (5, 3, 4)) + x[None, :, :], X, Y),
    "creation": (lambda m, x, y: x + m.ones((3, 4), dtype=np.float32) + m.arange(4.0), X, Y),
    "astype": (lambda m, x, y: (x > 0).astype(np.int32) + m.astype(y, np.int32), X, Y),
    "int-ops": (lambda m, x, y: x * 3 - y + (x > y) + m.abs(x) + m.maximum(x, 2), I32, I32[::-1].copy()),
    "sign-nan-zero": (lambda m, x, y: m.sign(x) + m.sign(y).astype(np.float32),
                      np.array([np.nan, -0.0, 0.0, -2.0, 3.0], np.float32),
                      np.array([-4, 0, 4, -1, 1], np.int32)),
    "softmax": (lambda m, x, y: (m.softmax(x, axis=0) if m is anp else
                                 np.exp(x) / np.exp(x).sum(axis=0)), X, Y),
    "relu-gelu-sigmoid": (lambda m, x, y: (m.relu(x) + m.sigmoid(y)) if m is anp else
                          np.maximum(x, 0) + 1 / (1 + np.exp(-y)), X, Y),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(name: str) -> None:
    fn, x, y = CASES[name]
    got = accy.jit(lambda a, b: fn(anp, a, b), backend="reference")(x, y)
    want = fn(np, x, y)
    assert np.shape(got) == np.shape(want), name
    assert_close(np.asarray(got), np.asarray(want).astype(np.asarray(got).dtype))
