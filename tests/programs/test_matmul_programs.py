"""Contractions through the compiler: worthwhile ``dot_general`` ops run as the matmul family
(``dispatch.region {kind = "contract"}``) with their elementwise epilogue fused; the result
equals numpy and the unfused programs (``fusion{contraction=library-no-epilogue}`` and
``fusion{contraction=loops}``, the generic per-output loops)."""

from __future__ import annotations

import accy.numpy as anp
import numpy as np
import pytest
from accy.passes import get_pipeline, register_pipeline

from tests.programs._contractions import compile_jit as _compile
from tests.programs._contractions import region_kinds as _kinds

RNG = np.random.default_rng(12)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)



def _mlp(x, w, b):
    return anp.maximum(x @ w + b, 0.0)


def _close(got, want, k):
    tol = 8 * k * np.finfo(np.float32).eps * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, atol=tol, rtol=0)


def test_mlp_layer_is_one_contract_region(backend):
    x, w, b = _f32(33, 70), _f32(70, 45), _f32(45)
    exe = _compile(_mlp, (x, w, b), backend)
    assert _kinds(exe) == ["contract"]
    (got,) = exe(x, w, b)
    _close(got, np.maximum(x @ w + b, 0), 70)


def test_batched_activations_times_2d_weights_is_one_region():
    """``x (4, 9, 70) @ W (70, 45) + b``: one contract region over x's 36 rows, with no
    copy of ``W`` per batch (broadcasting ``W`` over the batch had a map region write one)."""
    x, w, b = _f32(4, 9, 70), _f32(70, 45), _f32(45)
    exe = _compile(_mlp, (x, w, b), "cpu")
    assert _kinds(exe) == ["contract"]
    (got,) = exe(x, w, b)
    assert got.shape == (4, 9, 45)
    _close(got, np.maximum(x @ w + b, 0), 70)


def test_transposed_operands_and_residual(backend):
    x, w = _f32(40, 64), _f32(50, 64)

    def f(x, w):
        return x @ w.T * 0.5 + x[:, :50]
    exe = _compile(f, (x, w), backend)
    assert "contract" in _kinds(exe)
    (got,) = exe(x, w)
    _close(got, x @ w.T * 0.5 + x[:, :50], 64)


def test_einsum_batched_and_transposed(backend):
    a, b = _f32(4, 33, 40), _f32(4, 29, 40)

    def f(a, b):
        return anp.einsum("bik,bjk->bij", a, b)
    exe = _compile(f, (a, b), backend)
    assert "contract" in _kinds(exe)
    (got,) = exe(a, b)
    _close(got, np.einsum("bik,bjk->bij", a, b), 40)


def test_matvec_and_cast_epilogue(backend):
    a, x = _f32(600, 129), _f32(129)

    def f(a, x):
        return (a @ x).astype(np.float64) * 3.0
    exe = _compile(f, (a, x), backend)
    assert _kinds(exe) == ["contract"]
    (got,) = exe(a, x)
    assert got.dtype == np.float64
    _close(got, (a @ x).astype(np.float64) * 3.0, 3 * 129)


@pytest.mark.parametrize("dtype", [np.float64, np.int32], ids=["f64", "i32"])
def test_dtypes(backend, dtype):
    a = RNG.integers(-20, 20, (31, 65)).astype(dtype)
    b = RNG.integers(-20, 20, (65, 33)).astype(dtype)

    def f(a, b):
        return a @ b + a[:, :33]
    exe = _compile(f, (a, b), backend)
    assert _kinds(exe).count("contract") == 1
    (got,) = exe(a, b)
    np.testing.assert_array_equal(got, a @ b + a[:, :33])


def test_attention_block(backend):
    q, k, v = _f32(64, 32), _f32(64, 32), _f32(64, 32)

    def f(q, k, v):
        return anp.softmax(q @ k.T * (1 / np.sqrt(32)), axis=-1) @ v
    exe = _compile(f, (q, k, v), backend)
    assert _kinds(exe).count("contract") == 2
    (got,) = exe(q, k, v)
    s = q @ k.T * (1 / np.sqrt(32))
    p = np.exp(s - s.max(-1, keepdims=True))
    _close(got, (p / p.sum(-1, keepdims=True)) @ v, 64)


