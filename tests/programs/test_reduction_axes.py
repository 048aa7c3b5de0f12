"""Reductions over every axis subset of rank 1-4 shapes with odd sizes, on every backend.

Regression: on Vulkan, LLVM's codegen-level loop strength reduction turned the index
arithmetic ``(r / 9) % 4`` of a serial reduction loop into ``zext(trunc r/9 to i2)``, and
the SPIR-V backend lowers the ``i2`` as an ``i8`` without the mask, so ``sum(ones((3, 4,
9)))`` read past the input and gave 72 (see ``VulkanTarget.request``).
"""

from __future__ import annotations

import itertools

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.errors import CapabilityError

SHAPES = [(7,), (1,), (33, 65), (3, 4, 9), (5, 1, 3), (2, 3, 5, 7), (1, 7, 1, 3),
          (4, 9, 3, 5), (3, 4, 999)]
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def _subsets(rank: int) -> list[tuple[int, ...] | None]:
    subsets: list[tuple[int, ...] | None] = [None]
    for k in range(1, rank + 1):
        subsets += list(itertools.combinations(range(rank), k))
    return subsets


def _data(shape, dtype):
    rng = np.random.default_rng(len(shape) * 31 + int(np.prod(shape)))
    x = rng.integers(-9, 10, shape)  # small integers: float sums are exact
    if dtype == "i64":
        x = x * (2**33 + 1)  # needs the high word
    return x.astype(NP[dtype])


#: every shape in f32 and i64 (the dtypes that were wrong), three in i32 and f64
CASES = [(s, d) for d in ("f32", "i64") for s in SHAPES]
CASES += [(s, d) for d in ("i32", "f64") for s in ((3, 4, 9), (2, 3, 5, 7), (3, 4, 999))]


@pytest.mark.parametrize(("shape", "dtype"), CASES,
                         ids=["x".join(map(str, s)) + f"-{d}" for s, d in CASES])
def test_sum_max_over_every_axis_subset(backend, shape, dtype):
    subsets = _subsets(len(shape))

    def program(x):
        out = [anp.sum(x, axis=a) for a in subsets]
        out += [anp.max(x, axis=a) for a in subsets[:3]]
        out += [anp.min(x, axis=a, keepdims=True) for a in subsets[-2:]]
        return tuple(out)

    x = _data(shape, dtype)
    try:
        got = accy.jit(program, backend=backend)(x)
    except CapabilityError as e:
        pytest.skip(f"{backend} has no {dtype}: {e}")
    want = [np.sum(x, axis=a) for a in subsets]
    want += [np.max(x, axis=a) for a in subsets[:3]]
    want += [np.min(x, axis=a, keepdims=True) for a in subsets[-2:]]
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_array_equal(np.asarray(g), w.astype(g.dtype),
                                      err_msg=f"result {k} of shape {shape}")
