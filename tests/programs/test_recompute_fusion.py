"""A few cheap elementwise ops over arrays already in memory (``re*re`` read by an escape
test and by an update) are recomputed by each consumer instead of getting a kernel and a
buffer of their own (``accy.passes.fusion_rules.recomputable``); a value read through index
maps (a shifted window) stays in memory."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np

RNG = np.random.default_rng(3)


def _kinds(fn, *args):
    exe = accy.compile(accy.jit(fn).lower(*args), backend="cpu", use_cache=False)
    return exe, [op.attrs.get("kind") for op in exe.module.walk()
                 if op.name == "dispatch.region"]


def test_cheap_shared_value_is_recomputed():
    x, y = RNG.standard_normal(300), RNG.standard_normal(300)

    def f(x, y):
        s = x * x + y * y  # 3 ops over two inputs, read by three consumers
        inside = s <= 1.0
        return anp.where(inside, x * 2.0, x), anp.where(inside, y, -y), s

    exe, kinds = _kinds(f, x, y)
    assert kinds == ["map"] * 3  # one region per result, none for s or inside
    s = x * x + y * y
    want = (np.where(s <= 1.0, x * 2.0, x), np.where(s <= 1.0, y, -y), s)
    for got, w in zip(exe(x, y), want, strict=True):
        np.testing.assert_array_equal(got, w)


def test_costly_or_windowed_values_stay_in_memory():
    x = RNG.standard_normal(300)

    def f(x):
        e = anp.exp(x)  # transcendental: computed once
        w = x * 3.0  # read through shifted windows: computed once
        return e + 1.0, e - 1.0, w[1:] + w[:-1], w[2:] - w[:-2]

    exe, kinds = _kinds(f, x)
    assert kinds.count("map") == 6
    e, w = np.exp(x), x * 3.0
    want = (e + 1.0, e - 1.0, w[1:] + w[:-1], w[2:] - w[:-2])
    for got, ref in zip(exe(x), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-15)