def test_small_and_degenerate_products_stay_fused(backend):
    a, b = _f32(4, 4), _f32(4, 4)
    exe = _compile(lambda a, b: a @ b, (a, b), backend)
    assert "contract" not in _kinds(exe)
    x, y = _f32(300, 1), _f32(1, 300)  # outer product: K = 1
    exe = _compile(lambda x, y: x @ y, (x, y), backend)
    assert "contract" not in _kinds(exe)
    np.testing.assert_allclose(exe(x, y)[0], x @ y, rtol=1e-6)


@pytest.fixture(params=["library-no-epilogue", "loops"])
def unfused(request):
    old = get_pipeline("dispatch")
    register_pipeline("dispatch", f"fusion{{contraction={request.param}}}", replace=True)
    yield request.param
    register_pipeline("dispatch", old, replace=True, provider="accy-core")


def test_fused_epilogue_equals_unfused_program(unfused):
    x, w, b = _f32(65, 130), _f32(130, 31), _f32(31)
    fused = _fused_result(x, w, b)
    exe = _compile(_mlp, (x, w, b), "cpu")
    kinds = _kinds(exe)
    assert ("contract" in kinds) == (unfused != "loops") and "map" in kinds
    (got,) = exe(x, w, b)
    _close(got, fused, 130)
    if unfused == "library-no-epilogue":  # same products, same order: bit-identical
        np.testing.assert_array_equal(got, fused)


def _fused_result(x, w, b):
    old = get_pipeline("dispatch")
    register_pipeline("dispatch", "fusion", replace=True)
    try:
        exe = _compile(_mlp, (x, w, b), "cpu")
        assert _kinds(exe) == ["contract"]
        return exe(x, w, b)[0]
    finally:
        register_pipeline("dispatch", old, replace=True, provider="accy-core")


@pytest.fixture
def tiny_caches(monkeypatch):
    """Host caches of 512 B / 4 KiB / 64 KiB: the blocked variant cuts k into blocks of 16
    and the output into 1-tile cache blocks (several accumulating launches)."""
    from accy_kernels.host_caches import host_caches

    monkeypatch.setenv("ACCY_HOST_CACHES", "512,4096,65536")
    host_caches.cache_clear()
    yield
    monkeypatch.delenv("ACCY_HOST_CACHES")
    host_caches.cache_clear()


def test_epilogues_after_k_blocks(tiny_caches):
    """The fused epilogue runs once, after the last k-block: bias + relu, residual, and a
    casting epilogue (which keeps one k-block) equal numpy."""
    x, w, b = _f32(33, 70), _f32(70, 45), _f32(45)
    (got,) = _compile(_mlp, (x, w, b), "cpu")(x, w, b)
    _close(got, np.maximum(x @ w + b, 0), 70)
    a = RNG.integers(-20, 20, (31, 65)).astype(np.int32)
    c = RNG.integers(-20, 20, (65, 33)).astype(np.int32)
    (got,) = _compile(lambda a, c: a @ c + a[:, :33], (a, c), "cpu")(a, c)
    np.testing.assert_array_equal(got, a @ c + a[:, :33])
    (got,) = _compile(lambda x, w: (x @ w).astype(np.float64) * 3.0, (x, w), "cpu")(x, w)
    assert got.dtype == np.float64
    _close(got, (x @ w).astype(np.float64) * 3.0, 3 * 70)


def test_split_k_epilogue():
    """A 1-tile output with a long k runs split-K on the CPU; bias + relu apply once, in the
    partials' sum."""
    x, w, b = _f32(5, 2500), _f32(2500, 3), _f32(3)
    (got,) = _compile(_mlp, (x, w, b), "cpu")(x, w, b)
    _close(got, np.maximum(x @ w + b, 0), 2500)
