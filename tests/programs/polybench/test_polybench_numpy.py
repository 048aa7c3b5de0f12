"""PolyBench-style kernels as numpy users write them (time loops unrolled at trace time,
in-place slice updates) under ``accy.jit`` equal plain numpy at small sizes, on every
backend; the same functions run eagerly on numpy arrays as a check of the kernels."""

from __future__ import annotations

import accy
import numpy as np
import pytest

from tests.programs.polybench import numpy_style, reference
from tests.programs.polybench.inputs import NAMES, inputs

#: float32 kernels whose summation order differs from the numpy loops
_TOL = {"rtol": 2e-4, "atol": 2e-5}


def _same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, **_TOL)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_style_is_the_kernel(name: str) -> None:
    """The as-written version, run by numpy itself, equals the loop-for-loop reference."""
    _same(getattr(numpy_style, name)(*inputs(name, "test")),
          getattr(reference, name)(*inputs(name, "test")))


@pytest.mark.parametrize("name", NAMES)
def test_numpy_style_kernel_equals_numpy(name: str, backend: str) -> None:
    args = inputs(name, "test")
    want = getattr(reference, name)(*inputs(name, "test"))
    _same(accy.jit(getattr(numpy_style, name), backend=backend)(*args), want)
    for a, fresh in zip(args, inputs(name, "test"), strict=True):  # inputs were copied
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, fresh)
