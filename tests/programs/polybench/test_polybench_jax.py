"""PolyBench-style kernels in JAX style (``accy.fori_loop``, ``.at[].set``, masks) under
``accy.jit`` equal plain numpy on every backend, at small sizes (lavapipe is slow)."""

from __future__ import annotations

import accy
import numpy as np
import pytest

from tests.programs.polybench import jax_style, reference
from tests.programs.polybench.inputs import NAMES, inputs

#: float32 kernels whose summation order differs from the numpy loops
_TOL = {"rtol": 2e-4, "atol": 2e-5}


@pytest.mark.parametrize("name", NAMES)
def test_jax_style_kernel_equals_numpy(name: str, backend: str) -> None:
    args = inputs(name, "test")
    want = getattr(reference, name)(*args)
    got = accy.jit(getattr(jax_style, name), backend=backend)(*inputs(name, "test"))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, **_TOL)


@pytest.mark.parametrize("name", ["jacobi_2d", "seidel_2d", "deriche"])
def test_jax_style_kernel_is_one_loop_per_python_loop(name: str) -> None:
    """The time loop is one loop node however many steps it runs (no unrolling)."""
    exe = accy.jit(getattr(jax_style, name)).compile(*inputs(name, "test"))
    assert len(exe.graph.loops) >= 1
    assert exe.module.op_count() < 400
