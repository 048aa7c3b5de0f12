"""Contractions over index maps the matmul family cannot read as strides (shifted windows of
``np.pad``, offset slices): fusion stages such an operand into a buffer of its own so the
product still runs as the family (``dispatch.region {kind = "contract"}``) instead of a
per-output loop that re-reads the windows (:func:`accy.passes.fusion._stage_dot_operands`)."""

from __future__ import annotations

import accy.numpy as anp
import numpy as np
import pytest

from tests.programs._contractions import compile_jit as _compile
from tests.programs._contractions import region_kinds as _kinds

RNG = np.random.default_rng(5)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)



def _conv_same(np_, x, w):
    """'same' convolution (odd taps) written as users write it: pad, one einsum per tap."""
    c, h, wd = x.shape
    ph, pw = w.shape[2] // 2, w.shape[3] // 2
    xp = np_.pad(x, ((0, 0), (ph, ph), (pw, pw)))
    out = np_.zeros((w.shape[0], h, wd), dtype=x.dtype)
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            out += np_.einsum("kc,chw->khw", w[:, :, i, j], xp[:, i:i + h, j:j + wd])
    return out


@pytest.mark.parametrize("backend", ["cpu", "vulkan"], indirect=True)
def test_conv_by_shifted_windows_runs_as_matmul_family(backend):
    # each tap: m=16, n=12*13, k=16 (enough work for the family); the second conv's windows
    # are of pad(relu(...)), computed once rather than in each window's copy
    x, w1, b, w2 = _f32(16, 12, 13), _f32(16, 16, 3, 3), _f32(16), _f32(16, 16, 1, 3)

    def block(np_, x, w1, b, w2):
        h = np_.maximum(_conv_same(np_, x, w1) + b[:, None, None], 0)
        return np_.maximum(_conv_same(np_, h, w2) + x[:1], 0)

    exe = _compile(lambda *a: block(anp, *a), (x, w1, b, w2), backend)
    kinds = _kinds(exe)
    assert kinds.count("contract") == 12 and "reduce" not in kinds
    # 12 tap slices of the weights + 12 windows; relu(conv1 + b) is the epilogue of conv1's
    # last product, written once (not recomputed in each window copy of conv2)
    assert kinds.count("map") == 24
    (got,) = exe(x, w1, b, w2)
    want = block(np, x, w1, b, w2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_offset_slice_operand_is_staged(backend):
    x, w = _f32(40, 70), _f32(64, 30)

    def f(x, w):
        return x[:, 3:67] @ w[:, 2:] + 1.0

    exe = _compile(f, (x, w), backend)
    assert _kinds(exe).count("contract") == 1
    (got,) = exe(x, w)
    np.testing.assert_allclose(got, x[:, 3:67] @ w[:, 2:] + 1.0, rtol=1e-4, atol=1e-3)


def test_narrow_product_keeps_its_operand_fused(backend):
    # two output rows: staging the 64x600 window would copy half the product's work
    x, w = _f32(2, 70), _f32(70, 600)

    def f(x, w):
        return x[:, 3:67] @ w[3:67]

    exe = _compile(f, (x, w), backend)
    assert "contract" not in _kinds(exe)
    (got,) = exe(x, w)
    np.testing.assert_allclose(got, x[:, 3:67] @ w[3:67], rtol=1e-4, atol=1e-3)
