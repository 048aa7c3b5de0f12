"""Kernels inside loop bodies (issue 11): carried window updates written in place, no
induction-variable launch for bodies that never read it, each result equal to numpy."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
from accy import lax
from accy.kernel.printer import kernel_to_text


def _body(exe):
    """The loop body function of a compiled one-loop program (after the last stage)."""
    (loop,) = [op for op in exe.module.functions[0].body.ops if op.name == "loop.for"]
    return exe.module.function(loop.attrs["body"])


def _body_kernels(exe) -> list[str]:
    (node,) = exe.graph.loops
    return [kernel_to_text(exe.graph.kernels[ln.kernel]) for ln in node.body.launches]


def _jacobi(a, b):
    def step(t, c):
        a, b = c
        b = b.at[1:-1, 1:-1].set(0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]))
        a = a.at[1:-1, 1:-1].set(0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:]))
        return a, b
    return lax.fori_loop(0, 3, step, (a, b))


def _jacobi_np(a, b):
    a, b = a.copy(), b.copy()
    for _ in range(3):
        b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        a[1:-1, 1:-1] = 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])
    return a, b


def test_stencil_updates_carried_buffers_in_place_and_visits_only_the_window():
    rng = np.random.default_rng(0)
    a, b = (rng.random((9, 11), dtype=np.float32) for _ in range(2))
    keep = a.copy(), b.copy()
    f = accy.jit(_jacobi)
    exe = f.compile(a, b)
    body = _body(exe)
    assert body.attrs["in_place_results"] == (0, 1) and body.attrs["in_place_params"] == (1, 2)
    assert list(body.attrs["result_slots"]) == list(body.attrs["param_slots"][1:])
    assert not body.attrs.get("iv_carried")  # t is never read: no iv + 1 launch
    (node,) = exe.graph.loops
    assert node.launch_count() == 2 and node.carry == ()
    for text in _body_kernels(exe):
        assert "out0: f32* readwrite" in text
        assert "for j in range" in text  # one row per work-item on the CPU
        assert "rem(" not in text  # no div/mod per element: the window row is contiguous
    got = f(a, b)
    for g, w in zip(got, _jacobi_np(a, b), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_array_equal(a, keep[0])  # the caller's arrays are copied, not written
    np.testing.assert_array_equal(b, keep[1])


def test_update_reading_neighbours_of_its_own_base_is_not_in_place():
    """``x[1:-1] = x[:-2] + x[2:]`` reads elements other work-items write: double-buffered."""
    def f(x):
        return lax.fori_loop(0, 4, lambda t, x: x.at[1:-1].set(0.5 * (x[:-2] + x[2:])), x)
    x = np.arange(12, dtype=np.float32)
    exe = accy.jit(f).compile(x)
    assert "in_place_results" not in _body(exe).attrs
    want = x.copy()
    for _ in range(4):
        want[1:-1] = 0.5 * (want[:-2] + want[2:])
    np.testing.assert_allclose(accy.jit(f)(x), want)


def test_old_value_read_after_the_update_keeps_it_out_of_place():
    def f(x, y):
        def step(t, c):
            x, y = c
            x2 = x.at[2:5].set(y[2:5] * 2.0)
            return x2, y + x  # reads the old x after the update
        return lax.fori_loop(0, 3, step, (x, y))
    x, y = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    exe = accy.jit(f).compile(x, y)
    assert "in_place_results" not in _body(exe).attrs
    wx, wy = x.copy(), y.copy()
    for _ in range(3):
        nx = wx.copy()
        nx[2:5] = wy[2:5] * 2.0
        wx, wy = nx, wy + wx
    for g, w in zip(accy.jit(f)(x, y), (wx, wy), strict=True):
        np.testing.assert_allclose(g, w)


def test_chained_row_updates_with_the_induction_variable():
    """fdtd-2d's ``ey[0, :] = fict[t]; ey[1:, :] -= ...``: two updates, one buffer."""
    def f(ey, hz, fict):
        def step(t, c):
            ey, hz = c
            ey = ey.at[0, :].set(fict[t])
            ey = ey.at[1:, :].set(ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :]))
            hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ey[1:, :-1] - ey[:-1, :-1]))
            return ey, hz
        return lax.fori_loop(0, fict.shape[0], step, (ey, hz))
    rng = np.random.default_rng(1)
    ey, hz = (rng.random((6, 7), dtype=np.float32) for _ in range(2))
    fict = np.arange(4, dtype=np.float32)
    exe = accy.jit(f).compile(ey, hz, fict)
    body = _body(exe)
    assert body.attrs["in_place_results"] == (0, 1) and body.attrs.get("iv_carried")
    wey, whz = ey.copy(), hz.copy()
    for t in range(4):
        wey[0, :] = fict[t]
        wey[1:, :] = wey[1:, :] - 0.5 * (whz[1:, :] - whz[:-1, :])
        whz[:-1, :-1] = whz[:-1, :-1] - 0.7 * (wey[1:, :-1] - wey[:-1, :-1])
    for g, w in zip(accy.jit(f)(ey, hz, fict), (wey, whz), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_host_map_over_rows_has_a_contiguous_inner_loop():
    """floyd-warshall's step: a full 2-D map; on the CPU one row per work-item, the traced
    k read through a clamped dynamic index, and no div/mod of the flat id per element."""
    def f(p):
        return lax.fori_loop(0, p.shape[0],
                             lambda k, p: anp.minimum(p, p[:, k][:, None] + p[k, :][None, :]), p)
    p = np.random.default_rng(2).integers(1, 50, (9, 9)).astype(np.int32)
    exe = accy.jit(f).compile(p)
    texts = _body_kernels(exe)
    (step,) = [t for t in texts if "in0" in t and "for j in range" in t]
    assert "rem(" not in step
    want = p.copy()
    for k in range(9):
        want = np.minimum(want, want[:, k][:, None] + want[k, :][None, :])
    np.testing.assert_array_equal(accy.jit(f)(p), want)


def test_scan_stacks_its_outputs_in_place():
    """``lax.scan``'s stacked ``ys`` (``ys.at[i].set(y)`` with the traced ``i``): each step
    writes its row into the carried buffer, no copy of the whole ``ys`` per step."""
    def f(x):
        def step(c, xj):
            y = 0.5 * xj + 0.25 * c
            return y, y
        return lax.scan(step, anp.zeros_like(x[0]), x, reverse=True)
    x = np.random.default_rng(3).random((7, 5), dtype=np.float32)
    exe = accy.jit(f).compile(x)
    assert 1 in _body(exe).attrs["in_place_results"]
    (row,) = [t for t in _body_kernels(exe) if "out0: f32* readwrite" in t]
    assert "min(max(" in row  # the clamped run-time start of the box
    assert "for j in range(0:i32, 5:i32" in row  # one row of 5, not the 7 x 5 array
    want_ys, c = np.zeros_like(x), np.zeros(5, np.float32)
    for j in range(6, -1, -1):
        c = 0.5 * x[j] + 0.25 * c
        want_ys[j] = c
    got_c, got_ys = accy.jit(f)(x)
    np.testing.assert_allclose(got_ys, want_ys, rtol=1e-6)
    np.testing.assert_allclose(got_c, c, rtol=1e-6)


def test_dynamic_updates_in_place_clamp_as_the_op_does():
    """An offset past the end moves the box back inside (XLA's clamp), in place as out of
    place; an update that reads its own row (``x.at[i].set(2 * x[i])``) is correct too."""
    def shifted(x):
        return lax.fori_loop(0, 4, lambda i, x: x.at[i + 3].set(
            anp.ones(3, anp.float32) * (i + 1.0)), x)

    def doubled(x):
        return lax.fori_loop(0, 3, lambda i, x: x.at[i].set(2.0 * x[i]), x)
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    assert _body(accy.jit(shifted).compile(x)).attrs["in_place_results"] == (0,)
    want = x.copy()
    for i in range(4):
        want[min(i + 3, 4)] = i + 1.0
    np.testing.assert_array_equal(accy.jit(shifted)(x), want)
    want = x.copy()
    want[:3] *= 2
    assert _body(accy.jit(doubled).compile(x)).attrs["in_place_results"] == (0,)
    np.testing.assert_array_equal(accy.jit(doubled)(x), want)


def test_a_dynamic_update_reading_another_row_of_its_base_is_not_in_place():
    """``x.at[i].set(x[i] + x[i + 1])`` reads a row another step writes: double-buffered,
    and equal to numpy's sequential loop."""
    def f(x):
        return lax.fori_loop(0, 4, lambda i, x: x.at[i].set(x[i] + x[i + 1]), x)
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    assert "in_place_results" not in _body(accy.jit(f).compile(x)).attrs
    want = x.copy()
    for i in range(4):
        want[i] = want[i] + want[i + 1]
    np.testing.assert_array_equal(accy.jit(f)(x), want)
