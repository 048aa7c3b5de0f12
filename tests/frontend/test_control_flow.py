"""accy.fori_loop / while_loop / scan / cond and accy.lax: equal to the Python loops they
replace, on every backend; traced-index slicing; the launch graph runs a loop without a
host round trip per step; clear errors for what a loop cannot express."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy import lax
from accy.errors import UnsupportedError, VerifyError

RNG = np.random.default_rng(7)
X = RNG.random((6, 4), dtype=np.float32)


def _close(got, want) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_fori_loop_pytree_carry_and_closure(backend: str) -> None:
    def f(x, w):
        def body(i, c):
            return {"acc": c["acc"] * 0.5 + w, "n": c["n"] + i}
        return lax.fori_loop(2, 7, body, {"acc": x, "n": anp.zeros((), anp.int32)})

    out = accy.jit(f, backend=backend)(X, X[0])
    acc, n = X.copy(), 0
    for i in range(2, 7):
        acc, n = acc * 0.5 + X[0], n + i
    _close(out["acc"], acc)
    assert int(out["n"]) == n


def test_traced_index_reads_and_updates(backend: str) -> None:
    def f(x):
        def body(i, c):
            y, z = c
            row = x[i] + x[i, :] + x[i - 1]          # i - 1 = -1 wraps like numpy
            y = y.at[i].set(row)
            z = z.at[i, 1:3].add(x[i:i + 2].sum(axis=0)[1:3])  # clamped window at the end
            return y, z
        return lax.fori_loop(0, x.shape[0], body, (anp.zeros_like(x), anp.zeros_like(x)))

    y, z = accy.jit(f, backend=backend)(X)
    wy, wz = np.zeros_like(X), np.zeros_like(X)
    for i in range(6):
        wy[i] = 2 * X[i] + X[i - 1]
        s = min(i, 6 - 2)  # XLA clamping: the window stays inside the array
        wz[i, 1:3] += X[s:s + 2].sum(axis=0)[1:3]
    _close(y, wy)
    _close(z, wz)


def test_while_loop_reads_its_condition_on_the_device(backend: str) -> None:
    def f(x):
        return lax.while_loop(lambda c: c[0].sum() < 100.0,
                              lambda c: (c[0] * 2.0, c[1] + 1), (x, 0))

    x, n = accy.jit(f, backend=backend)(X)
    wx, wn = X.copy(), 0
    while wx.sum() < 100.0:
        wx, wn = wx * 2.0, wn + 1
    _close(x, wx)
    assert int(n) == wn


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_equals_a_python_loop(backend: str, reverse: bool) -> None:
    def step(c, xj):
        return c + xj, c * xj
    f = accy.jit(lambda x: lax.scan(step, anp.zeros(4, anp.float32), x, reverse=reverse),
                 backend=backend)
    c, ys = f(X)
    wc, wys = lax.scan(step, np.zeros(4, np.float32), X, reverse=reverse)  # eager numpy
    want = np.zeros(4, np.float32)
    order = range(5, -1, -1) if reverse else range(6)
    rows = {}
    for j in order:
        rows[j] = want * X[j]
        want = want + X[j]
    _close(wc, want)
    _close(wys, np.stack([rows[j] for j in range(6)]))
    _close(c, wc)
    _close(ys, wys)


def test_cond_and_lax_names(backend: str) -> None:
    def f(x, k):
        a = lax.cond(x.sum() > 1.0, lambda v: v * 2.0, lambda v: v - 1.0, x)
        b = lax.cond(True, lambda v: v + 1.0, lambda v: v, x)
        w = lax.dynamic_slice(x, (k, 1), (2, 3))
        u = lax.dynamic_update_slice(x, -w, (k + 10, 0))  # clamped to the last rows
        return a, b, lax.select(x > 0.5, x, -x), w, u

    k = np.int32(2)
    got = accy.jit(f, backend=backend)(X, k)
    want = (X * 2.0, X + 1.0, np.where(X > 0.5, X, -X), X[2:4, 1:4],
            lax.dynamic_update_slice(X, -X[2:4, 1:4], (12, 0)))
    assert np.array_equal(want[4][4:6, :3], -X[2:4, 1:4])
    for g, w in zip(got, want, strict=True):
        _close(g, w)


def test_nested_loops_and_reference_backend() -> None:
    def f(x):
        def outer(i, a):
            return lax.fori_loop(0, 3, lambda j, b: b.at[i].add(j * 1.0 + x[i]), a)
        return lax.fori_loop(0, 4, outer, anp.zeros_like(x))
    want = np.zeros_like(X)
    for i in range(4):
        for j in range(3):
            want[i] += j + X[i]
    _close(accy.jit(f, backend="reference")(X), want)
    _close(accy.jit(f)(X), want)


def test_eager_versions_run_numpy() -> None:
    assert lax.fori_loop(0, 4, lambda i, v: v + i, 0) == 6
    assert lax.while_loop(lambda v: v < 10, lambda v: v * 3, 1) == 27
    np.testing.assert_array_equal(lax.dynamic_slice(X, (5, 0), (2, 4)), X[4:6])


def test_loop_errors_name_the_line_and_a_fix() -> None:
    with pytest.raises(UnsupportedError, match="depends on a traced value.*mask"):
        accy.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c + x[i, :i].sum(), 0.0))(X)
    with pytest.raises(UnsupportedError, match="while_loop"):
        accy.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c, x))(X, np.int32(3))
    with pytest.raises(VerifyError, match="carried value #0 comes back as f64"):
        accy.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c.astype(anp.float64), x))(X)
    with pytest.raises(VerifyError, match="structure"):
        accy.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: (c, c), x))(X)
    with pytest.raises(VerifyError, match="scalar bool"):
        accy.jit(lambda x: lax.while_loop(lambda c: c > 0, lambda c: c, x))(X)


def test_a_python_number_carry_takes_the_dtype_the_body_gives_it() -> None:
    """A 0.0 carry is weak, as JAX's: the body adding f64 makes it f64 (it was refused as
    'fori_loop: carried value #0 comes back as f64[], it started as f32[]', also from scan
    and while_loop); an array carry keeps its dtype strictly."""
    xs = np.arange(5.0)
    carry, ys = accy.jit(lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x))(xs)
    assert carry.dtype == np.float64 and carry == 10.0
    np.testing.assert_array_equal(ys, [0.0, 0.0, 2.0, 9.0, 24.0])
    got = accy.jit(lambda x: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] + x.sum(), c[1] + 1),
                                            (0, 0)))(xs)
    assert got[0].dtype == np.float64 and got[0] == 30.0 and got[1] == 3


def _jacobi(a, steps):
    def body(t, a):
        return a.at[1:-1, 1:-1].set(0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
                                           + a[2:, 1:-1] + a[:-2, 1:-1]))
    return lax.fori_loop(0, steps, body, a)


def test_thousand_step_stencil_is_one_loop_node() -> None:
    a = RNG.random((256, 256), dtype=np.float32)
    exe = accy.jit(_jacobi, static_argnums=1).compile(a, 1000)
    assert len(exe.graph.loops) == 1 and exe.graph.loops[0].trips == 1000
    assert exe.module.op_count() < 60  # the body is traced once, not 1000 times


def test_loop_steps_make_no_host_round_trip_on_the_recording_backend(monkeypatch) -> None:
    from accy.plugins import open_backend

    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "1")  # recording artifacts don't serialise
    rec = open_backend("recording")
    a = RNG.random((6, 6), dtype=np.float32)
    f = accy.jit(_jacobi, backend="recording", static_argnums=1)
    f(a, 2)
    before = dict(rec.calls)
    got = f(a, 40)
    per_step = f.compile(a, 40).graph.loops[0].launch_count()
    for call in ("synchronize", "read"):
        assert rec.calls[call] - before.get(call, 0) <= 1, call  # once per call, not per step
    assert rec.calls["launch"] - before["launch"] >= 40 * per_step
    want = a.copy()
    for _ in range(40):
        want[1:-1, 1:-1] = 0.2 * (want[1:-1, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:]
                                  + want[2:, 1:-1] + want[:-2, 1:-1])
    _close(got, want)


def test_unrolled_chain_compiles_without_recursion_error() -> None:
    def f(x):
        for _ in range(300):
            x = anp.tanh(x) + 1.0
        return x
    x = np.linspace(0, 1, 16).astype(np.float32)
    want = x.copy()
    for _ in range(300):
        want = np.tanh(want) + 1.0
    _close(accy.jit(f)(x), want)
