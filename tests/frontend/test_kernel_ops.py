"""accy.numpy on the kernel families' IR ops (gather, scatter_add, sort, argsort, random),
against numpy, on every available backend. Each test skips until its builder op exists."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.ir import FunctionBuilder
from accy.testing import assert_close


def _requires(op: str):
    return pytest.mark.skipif(
        not hasattr(FunctionBuilder, op),
        reason=f"builder op {op!r} not available yet (kernel families, issue 3)")


RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 8)).astype(np.float32)
IDX = RNG.integers(0, 16, 24).astype(np.int32)


@_requires("gather")
def test_integer_array_indexing(backend: str) -> None:
    f = accy.jit(lambda x, i: (x[i], x[:, 1:5], x[3], x[-1, ::2]), backend=backend)
    for got, want in zip(f(X, IDX), (X[IDX], X[:, 1:5], X[3], X[-1, ::2]), strict=True):
        assert_close(got, want)


@_requires("scatter_add")
def test_at_add(backend: str) -> None:
    got = accy.jit(lambda x, i, v: x.at[i].add(v), backend=backend)(
        X, IDX, np.ones((24, 8), np.float32))
    want = X.copy()
    np.add.at(want, IDX, 1.0)
    assert_close(got, want)


@_requires("sort")
def test_sort(backend: str) -> None:
    got = accy.jit(lambda x: (anp.sort(x), anp.sort(x, axis=0)), backend=backend)(X)
    assert_close(got[0], np.sort(X, axis=-1))
    assert_close(got[1], np.sort(X, axis=0))


@_requires("argsort")
def test_argsort(backend: str) -> None:
    keys = RNG.integers(0, 5, 64).astype(np.int32)  # duplicates: stability matters
    got = accy.jit(anp.argsort, backend=backend)(keys)
    np.testing.assert_array_equal(np.asarray(got), np.argsort(keys, kind="stable"))


@_requires("random_uniform")
def test_random_uniform_with_explicit_key(backend: str) -> None:
    key = anp.random.key(42)
    f = accy.jit(lambda x: x + anp.random.uniform(key, x.shape), backend=backend)
    a = f(np.zeros(1000, np.float32))
    b = f(np.zeros(1000, np.float32))
    np.testing.assert_array_equal(a, b)
    assert 0.0 <= a.min() and a.max() < 1.0 and abs(float(a.mean()) - 0.5) < 0.05
