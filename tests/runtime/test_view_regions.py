"""A ``map`` region that only reshapes its input is a view (kind ``view``): no kernel, no
copy, the input's buffer read in place; lifetimes count the input and its views as one."""

from __future__ import annotations

import accy
import numpy as np
import pytest

rng = np.random.default_rng(5)


def _regions(exe) -> list[str]:
    return [line for line in exe.stage_text("memory").splitlines() if "dispatch.region" in line]


def test_fancy_index_of_a_matrix_reads_it_in_place() -> None:
    """``L[rows, y]`` gathers from ``L`` flattened: before, a kernel copied all of ``L``."""
    L = rng.standard_normal((300, 7)).astype(np.float32)
    y = rng.integers(0, 7, 300)
    fn = accy.jit(lambda L, y: L[np.arange(L.shape[0]), y])
    exe = fn.compile(L, y)
    assert any('kind = "view"' in line for line in _regions(exe))
    assert exe.kernel_count == 2  # the index arithmetic and the gather, no copy of L
    np.testing.assert_array_equal(fn(L, y), L[np.arange(300), y])


def _temp_views(x, i):
    t = x * 2.0
    a = t.reshape(-1)[i]  # a view of the temporary t feeds the gather
    b = t + 1.0  # t's last reader: may overwrite t in place only after the gather
    c = (t * 3.0).reshape(-1)[i[::-1]]
    return a, b, c, t.sum()


def test_views_of_temporaries_keep_their_buffer_alive(backend: str) -> None:
    x = rng.standard_normal((6, 5))
    i = rng.integers(0, 30, 11)
    if backend == "vulkan":
        x = x.astype(np.float32)
    got = accy.jit(_temp_views, backend=backend)(x, i)
    for g, w in zip(got, _temp_views(x, i), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_returned_reshape_is_a_fresh_array() -> None:
    x = rng.standard_normal((4, 3))
    out = accy.jit(lambda x: (x.reshape(-1), x.reshape(-1)[np.array([2, 0])]))(x)
    assert not np.shares_memory(out[0], x)
    np.testing.assert_array_equal(out[0], x.reshape(-1))
    out[0][0] = 99.0  # the caller owns it
    assert x[0, 0] != 99.0


@pytest.mark.parametrize("steps", [1, 3])
def test_views_inside_a_loop_body(steps: int) -> None:
    """A gather through a reshape of the carried matrix in each step of a device loop."""
    def f(m, idx):
        def body(k, m):
            picked = np.take(m.reshape(-1), idx, mode="clip")
            return m + picked.sum()
        return accy.fori_loop(0, steps, body, m)

    m, idx = rng.standard_normal((5, 4)), np.array([1, 7, 19])
    want = m.copy()
    for _ in range(steps):
        want = want + want.reshape(-1)[idx].sum()
    np.testing.assert_allclose(accy.jit(f)(m, idx), want, rtol=1e-12)
